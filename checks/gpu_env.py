"""GPU library environment: logging and debug switches left on, MIOpen folders, and the caching-allocator config.

Pure functions of facts.env (and the miopen.dirs probe record for the folders).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from rocm_doctor.engine.model import Check, Severity

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


def _unset(facts, variable: str) -> str:
    if facts.os == "windows":
        return f'Remove it: `Remove-Item Env:{variable}` (this session) and `[Environment]::SetEnvironmentVariable("{variable}", $null, "User")`.'
    return f"Remove it: `unset {variable}`, and delete the line that sets it from your shell profile or job script."


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
                remediation=[_unset(facts, variable),
                             "Set it only for one diagnostic run (e.g. `VAR=value python script.py`)."],
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
            findings.append(self.warn(
                f"{variable} folder {path} {why}: MIOpen cannot keep tuning results or compiled kernels, so it "
                "searches and compiles again in every process (slow first convolutions) and may log errors.",
                subject=variable,
                evidence=[f"{variable}: {path} ({info.get('source')})"] + ([info["error"]] if info.get("error") else []),
                remediation=[
                    f"Make it writable: `mkdir -p {path} && chown -R $USER {path}`"
                    if facts.os != "windows" else f"Point {variable} at a folder you can write to.",
                    f"Or point {variable} at a writable folder (e.g. under $HOME or a job's scratch space).",
                ],
                data=dict(info),
            ))
        return findings or self.ok("MIOpen's folders are writable: " + ", ".join(
            f"{k}={v.get('path')}" for k, v in sorted(dirs.items())))


# -- caching-allocator configuration -------------------------------------------------------------------------

ALLOC_VARIABLES = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
MIN_SPLIT_MB = 20  # kLargeBuffer / 1 MB in c10
MAX_REGISTER_THREADS = 128
BOOL_KEYS = {
    "expandable_segments": "expandable_segments",
    "release_lock_on_cudamalloc": "release_lock_on_cudamalloc",
    "release_lock_on_hipmalloc": "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register": "pinned_use_cuda_host_register",
    "pinned_use_hip_host_register": "pinned_use_hip_host_register",
    "pinned_use_background_threads": "pinned_use_background_threads",
    "graph_capture_record_stream_reuse": "graph_capture_record_stream_reuse",
}
SIZE_KEYS = ("max_split_size_mb", "max_non_split_rounding_mb")
COUNT_KEYS = ("pinned_max_round_threshold_mb", "pinned_max_cached_size_mb", "large_segment_size_mb")
KNOWN_KEYS = (
    {"backend", "garbage_collection_threshold", "roundup_power2_divisions", "pinned_num_register_threads",
     "per_process_memory_fraction"}
    | set(BOOL_KEYS) | set(SIZE_KEYS) | set(COUNT_KEYS)
)


def _tokens(text: str) -> list[str]:
    """c10's lexer: split on , : [ ] (kept as tokens), drop spaces."""
    tokens, buf = [], []
    for ch in text:
        if ch in ",:[]":
            if buf:
                tokens.append("".join(buf))
                buf = []
            tokens.append(ch)
        elif ch != " ":
            buf.append(ch)
    if buf:
        tokens.append("".join(buf))
    return tokens


def _int(text: str) -> Optional[int]:
    return int(text) if re.fullmatch(r"[+-]?\d+", text or "") else None


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _validate(key: str, value: Any) -> Optional[str]:
    """torch's error message for a bad value, or None when the value is accepted."""
    if isinstance(value, list) and key != "roundup_power2_divisions":
        return f"{key} does not take a [...] list"
    if key in BOOL_KEYS:
        if value not in ("True", "False"):
            return f"Expected a single True/False argument for {BOOL_KEYS[key]} (got {value!r}; only True or False, capitalised)"
        return None
    if key in SIZE_KEYS:
        number = _int(value)
        if number is None:
            return f"{key} needs a whole number of MB (got {value!r}; torch's std::stoi fails on it)"
        if number < MIN_SPLIT_MB:
            return f"CachingAllocator option {key} too small, must be >= {MIN_SPLIT_MB}"
        return None
    if key in COUNT_KEYS:
        number = _int(value)
        if number is None or number < 0:
            return f"{key} needs a non-negative whole number of MB (got {value!r})"
        return None
    if key == "garbage_collection_threshold":
        try:
            number = float(value)
        except ValueError:
            return f"garbage_collection_threshold needs a number (got {value!r}; torch's std::stod fails on it)"
        if not 0.0 < number < 1.0:
            return "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"
        return None
    if key == "per_process_memory_fraction":
        try:
            number = float(value)
        except ValueError:
            return f"per_process_memory_fraction needs a number (got {value!r})"
        if not 0.0 <= number <= 1.0:
            return "per_process_memory_fraction must be in [0.0, 1.0]"
        return None
    if key == "backend":
        if value not in ("native", "cudaMallocAsync", "hipMallocAsync"):
            return "Unknown allocator backend, options are native and cudaMallocAsync (hipMallocAsync on ROCm)"
        return None
    if key == "pinned_num_register_threads":
        number = _int(value)
        if number is None:
            return f"pinned_num_register_threads needs a whole number (got {value!r})"
        if not _pow2(number):
            return "Number of register threads has to be power of 2"
        if number > MAX_REGISTER_THREADS:
            return f"Number of register threads should be less than or equal to {MAX_REGISTER_THREADS}"
        return None
    if key == "roundup_power2_divisions":
        if isinstance(value, list):
            for interval, divisions in value:
                number = _int(divisions)
                if number is None:
                    return f"Error parsing roundup_power2_divisions value ({divisions!r})"
                if number != 0 and not _pow2(number):
                    return "For roundups, the divisons has to be power of 2 or 0 to disable roundup"
                if interval != ">":
                    size = _int(interval)
                    if size is None or not _pow2(size):
                        return "For roundups, the intervals have to be power of 2"
            return None
        number = _int(value)
        if number is None or not _pow2(number):
            return "For roundups, the divisons has to be power of 2"
        return None
    return None


def parse_alloc_conf(text: str) -> dict[str, Any]:
    """{"settings": {key: value}, "errors": [(key, message)], "unknown": [key]} for an *_ALLOC_CONF value."""
    tokens = _tokens(text or "")
    settings: dict[str, Any] = {}
    errors: list[tuple[str, str]] = []
    unknown: list[str] = []
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key == ",":
            i += 1
            continue
        if key in ":[]":
            errors.append((key, f"Error parsing CachingAllocator::AllocatorConfig settings: unexpected {key!r}"))
            break
        if i + 1 >= len(tokens) or tokens[i + 1] != ":":
            errors.append((key, f"Error parsing CachingAllocator::AllocatorConfig settings, expected : after {key}"))
            break
        i += 2
        if i >= len(tokens) or tokens[i] in ",]":
            errors.append((key, f"Error, expecting {key} value"))
            i += 1
            continue
        if tokens[i] == "[":
            items, i = [], i + 1
            while i < len(tokens) and tokens[i] != "]":
                if tokens[i] == ",":
                    i += 1
                    continue
                if i + 2 < len(tokens) and tokens[i + 1] == ":":
                    items.append((tokens[i], tokens[i + 2]))
                    i += 3
                else:
                    errors.append((key, f"Error parsing {key} value"))
                    i = len(tokens)
            if i >= len(tokens):
                if not any(k == key for k, _ in errors):
                    errors.append((key, "Expected closing bracket ']' in ConfigTokenizer but reached end of config"))
            value: Any = items
            i += 1
        else:
            value = tokens[i]
            i += 1
        settings[key] = value
        if key not in KNOWN_KEYS:
            unknown.append(key)
            continue
        message = _validate(key, value)
        if message:
            errors.append((key, message))
    return {"settings": settings, "errors": errors, "unknown": unknown}


class AllocConfInvalid(Check):
    id = "alloc-conf-invalid"
    title = "PyTorch's caching-allocator configuration parses"
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
                        f"Fix the value: comma-separated key:value pairs, e.g. {variable}=expandable_segments:True,"
                        "max_split_size_mb:128 (booleans are exactly True or False).",
                        _unset(facts, variable),
                    ],
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
