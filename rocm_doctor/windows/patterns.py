"""Names the Windows probes look for, and how the checks classify them. Pure data."""

from __future__ import annotations

import fnmatch
import re

# HIP runtime and the ROCm libraries torch loads; the first group is "the HIP runtime".
HIP_RUNTIME = ("amdhip64*.dll",)
ROCM_DLLS = (
    "amdhip64*.dll",
    "hiprtc*.dll",
    "amd_comgr*.dll",
    "rocblas*.dll",
    "miopen*.dll",
    "hipblas*.dll",
    "hipblaslt*.dll",
    "rocsolver*.dll",
    "hipsolver*.dll",
    "rocsparse*.dll",
    "hipsparse*.dll",
    "rocfft*.dll",
    "hipfft*.dll",
    "rocrand*.dll",
    "hiprand*.dll",
    "roctx*.dll",
)
TOOL_EXES = ("hipinfo.exe", "cl.exe", "hipcc.bat", "hipcc.exe", "clang.exe", "python.exe")
SCAN_PATTERNS = ROCM_DLLS + TOOL_EXES
CXX_HEADERS = ("type_traits", "limits", "cstdint")

_RUNTIME_MAJOR = re.compile(r"^amdhip64(?:_(\d+))?\.dll$", re.I)


def matches(name: str, patterns=ROCM_DLLS) -> bool:
    return any(fnmatch.fnmatch(name.lower(), p) for p in patterns)


def is_hip_runtime(name: str) -> bool:
    return bool(_RUNTIME_MAJOR.match(name))


def runtime_major(name: str) -> int | None:
    """amdhip64_7.dll -> 7, amdhip64_6.dll -> 6, amdhip64.dll -> 5 (the 5.x SDKs' name)."""
    match = _RUNTIME_MAJOR.match(name)
    if not match:
        return None
    return int(match.group(1)) if match.group(1) else 5
