"""GPU library environment: logging and debug switches left on (data/env_catalog.json), MIOpen folders, and the
caching-allocator config.

Pure functions of facts.env (and miopen.dirs for the folders).
"""

from __future__ import annotations

import re

from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU
from rocm_doctor.checks.visibility import set_in_rc_file
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains
from rocm_doctor.facts.keys import ENV_KNOWN, MIOPEN_DIRS_KEY, TORCH_FLAVOUR
from rocm_doctor.knowledge import env_catalog
from rocm_doctor.parsers.alloc_conf import parse_alloc_conf
from rocm_doctor.parsers.env_grammar import is_on

# -- logging and debug switches ------------------------------------------------------------------------------


def logging_switch(variable: str, value: str):
    """The catalog row of `variable` when `variable=value` turns a logging or debugging switch on, else None."""
    row = env_catalog.lookup(variable)
    if row is None or row.cls not in ("logs", "debug-only") or row.quiet:
        return None
    return row if is_on(value, row.on) else None


def fails_as_the_switch_says(cause, symptom, _facts=None) -> bool:
    """A switch that breaks kernels explains a failure that carries the error its catalog row quotes (CUDA_FORCE_PTX_JIT:
    "no kernel image is available for execution on the device")."""
    row = env_catalog.lookup(str((cause.data or {}).get("variable") or ""))
    if row is None or not row.breaks:
        return False
    text = " ".join([symptom.message, *symptom.evidence]).lower()
    return any(quoted.lower() in text for quoted in re.findall(r'"([^"]{12,})"', row.cost or ""))


class GpuLibraryLogging(Check):
    id = "gpu-library-logging-enabled"
    title = "GPU library logging and debug switches"
    area = "environment"
    severity = Severity.MEDIUM
    requires = (ENV_KNOWN,)
    explains = tuple(Explains(t, fails_as_the_switch_says) for t in GPU_WORK)

    def run(self, facts):
        findings = []
        for variable, value in sorted(facts.env.items()):
            row = logging_switch(variable, value)
            if row is None:
                continue
            kind = "logging switch" if row.cls == "logs" else "debugging switch"
            data = {"variable": variable, "value": value, "library": row.owner, "class": row.cls}
            if row.breaks:
                data["breaks"] = row.breaks
            findings.append(self.warn(
                f"{variable}={value} is a {row.owner} {kind} left on ({row.effect}): {row.cost}.",
                subject=variable, severity=Severity.HIGH if row.breaks else None,
                evidence=[f"{variable}={value!r}", f"catalog: {row.source}, {row.reference()}"],
                remediation=["Set it only for one diagnostic run, on the command line of that run."],
                fix=S.unset_where_set(variable, set_in_rc_file(facts, variable)),
                data=data,
            ))
        return findings or self.ok("no GPU library logging or debug switch is on")


# -- MIOpen folders ------------------------------------------------------------------------------------------


class MiopenDbNotWritable(Check):
    id = "miopen-db-not-writable"
    title = "Write access to MIOpen's user database and kernel cache folders"
    area = "environment"
    severity = Severity.MEDIUM

    def run(self, facts):
        dirs = facts.get(MIOPEN_DIRS_KEY)
        if not isinstance(dirs, dict) or not dirs:
            return self.skip("the MIOpen folders were not probed (no HOME and no MIOPEN_* variable, or an old snapshot)")
        explicit = any(info.get("source") == "env" for info in dirs.values())
        if facts.get(TORCH_FLAVOUR) not in (None, "rocm") and not explicit:
            return self.skip("MIOpen is used by ROCm builds of torch only")
        findings = []
        for variable, info in sorted(dirs.items()):
            if info.get("writable"):
                continue
            path = info.get("path")
            if info.get("exists") and not info.get("is_dir", True):
                why = "exists but is not a folder"
            elif info.get("exists"):
                why = "is not writable by this user"
            else:
                why = f"does not exist and cannot be created (nearest parent: {info.get('nearest_parent')})"
            steps = _make_writable(path) if facts.os != "windows" and info.get("is_dir", True) else []
            findings.append(self.warn(
                f"{variable} folder {path} {why}: MIOpen cannot keep tuning results or compiled kernels, so it "
                "searches and compiles again in every process (slow first convolutions) and may log errors.",
                subject=variable,
                evidence=[f"{variable}: {path} ({info.get('source')})"] + ([info["error"]] if info.get("error") else []),
                remediation=[("Or point" if steps else "Point") + f" {variable} at a folder you can write to (e.g. "
                             "under your home folder or a job's scratch space)."],
                fix=steps,
                data=dict(info),
            ))
        return findings or self.ok("MIOpen's folders are writable: " + ", ".join(
            f"{k}={v.get('path')}" for k, v in sorted(dirs.items())))


def _make_writable(path: str) -> list:
    """Create the folder if needed and give it to this user (it is in a place the user cannot write)."""
    return [S.run_command(["sudo", "mkdir", "-p", path], needs_admin=True, description=f"create {path}"),
            S.run_command(["sudo", "chown", "-R", "$USER", path], needs_admin=True,
                          description=f"make {path} yours", note="MIOpen keeps its databases and kernel cache there")]


# -- caching-allocator configuration -------------------------------------------------------------------------



class AllocConfInvalid(Check):
    id = "alloc-conf-invalid"
    title = "PyTorch's caching-allocator configuration"
    explains = (*TORCH_SEES_NO_GPU, *GPU_WORK)
    area = "environment"
    severity = Severity.HIGH
    requires = (ENV_KNOWN,)

    def run(self, facts):
        findings = []
        for variable in env_catalog.judged_by(self.id):
            value = facts.env.get(variable)
            if value is None:
                continue
            parsed = parse_alloc_conf(value)
            evidence = [f"{variable}={value!r}"]
            if parsed["errors"]:
                findings.append(self.fail(
                    f"{variable} is invalid: torch raises at the first GPU allocation: "
                    + "; ".join(message for _, message in parsed["errors"]),
                    subject=variable,
                    evidence=evidence,
                    remediation=[
                        f"To keep a configuration instead, fix the value: comma-separated key:value pairs, e.g. "
                        f"{variable}=expandable_segments:True,max_split_size_mb:128 (booleans are exactly True or "
                        "False)."],
                    fix=S.unset_where_set(variable, set_in_rc_file(facts, variable)),
                    data={"errors": [list(e) for e in parsed["errors"]], "settings": _plain(parsed["settings"])},
                ))
            elif parsed["unknown"]:
                findings.append(self.warn(
                    f"{variable} has keys this doctor does not know: {', '.join(parsed['unknown'])}. Depending on the "
                    f"torch version they are ignored or rejected ('Unrecognized CachingAllocator option: "
                    f"{parsed['unknown'][0]}').",
                    subject=variable,
                    evidence=evidence,
                    remediation=["Check the spelling against https://docs.pytorch.org/docs/stable/notes/cuda.html"
                                 "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf"],
                    data={"unknown": parsed["unknown"], "settings": _plain(parsed["settings"])},
                ))
            else:
                findings.append(self.ok(f"{variable}={value} parses", subject=variable,
                                        data={"settings": _plain(parsed["settings"])}))
        return findings or self.ok("no allocator configuration variable is set")


def _plain(settings: dict) -> dict:
    return {k: ([list(item) for item in v] if isinstance(v, list) else v) for k, v in settings.items()}
