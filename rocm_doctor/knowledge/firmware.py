"""The graphics-core firmware amdgpu loads for a gfx target (data/amdgpu_firmware.json): the file-name prefixes
one of which must be under /lib/firmware/amdgpu, and the GC IP version behind the target."""

from __future__ import annotations

from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers.gfx import base_gfx

COMPRESSED = (".bin", ".bin.zst", ".bin.xz")


def target(gfx: str | None) -> dict | None:
    base = base_gfx(gfx or "")
    return next((row for row in load("amdgpu_firmware.json")["targets"] if row["gfx"] == base), None)


def present(row: dict, names) -> list[str]:
    """The files among `names` (a firmware folder's entries) that carry one of the row's prefixes."""
    return sorted(n for n in names if n.startswith(tuple(row["prefixes"])) and n.endswith(COMPRESSED))
