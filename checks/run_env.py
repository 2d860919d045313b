"""The service or kernel that runs the model (`--unit`, `--user-unit`, `--kernel`) against the shell the doctor runs
in: the variables that change how the model runs, set in one and not the other. A service reads no ~/.bashrc, so
the override that makes the shell's run work is the usual thing it lacks."""

from __future__ import annotations

from rocm_doctor.checks.amd_common import gpus, integrated, rc_evidence
from rocm_doctor.checks.amd_common import target as target_of_gpu
from rocm_doctor.checks.symptoms import RUN_ENV_SYMPTOMS
from rocm_doctor.engine.model import Check, Severity, Status
from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.engine.run_env import steps_for
from rocm_doctor.facts.keys import RUN_ENV
from rocm_doctor.knowledge import gpu_env_vars, overrides
from rocm_doctor.knowledge.env_catalog import visibility_variables
from rocm_doctor.parsers.visible_devices import parse_visible



class ServiceEnvDiffers(Check):
    id = "service-env-differs"
    title = "GPU settings of the model's service or kernel against your shell's"
    area = "environment"
    severity = Severity.HIGH
    requires = (RUN_ENV,)
    explains = tuple(Explains(target, when_failing) for target in RUN_ENV_SYMPTOMS)
    docs = ("https://github.com/ollama/ollama/issues/8679", "https://github.com/ollama/ollama/issues/6520")

    def run(self, facts):
        run = facts[RUN_ENV]
        if run.get("env") is None:
            return self.finding(Status.ERROR, f"{run.get('problem')}: the checks judged this shell's environment "
                                "instead", evidence=list(run.get("notes") or []))
        where = run["label"].removeprefix("the ").removesuffix(" environment")
        shell, judged = dict(facts.shell_env), dict(run["env"])
        findings = [f for f in (self._missing_file(run, where, entry) for entry in run.get("files") or []) if f]
        differ = sorted(v for v in set(shell) | set(judged) if gpu_env_vars.matters(v) and shell.get(v) != judged.get(v))
        for var in differ:
            found = self._judge(facts, run, where, var, shell.get(var), judged.get(var))
            if found:
                findings.append(found)
        findings.append(self._summary(run, where, shell, judged, differ))
        return findings

    def _judge(self, facts, run, where, var, mine, theirs):
        if mine is None:
            return None  # set only in the service or kernel: the checks of the environment judge it there
        evidence = [f"your shell: {var}={mine}", *rc_evidence(facts, var),
                    f"{where}: " + (f"{var}={theirs} ({_source(run, var)})" if theirs is not None else f"no {var}")]
        why = _relied_on(facts, var, mine)
        if why:
            return self.fail(
                f"{var}={mine} is set in your shell but {'not' if theirs is None else 'differently'} in {where}: "
                f"{why}. {where} " + ("reads no ~/.bashrc or ~/.profile" if run["kind"] == "systemd" else
                                      "takes its value from kernel.json") + ", so it runs without what makes your "
                "shell's run work.", subject=var, evidence=evidence, severity=Severity.HIGH,
                fix=steps_for(run, {var: mine}, facts.shell_env),
                data={"variable": var, "shell": mine, "service": theirs})
        hidden = _hides(facts, var, mine)
        if hidden:
            return self.warn(
                f"{var}={mine} in your shell {hidden}; {where} " + ("does not have it" if theirs is None else
                f"has {var}={theirs}") + ", so it sees other GPUs than your shell's run.", subject=var,
                evidence=evidence, severity=Severity.MEDIUM, fix=steps_for(run, {var: mine}, facts.shell_env),
                data={"variable": var, "shell": mine, "service": theirs})
        return None

    def _missing_file(self, run, where, entry):
        if entry.get("state") != "missing" or entry.get("optional"):
            return None
        return self.fail(
            f"EnvironmentFile={entry['path']} does not exist and is not optional: systemd refuses to start {where} "
            "('Failed to load environment files').", subject="environment-file", evidence=[f"{entry['path']}: not found"],
            remediation=[f"Create {entry['path']}, or mark it optional with a '-' before the path in the unit "
                         f"(EnvironmentFile=-{entry['path']})."])

    def _summary(self, run, where, shell, judged, differ):
        rocm = [e for e in gpu_env_vars.rocm_entries(shell.get("PATH", ""))
                if e not in gpu_env_vars.rocm_entries(judged.get("PATH", ""))]
        lines = [f"{v}: your shell {_shown(shell.get(v))}, {where} {_shown(judged.get(v))}"
                 + (f" ({_source(run, v)})" if v in judged else "") for v in differ]
        lines += [f"PATH: your shell has {e}, {where} does not" for e in rocm]
        evidence = [f"judged: {run['label']} ({run.get('basis', '')})", *lines, *(run.get("notes") or [])]
        interp = run.get("interpreter") or {}
        if interp.get("exists"):
            evidence.append(f"the interpreter it runs: {interp.get('path')}")
        if not lines:
            return self.ok(f"{where} has the same GPU variables as your shell", evidence=evidence)
        return self.info(f"{len(lines)} GPU setting(s) differ between your shell and {where}: "
                         + "; ".join(lines[:4]) + ("; …" if len(lines) > 4 else ""), evidence=evidence)


def _shown(value) -> str:
    return "has no such variable" if value is None else f"has {value!r}"


def _source(run, var) -> str:
    return (run.get("sources") or {}).get(var) or "inherited"


def _relied_on(facts, var, value) -> str:
    """Why the shell's run needs this override: it makes a discrete GPU run its family's code."""
    match = gpu_env_vars.OVERRIDE.match(var)
    target = overrides.target_of(value) if match else None
    for gpu in gpus(facts) if target else []:
        gfx = target_of_gpu(facts, gpu).get("real_gfx")  # read with the shell's override too: not a read of the judged env
        if integrated(facts, gpu) or not gfx or gfx == target or not overrides.matches_family(value, gfx):
            continue
        if match.group(1) is not None and str(gpu.get("node")) != match.group(1):
            continue
        return (f"GPU {gpu.get('index')} ({gpu.get('name') or 'AMD GPU'}) is {gfx}; with it your shell runs {target} "
                f"code there, without it the runtime loads {gfx} code, which ROCm libraries and torch wheels mostly "
                "lack")
    return ""


def _hides(facts, var, value) -> str:
    """'hides N of the M GPUs' when a visibility variable in the shell selects fewer GPUs than there are."""
    if var not in visibility_variables():
        return ""
    entries, bad = parse_visible(value)
    count = len(gpus(facts))
    if bad or not entries or count <= len(entries):
        return ""
    return f"selects {len(entries)} of the {count} GPUs"

