"""Facts from the rocm_paths, rocm_libs, shell_rc and miopen_dirs probes and from `check --log`: rocm.paths,
rocm.libraries, shell.rc_lines, miopen.dirs, user.log. Pure."""

from __future__ import annotations

import re

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (LOG_KEY, MIOPEN_DIRS_KEY, ROCM_LIBRARIES, ROCM_LIBS_KEY, ROCM_PATHS_KEY, SHELL_RC_KEY,
                                    SHELL_RC_LINES)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.knowledge.store import load

_GFX_TOKEN = re.compile(r"gfx[0-9a-f]+")


def known_targets() -> list[str]:
    return sorted((row["gfx"] for row in load("gpu_catalog.json")["targets"]), key=len, reverse=True)


def targets_in(names: list[str]) -> list[str]:
    """gfx targets named by library file names: TensileLibrary_lazy_gfx1030.dat, gfx90a68.HIP.fdb.txt (MIOpen
    appends the CU count), extop_gfx942.co. Each token is read as the longest known target it starts with."""
    known = known_targets()
    found = set()
    for name in names:
        for token in _GFX_TOKEN.findall(name.lower()):
            target = next((t for t in known if token.startswith(t)), None)
            if target:
                found.add(target)
    return sorted(found)


def _paths(raw: dict, env: dict) -> dict:
    installs = [dict(r) for r in raw.get("roots") or [] if isinstance(r, dict)]
    active = env.get("ROCM_PATH", "").rstrip("/") or "/opt/rocm"
    for install in installs:
        install["active"] = install.get("path") == active and bool(install.get("exists"))
    return {"installs": installs, "PATH": raw.get("PATH") or [], "LD_LIBRARY_PATH": raw.get("LD_LIBRARY_PATH") or []}


def _libraries(observations: Observations, listed: list) -> list[dict]:
    out = []
    for folder in listed:
        record = observations.file(folder.get("path", ""))
        if record is None:
            continue
        out.append(dict(folder, exists=record.entries is not None, files=len(record.entries or []),
                        gfx=targets_in(record.entries or []), error=record.error))
    return out


def interpret(observations: Observations, facts: Facts) -> None:
    probes = observations.probes
    for key, probe, build in (
        (ROCM_PATHS_KEY, ROCM_PATHS_KEY, lambda v: _paths(v, observations.env)),
        (ROCM_LIBRARIES, ROCM_LIBS_KEY, lambda v: _libraries(observations, v)),
        (SHELL_RC_LINES, SHELL_RC_KEY, list),
        (MIOPEN_DIRS_KEY, MIOPEN_DIRS_KEY, dict),
        (LOG_KEY, LOG_KEY, dict),
    ):
        value = probes.get(probe)
        if isinstance(value, (dict, list)):
            facts.set(key, build(value))
        elif key == LOG_KEY:
            facts.set_missing(key, "no log was given (check --log FILE)")
        else:
            facts.set_missing(key, f"not collected (not run on {facts.os}, or an older snapshot)")
