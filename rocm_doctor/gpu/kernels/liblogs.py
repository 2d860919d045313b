"""A separate child with the math libraries' own logging switched on (in that child's environment only).

The log says what the libraries did (which rocBLAS/hipBLASLt GEMM, which MIOpen solver, which cuBLAS/cuDNN
call) and is where their own errors show ("fatal error: 'limits' file not found" from MIOpen's HIPRTC build,
"Cannot read TensileLibrary.dat"). It is size-capped and attached to the results.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Mapping, Optional, Sequence

from rocm_doctor.engine.child import GoFile, run_child
from rocm_doctor.gpu.kernels.harness import CHILD, MARKER, SuiteOptions

AMD_LOG_ENV = {
    "MIOPEN_ENABLE_LOGGING": "1",
    "MIOPEN_LOG_LEVEL": "5",
    "ROCBLAS_LAYER": "2",
    "HIPBLASLT_LOG_LEVEL": "2",
    "AMD_LOG_LEVEL": "3",
}
NVIDIA_LOG_ENV = {
    "CUBLAS_LOGINFO_DBG": "1",
    "CUBLAS_LOGDEST_DBG": "stderr",
    "CUBLASLT_LOG_LEVEL": "2",
    "CUDNN_LOGLEVEL_DBG": "2",
    "CUDNN_LOGDEST_DBG": "stderr",
}
LOG_CASES = ("mm-float32", "mm-float16", "conv2d-fwd-bwd-float32", "batch-norm-float32")
LOG_CAP = 64 * 1024

# Which library wrote a log line (first match wins).
LINE_RULES = [
    ("MIOpen", r"^MIOpen\(|MIOpen\(HIP\)|MIOpen:"),
    ("hipBLASLt", r"hipblaslt|hipBLASLt"),
    ("rocBLAS", r"rocblas|^\./rocblas-bench|rocblas-bench"),
    ("HIP runtime", r"^:\d:|\bhip[A-Z]\w+\s*\(|hip_\w+\.cpp"),
    ("cuBLASLt", r"cublasLt|\[cublasLt\]"),
    ("cuBLAS", r"cuBLAS|cublas\w*\("),
    ("cuDNN", r"cudnn|CuDNN|cuDNN"),
]
_LINE_RULES = [(name, re.compile(pattern)) for name, pattern in LINE_RULES]


def log_env(vendor: Optional[str]) -> Optional[dict[str, str]]:
    return dict(AMD_LOG_ENV) if vendor == "amd" else dict(NVIDIA_LOG_ENV) if vendor == "nvidia" else None


def cap_text(text: str, cap: int = LOG_CAP) -> tuple[str, int]:
    """Keep the head (3/4) and the tail (1/4) of a long log; returns (text, bytes dropped)."""
    raw = text.encode("utf-8", errors="replace")
    if len(raw) <= cap:
        return text, 0
    head, tail = raw[: cap * 3 // 4], raw[-(cap // 4):]
    dropped = len(raw) - len(head) - len(tail)
    marker = f"\n[... {dropped} bytes cut by rocm-doctor ...]\n".encode()
    return (head + marker + tail).decode("utf-8", errors="replace"), dropped


def summarize(text: str) -> dict[str, int]:
    """Lines per library, e.g. {"MIOpen": 120, "rocBLAS": 8}."""
    counts: dict[str, int] = {}
    for line in (text or "").splitlines():
        for name, pattern in _LINE_RULES:
            if pattern.search(line):
                counts[name] = counts.get(name, 0) + 1
                break
    return counts


def capture(
    python: str,
    vendor: Optional[str],
    env: Optional[Mapping[str, str]] = None,
    device: str = "cuda",
    cases: Sequence[str] = LOG_CASES,
    timeout: float = 180.0,
    cap: int = LOG_CAP,
    variables: Optional[Mapping[str, str]] = None,
    runner=run_child,
    gate: Optional[str] = None,
) -> dict[str, Any]:
    """Run `cases` once more with library logging on; return the capped log and what it contains. With `gate`, the
    child imports torch and waits for that file before it touches the GPU (`Early`)."""
    variables = dict(variables) if variables is not None else log_env(vendor)
    if not variables:
        return {"ran": False, "reason": f"library logging applies to AMD and NVIDIA GPUs; this run used {vendor or 'no GPU'}"}
    child_env = dict(os.environ if env is None else env)
    child_env.update(variables)
    payload = SuiteOptions(device=device, cases=list(cases), profile=False).payload(list(cases))
    if gate:
        payload.update(gate=gate, gate_s=timeout)
    run = runner(python, CHILD, payload, timeout=timeout, env=child_env, marker=MARKER)
    chatter = [line for line in run.result.stdout.splitlines() if not line.lstrip().startswith("{")]
    text = "\n".join(chatter + run.result.stderr.splitlines())
    kept, dropped = cap_text(text, cap)
    from rocm_doctor.gpu.kernels.signatures import signature_matches

    outcomes = {e.get("case"): e.get("outcome") for e in run.records if e.get(MARKER) == "result"}
    return {
        "ran": True,
        "variables": variables,
        "state": run.state,
        "detail": run.detail,
        "duration_s": run.result.duration_s,
        "cases": outcomes,
        "bytes": len(text.encode("utf-8", errors="replace")),
        "truncated_bytes": dropped,
        "lines_by_library": summarize(text),
        "signatures": signature_matches(text),
        "log": kept,
    }


VENDOR_NODES = (("nvidia", "/dev/nvidiactl"), ("amd", "/dev/kfd"))  # the device node each vendor's driver makes


def vendor_of_nodes(exists=os.path.exists) -> Optional[str]:
    """The GPU vendor whose device node this machine has, when only one vendor's is there."""
    found = {vendor for vendor, node in VENDOR_NODES if exists(node)}
    return found.pop() if len(found) == 1 else None


class Early:
    """The library-log child started beside the suite's: it imports torch while the suite runs and touches the GPU
    only once `go` opens its gate, so the two never compute at once and its import is off the wall clock (about
    1.8 s with torch's bytecode cached on an H200, 3.5 s without). `stop` ends it when its log is not wanted."""

    def __init__(self, python: str, vendor: str, env: Mapping[str, str], device: str, timeout: float,
                 runner=run_child) -> None:
        self.vendor = vendor
        self.gate = GoFile("rocm-doctor-logs-")
        self.cancel = threading.Event()
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="library-logs")
        self.future: Future = pool.submit(capture, python, vendor, env=env, device=device, timeout=timeout,
                                          runner=functools.partial(runner, cancel=self.cancel), gate=self.gate.path)
        pool.shutdown(wait=False)

    def go(self) -> dict[str, Any]:
        """Open the gate and wait for the log."""
        self.gate.open()
        try:
            return self.future.result()
        finally:
            self.gate.remove()

    def stop(self) -> None:
        self.cancel.set()
        self.future.add_done_callback(lambda _future: self.gate.remove())
