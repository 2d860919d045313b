"""Findings that judged a service's or kernel's environment (fact run.env, `--unit` / `--kernel`), in one place.

Facts.env is then that environment and records the variables a check reads from it. A finding of such a check that
names one of them (or any finding of an environment check) says which environment it judged, and its environment
steps become the change that reaches that environment: for a systemd unit a line in rocm-doctor's drop-in, then
reloading systemd and restarting the unit (printed: fix restarts nothing); for a Jupyter kernel an entry in
kernel.json's env, then restarting the kernel. A step into ~/.bashrc would never reach a service. So every existing
environment check works on a service or kernel without changes of its own.
"""

from __future__ import annotations

import re
from typing import Optional

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.steps import DROPIN, PathPrepend, PathRemove, SetEnv, Step, UnsetEnv
from rocm_doctor.engine.model import Check, Finding, Status
from rocm_doctor.facts.facts import RUN_ENV, Facts
from rocm_doctor.facts.tracked_env import LISTED, ReadTracking
from rocm_doctor.knowledge.gpu_env_vars import matters

_ENV_STEPS = (SetEnv, UnsetEnv, PathPrepend, PathRemove)
_NAME = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")


def start_reads(facts: Facts) -> Optional[set]:
    """The set the judged environment records reads into, emptied; None when the shell's environment is judged."""
    env = facts.env
    if not isinstance(env, ReadTracking):
        return None
    env.reads.clear()
    return env.reads


def relabel(check_cls: type[Check], findings: list[Finding], facts: Facts, reads: Optional[set]) -> list[Finding]:
    """Say which environment a finding judged and send its environment steps there (see the module's doc)."""
    run = facts.get(RUN_ENV)
    if not reads or not isinstance(run, dict):
        return findings
    read = set(reads)
    for finding in findings:
        if finding.status is Status.SKIP:
            continue
        names = set(_NAME.findall(" ".join([finding.message, *finding.evidence])))
        named = {n for n in names if _read(n, read, run) and (n in read or matters(n))}
        stepped = {s.name for s in _all_steps(finding) if isinstance(s, _ENV_STEPS) and _read(s.name, read, run)}
        if not (named or stepped or check_cls.area == "environment"):
            continue
        finding.message = f"In {run['label']}: {finding.message}"
        finding.evidence.insert(0, f"judged: {run['label']} ({run.get('basis', '')})")
        finding.fix = translate(run, finding.fix, facts, read)
        for alternative in finding.alternatives:
            alternative.steps = translate(run, alternative.steps, facts, read)
    return findings


def _read(name: str, read: set, run: dict) -> bool:
    """Whether the check read `name` from the judged environment: looked it up, or listed every name while it
    is absent."""
    return name in read or (LISTED in read and name not in (run.get("env") or {}))


def _all_steps(finding: Finding) -> list:
    return [*finding.fix, *(s for a in finding.alternatives for s in a.steps)]


def translate(run: dict, steps: list, facts: Facts, read: set) -> list:
    """`steps` with the environment steps on variables the check read replaced by the change in the service or
    kernel; other steps keep their place."""
    changes: dict[str, Optional[str]] = {}
    kept, at = [], None
    judged = run.get("env") or {}
    sep = ";" if facts.os == "windows" else ":"
    for step in steps:
        if not isinstance(step, _ENV_STEPS) or not _read(step.name, read, run):
            kept.append(step)
            continue
        if run["kind"] == "jupyter" and isinstance(step, UnsetEnv) and step.name not in (run.get("spec_env") or {}):
            kept.append(step)  # the kernel inherits it from the server, which inherits it from the login environment
            continue
        at = len(kept) if at is None else at
        current = changes.get(step.name, judged.get(step.name))
        changes[step.name] = _after(step, current, sep, run)
    if at is None:
        return steps
    return kept[:at] + steps_for(run, changes, facts.shell_env) + kept[at:]


def _after(step: Step, current: Optional[str], sep: str, run: dict) -> Optional[str]:
    if isinstance(step, SetEnv):
        return step.value
    if isinstance(step, UnsetEnv):
        return None
    entries = [e for e in (current or "").split(sep) if e and e != step.entry]
    if isinstance(step, PathPrepend):
        rest = sep.join(entries) if run["kind"] == "systemd" or current is None else f"${{{step.name}}}"
        return step.entry + (sep + rest if rest else "")
    return sep.join(entries) or None


def steps_for(run: dict, changes: dict[str, Optional[str]], shell_env: dict) -> list:
    """The steps that make `changes` (variable -> new value, None: remove it) in the service or kernel, then what
    makes it start with them; `shell_env` (HOME, XDG_CONFIG_HOME) places a user unit's drop-in."""
    if run["kind"] == "systemd":
        return _dropin(run, changes, shell_env)
    return _kernel(run, changes)


def dropin_path(run: dict, shell_env: dict) -> str:
    """rocm-doctor's drop-in of the unit: /etc/systemd/system/NAME.d/ for a system unit, the user's systemd/user
    folder ($XDG_CONFIG_HOME, else ~/.config) for a user unit."""
    folder = "/etc/systemd/system"
    if run.get("scope") == "user":
        home, config = shell_env.get("HOME") or "", shell_env.get("XDG_CONFIG_HOME") or ""
        if not config.startswith("/"):  # the XDG rule: a relative value is ignored
            config = f"{home.rstrip('/')}/.config" if home.startswith("/") else "~/.config"
        folder = f"{config.rstrip('/')}/systemd/user"
    return f"{folder}/{run['name']}.d/{DROPIN}"


def _dropin(run: dict, changes: dict[str, Optional[str]], shell_env: dict) -> list:
    unit, user = run["name"], run.get("scope") == "user"
    path, base = dropin_path(run, shell_env), ["systemctl", "--user"] if user else ["sudo", "systemctl"]
    out = []
    for name, value in changes.items():
        elsewhere = _set_elsewhere(run, name, value)
        out.append(S.advice(elsewhere, note=f"a drop-in's Environment= cannot change it for {unit}") if elsewhere else
                   S.unit_env(unit, path, name, value, user=user,
                              note=f"{unit} reads only its own settings, never ~/.bashrc or ~/.profile"))
    return out + [
        S.run_command(base + ["daemon-reload"], needs_admin=not user,
                      description="reload systemd's unit files, so that it reads the changed drop-in",
                      note="fix changes the file; systemd reads it only when told to"),
        S.run_command(base + ["restart", unit], needs_admin=not user,
                      description=f"restart {unit} so that it starts with the new environment",
                      note="a running service keeps the environment it started with"),
    ]


def _set_elsewhere(run: dict, name: str, value: Optional[str]) -> str:
    """Where a value set in a drop-in would not win, what to do instead: systemd reads EnvironmentFile= after
    Environment= and applies UnsetEnvironment= last."""
    source = (run.get("sources") or {}).get(name) or ""
    if value is None:
        return ""
    if source.startswith("EnvironmentFile "):
        return (f"Change {name} to {value} in {source.removeprefix('EnvironmentFile ')}: {run['name']} reads that file "
                "after its Environment= settings.")
    if name in (run.get("unset") or []):
        return (f"Take {name} out of the UnsetEnvironment= setting of {run['name']} and set it to {value}: systemd "
                "removes the variables named there after every Environment= setting.")
    return ""


def _kernel(run: dict, changes: dict[str, Optional[str]]) -> list:
    note = "kernel.json's env is what the kernel adds to the Jupyter server's environment"
    out = [S.kernel_env(run["name"], run["kernel_json"], name, value, note=note) for name, value in changes.items()]
    return out + [S.advice(f"Restart the kernel '{run['name']}' (Kernel > Restart in Jupyter) so that it starts with "
                           "the new environment.", note="a running kernel keeps the environment it started with")]
