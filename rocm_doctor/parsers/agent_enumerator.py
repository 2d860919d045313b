"""`rocm_agent_enumerator` and `amdgpu-arch` → the gfx targets they print, one per line. Pure; never raises.

rocm_agent_enumerator prints `gfx000` for the CPU agent; it is kept apart from the GPU targets. Any other line
(a Python traceback, "Failed to ..." from amdgpu-arch) is returned as an error line.
"""

from __future__ import annotations

import re

from rocm_doctor.parsers import gfx as gfxlib

CPU_TARGET = "gfx000"
_GFX_LIKE = re.compile(r"^gfx[0-9a-z]+$", re.IGNORECASE)


def parse_target_lines(text: str | None) -> dict:
    """{gpus: [base gfx per GPU line, in order, repeats kept], target_ids: [...], cpu_agents: n, errors: [...],
    garbled: [{what, lines}] for gfx-like names that are no target}."""
    result: dict = {"gpus": [], "target_ids": [], "cpu_agents": 0, "errors": [], "garbled": []}
    for line in (text or "").splitlines():
        token = line.strip()
        if not token:
            continue
        if token == CPU_TARGET:
            result["cpu_agents"] += 1
        elif gfxlib.base_gfx(token) and " " not in token:
            result["gpus"].append(gfxlib.base_gfx(token))
            result["target_ids"].append(gfxlib.target_id(token))
        else:
            result["errors"].append(token)
            if _GFX_LIKE.match(token):
                result["garbled"].append({"what": f"'{token}' is no gfx target", "lines": [token]})
    return result
