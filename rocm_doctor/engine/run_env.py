"""Findings that judged a service's or kernel's environment (fact run.env, `--unit` / `--kernel`), in one place.

Facts.env is then that environment and records the variables a check reads from it. A finding of such a check that
names one of them (or any finding of an environment check) says which environment it judged, and its environment
steps become the change that reaches that environment: for a systemd unit a drop-in (`systemctl edit`, which reloads
systemd when saved) and a restart; for a Jupyter kernel an entry in kernel.json's env. A step into ~/.bashrc would
never reach a service. So every existing environment check works on a service or kernel without changes of its own.
"""

from __future__ import annotations

import re
from typing import Optional

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Finding, Status
from rocm_doctor.facts.facts import RUN_ENV, Facts
from rocm_doctor.facts.tracked_env import LISTED, ReadTracking
from rocm_doctor.knowledge.gpu_env_vars import matters

_ENV_STEPS = (S.SetEnv, S.UnsetEnv, S.PathPrepend, S.PathRemove)
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
        if run["kind"] == "jupyter" and isinstance(step, S.UnsetEnv) and step.name not in (run.get("spec_env") or {}):
            kept.append(step)  # the kernel inherits it from the server, which inherits it from the login environment
            continue
        at = len(kept) if at is None else at
        current = changes.get(step.name, judged.get(step.name))
        changes[step.name] = _after(step, current, sep, run)
    if at is None:
        return steps
    return kept[:at] + steps_for(run, changes) + kept[at:]


def _after(step: S.Step, current: Optional[str], sep: str, run: dict) -> Optional[str]:
    if isinstance(step, S.SetEnv):
        return step.value
    if isinstance(step, S.UnsetEnv):
        return None
    entries = [e for e in (current or "").split(sep) if e and e != step.entry]
    if isinstance(step, S.PathPrepend):
        rest = sep.join(entries) if run["kind"] == "systemd" or current is None else f"${{{step.name}}}"
        return step.entry + (sep + rest if rest else "")
    return sep.join(entries) or None


def steps_for(run: dict, changes: dict[str, Optional[str]]) -> list:
    """The steps that make `changes` (variable -> new value, None: remove it) in the service or kernel."""
    if run["kind"] == "systemd":
        return _dropin(run, changes)
    return _kernel(run, changes)


def dropin_path(run: dict) -> str:
    folder = "~/.config/systemd/user" if run.get("scope") == "user" else "/etc/systemd/system"
    return f"{folder}/{run['name']}.d/override.conf"


def _line(name: str, value: Optional[str]) -> str:
    if value is None:
        return f"UnsetEnvironment={name}"
    text = f"{name}={value}".replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'Environment="{text}"'


def _dropin(run: dict, changes: dict[str, Optional[str]]) -> list:
    unit, user = run["name"], run.get("scope") == "user"
    base = ["systemctl", "--user"] if user else ["sudo", "systemctl"]
    lines = "; ".join(_line(name, value) for name, value in changes.items())
    return [
        S.run_command(base + ["edit", unit], needs_admin=not user,
                      description=f"add under [Service] in the editor that opens ({dropin_path(run)}): {lines} "
                                  "(systemd reloads its configuration when you save)",
                      note=f"{unit} reads only its own settings, never ~/.bashrc or ~/.profile"),
        S.run_command(base + ["restart", unit], needs_admin=not user,
                      description=f"restart {unit} so that it starts with the new environment",
                      note="a running service keeps the environment it started with"),
    ]


def _kernel(run: dict, changes: dict[str, Optional[str]]) -> list:
    env = {k: v for k, v in {**(run.get("spec_env") or {}), **changes}.items() if v is not None}
    python, location = (run.get("command") or {}).get("path"), run.get("location") or {}
    where = ["--user"] if location.get("kind") == "user" else (
        ["--prefix", location["prefix"]] if location.get("kind") == "prefix" else None)
    said = ", ".join(f"{k}={v}" if v is not None else f"no {k}" for k, v in changes.items())
    restart = "then restart the kernel (Kernel > Restart) so that it starts with it"
    if run.get("ipykernel") and where and python:
        argv = [python, "-m", "ipykernel", "install", *where, "--name", run["name"]]
        argv += ["--display-name", run.get("display_name") or run["name"]]
        for name, value in env.items():
            argv += ["--env", name, value]
        return [S.run_command(argv, needs_admin=bool(location.get("admin")),
                              description=f"write the kernel '{run['name']}' again with {said} in its env (the same "
                                          f"interpreter and launcher); {restart}",
                              note="kernel.json's env is what the kernel adds to the Jupyter server's environment")]
    edits = "; ".join(f'set "{k}": "{v}"' if v is not None else f'remove "{k}"' for k, v in changes.items())
    return [S.advice(f"In {run.get('kernel_json')}, in its \"env\" object, {edits}; {restart}.",
                     note="kernel.json's env is what the kernel adds to the Jupyter server's environment")]
