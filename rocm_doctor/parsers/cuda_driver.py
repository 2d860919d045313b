"""What torch, the CUDA runtime and nvidia-smi print about the NVIDIA driver's version → data. Pure; never raises.

torch's `The NVIDIA driver on your system is too old (found version 11000)` gives the driver's CUDA version as
cudaDriverGetVersion returns it (major * 1000 + minor * 10); the runtime's `CUDA driver version is insufficient
for CUDA runtime version` says the same without a number; nvidia-smi's header line has `Driver Version: X` and
`CUDA Version: Y`; the libcuda.so.X file a process mapped is the driver's own user-space library, named by version.
"""

from __future__ import annotations

import re

_TOO_OLD = re.compile(r"NVIDIA driver on your system is too old \(found version (\d+)\)")
_INSUFFICIENT = re.compile(r"CUDA driver version is insufficient for CUDA runtime version")
# nvidia-smi's header: the driver and the newest CUDA it runs (older drivers print no CUDA version)
SMI_HEADER = re.compile(r"Driver Version:\s*(\d+(?:\.\d+)+)(?:\s+CUDA Version:\s*(\d+\.\d+))?")
_LIBCUDA = re.compile(r"(?:^|/)libcuda\.so\.(\d{3,}(?:\.\d+)+)$")


def cuda_of_number(number: int) -> str:
    """11000 → "11.0", 12080 → "12.8" (the CUDA_VERSION encoding)."""
    return f"{number // 1000}.{number % 1000 // 10}"


def read_text(text: str | None) -> dict:
    """{"driver_cuda", "driver_version" (None where not said), "too_old", "insufficient", "smi" (the lines)}."""
    out = {"driver_cuda": None, "driver_version": None, "too_old": None, "insufficient": None, "smi": None}
    for line in (text or "").splitlines():
        too_old, smi = _TOO_OLD.search(line), SMI_HEADER.search(line)
        if too_old and out["too_old"] is None:
            out["too_old"], out["driver_cuda"] = line.strip(), cuda_of_number(int(too_old.group(1)))
        if _INSUFFICIENT.search(line) and out["insufficient"] is None:
            out["insufficient"] = line.strip()
        if smi and smi.group(2) and out["smi"] is None:
            out["smi"], out["driver_version"] = line.strip(), smi.group(1)
            out["driver_cuda"] = out["driver_cuda"] or smi.group(2)
    return out


def libcuda_version(paths) -> tuple[str, str] | None:
    """(driver version, path) of the first versioned libcuda.so in a list of loaded libraries."""
    for path in paths or ():
        match = _LIBCUDA.search(str(path).strip())
        if match:
            return match.group(1), str(path).strip()
    return None
