"""The environment variables that change how the model runs on the GPU: the override, the visibility variables,
the allocator configuration, the library path, the legacy HIP variables (data/legacy_values.json) and the speed
switches (data/perf_switches.json). A service or kernel that lacks one the shell has runs differently."""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

from rocm_doctor.knowledge import legacy, perf_switches

FIXED = ("HSA_OVERRIDE_GFX_VERSION", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
         "GPU_DEVICE_ORDINAL", "LD_LIBRARY_PATH", "ROCM_PATH", "HIP_PATH")
PATTERNS = (r"HSA_OVERRIDE_GFX_VERSION_\d+", r"[A-Z0-9_]*_VISIBLE_DEVICES", r"PYTORCH_[A-Z_]*ALLOC_CONF")
OVERRIDE = re.compile(r"^HSA_OVERRIDE_GFX_VERSION(?:_(\d+))?$")


@lru_cache(maxsize=1)
def _tabled() -> tuple[str, ...]:
    return tuple(legacy.variables()) + tuple(row["variable"] for row in perf_switches.table()["switches"])


def matters(name: str) -> bool:
    """Whether `name` is one of the variables that change how the model runs."""
    return (name in FIXED or any(re.fullmatch(p, name) for p in PATTERNS)
            or any(fnmatch.fnmatchcase(name, pattern) for pattern in _tabled()))


def rocm_entries(path_value: str, sep: str = ":") -> list[str]:
    """The ROCm folders of a PATH-like value (an entry naming rocm or hip)."""
    return [e for e in (path_value or "").split(sep) if e and re.search(r"rocm|hip", e, re.IGNORECASE)]
