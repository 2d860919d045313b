"""The environment variables that change how the model runs on the GPU: every variable of data/env_catalog.json, and
the families data/perf_switches.json names (MIOPEN_DEBUG_*). A service or kernel that lacks one the shell has runs
differently."""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

from rocm_doctor.knowledge import env_catalog, perf_switches

OVERRIDE = re.compile(r"^HSA_OVERRIDE_GFX_VERSION(?:_(\d+))?$")


@lru_cache(maxsize=1)
def _families() -> tuple[str, ...]:
    return tuple(row["variable"] for row in perf_switches.table()["switches"] if "*" in row["variable"])


def matters(name: str) -> bool:
    """Whether `name` is one of the variables that change how the model runs."""
    return env_catalog.lookup(name) is not None or any(fnmatch.fnmatchcase(name, f) for f in _families())


def rocm_entries(path_value: str, sep: str = ":") -> list[str]:
    """The ROCm folders of a PATH-like value (an entry naming rocm or hip)."""
    return [e for e in (path_value or "").split(sep) if e and re.search(r"rocm|hip", e, re.IGNORECASE)]
