"""GPU library environment: logging and debug switches left on, MIOpen folders, and the caching-allocator config.

Pure functions of facts.env (and the miopen.dirs probe record for the folders).
"""

from __future__ import annotations

from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU
from rocm_doctor.checks.visibility import set_in_rc_file
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.parsers.alloc_conf import parse_alloc_conf

# -- logging and debug switches ------------------------------------------------------------------------------

# variable -> (library, rule, what it does). rule: "truthy" (any value but 0/false/off/empty), ">N" (integer above N)
LOGGING_VARIABLES: dict[str, tuple[str, str, str]] = {
    "MIOPEN_ENABLE_LOGGING": ("MIOpen", "truthy", "logs every MIOpen call"),
    "MIOPEN_ENABLE_LOGGING_CMD": ("MIOpen", "truthy", "logs a MIOpenDriver command line per call"),
    "MIOPEN_LOG_LEVEL": ("MIOpen", ">4", "logs MIOpen at info level or above (5 = Info, 6 = Info2, 7 = Trace)"),
    "ROCBLAS_LAYER": ("rocBLAS", ">0", "logs every rocBLAS call (trace/bench/profile layers)"),
    "HIPBLASLT_LOG_LEVEL": ("hipBLASLt", ">0", "logs hipBLASLt calls"),
    "HIPBLASLT_LOG_MASK": ("hipBLASLt", ">0", "logs hipBLASLt calls"),
    "AMD_LOG_LEVEL": ("HIP runtime", ">0", "logs HIP runtime calls (3 and 4 log every API call)"),
    "CUBLAS_LOGINFO_DBG": ("cuBLAS", "truthy", "logs every cuBLAS call"),
    "CUBLASLT_LOG_LEVEL": ("cuBLASLt", ">0", "logs cuBLASLt calls"),
    "CUBLASLT_LOG_MASK": ("cuBLASLt", ">0", "logs cuBLASLt calls"),
    "CUDNN_LOGLEVEL_DBG": ("cuDNN", ">0", "logs cuDNN calls (1 errors, 2 warnings, 3 info)"),
    "CUDNN_LOGINFO_DBG": ("cuDNN", "truthy", "logs every cuDNN call (cuDNN 8)"),
    "AMD_SERIALIZE_KERNEL": ("HIP runtime", ">0", "serializes every kernel launch (debugging switch)"),
    "AMD_SERIALIZE_COPY": ("HIP runtime", ">0", "serializes every copy (debugging switch)"),
    "HIP_LAUNCH_BLOCKING": ("HIP runtime", "truthy", "makes every kernel launch synchronous (debugging switch)"),
    "CUDA_LAUNCH_BLOCKING": ("CUDA runtime", "truthy", "makes every kernel launch synchronous (debugging switch)"),
}
_FALSY = {"", "0", "false", "off", "no", "none"}


def logging_switch(variable: str, value: str) -> bool:
    """Whether `variable=value` turns logging (or a debugging switch) on."""
    spec = LOGGING_VARIABLES.get(variable)
    if spec is None:
        return False
    rule = spec[1]
    text = (value or "").strip()
    if rule == "truthy":
        return text.lower() not in _FALSY
    threshold = int(rule[1:])
    try:
        return int(text, 0) > threshold
    except ValueError:
        return text.lower() not in _FALSY  # an unparsable value: the library may still read it as on


class GpuLibraryLogging(Check):
    id = "gpu-library-logging-enabled"
    title = "GPU library logging and debug switches are off"
    area = "environment"
    severity = Severity.MEDIUM

    def run(self, facts):
        findings = []
        for variable in sorted(LOGGING_VARIABLES):
            value = facts.env.get(variable)
            if value is None or not logging_switch(variable, value):
                continue
            library, _, what = LOGGING_VARIABLES[variable]
            findings.append(self.warn(
                f"{variable}={value} {what}: {library} work gets slower and the output noisy.",
                subject=variable,
                evidence=[f"{variable}={value!r}"],
                remediation=["Set it only for one diagnostic run, on the command line of that run."],
                fix=S.unset_where_set(variable, set_in_rc_file(facts, variable)),
                data={"variable": variable, "value": value, "library": library},
            ))
        return findings or self.ok("no GPU library logging or debug switch is on")


# -- MIOpen folders ------------------------------------------------------------------------------------------


class MiopenDbNotWritable(Check):
    id = "miopen-db-not-writable"
    title = "MIOpen's user database and kernel cache folders are writable"
    area = "environment"
    severity = Severity.MEDIUM

    def run(self, facts):
        dirs = facts.get("miopen.dirs")
        if dirs is None:
            dirs = (getattr(facts.observations, "probes", None) or {}).get("miopen.dirs")
        if not isinstance(dirs, dict) or not dirs:
            return self.skip("the MIOpen folders were not probed (no HOME and no MIOPEN_* variable, or an old snapshot)")
        explicit = any(info.get("source") == "env" for info in dirs.values())
        if facts.get("torch.flavour") not in (None, "rocm") and not explicit:
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

ALLOC_VARIABLES = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")


class AllocConfInvalid(Check):
    id = "alloc-conf-invalid"
    title = "PyTorch's caching-allocator configuration parses"
    explains = (*TORCH_SEES_NO_GPU, *GPU_WORK)
    area = "environment"
    severity = Severity.HIGH

    def run(self, facts):
        findings = []
        for variable in ALLOC_VARIABLES:
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
