"""The amdgpu kernel driver against the ROCm user space (data/amdgpu_driver_support.json): which driver line a
package or module version belongs to, which ROCm releases that line supports, what AMD documents for the
distribution kernel's own amdgpu, and firmware versions established as bad."""

from __future__ import annotations

from rocm_doctor.knowledge import versions
from rocm_doctor.knowledge.store import load

TABLE = "amdgpu_driver_support.json"


def _minor(text: str | None) -> str | None:
    parsed = versions.parse(text)
    return f"{parsed[0]}.{parsed[1]}" if parsed else None


def driver_row(release: str | None) -> dict | None:
    """The row of a driver release ("6.4.4" → the 6.4 line, "30.20.1" → 30.20)."""
    line = _minor(release)
    return next((row for row in load(TABLE)["drivers"] if row["driver"] == line), None)


def row_for_module(module_version: str | None) -> dict | None:
    """The row whose DKMS module version ("6.16.6", "6.12.12-2164967.24.04") names it."""
    wanted = (module_version or "").split("-", 1)[0]
    return next((row for row in load(TABLE)["drivers"] if wanted and wanted in row["modules"]), None)


def supports(row: dict, rocm: str | None) -> bool | None:
    """Whether the driver row lists the ROCm user space's minor release; None when the release is unknown."""
    minor = _minor(rocm)
    return None if minor is None else minor in row["rocm"]


def drivers_for(rocm: str | None) -> list[str]:
    """The driver lines that list this ROCm minor release, newest first (as the table orders them)."""
    minor = _minor(rocm)
    return [row["driver"] for row in load(TABLE)["drivers"] if minor in row["rocm"]]


def inbox_rows(rocm: str | None, scope: str) -> list[dict]:
    """What AMD documents for the distribution kernel's own amdgpu: rows of that scope ("ryzen-apu",
    "discrete") naming the ROCm minor release, or naming none (a statement for every release)."""
    minor = _minor(rocm)
    return [row for row in load(TABLE)["inbox"] if row["scope"] == scope and (not row["rocm"] or minor in row["rocm"])]


def firmware_issues(gfx: str | None) -> list[dict]:
    return [row for row in load(TABLE)["firmware"] if gfx in row["gfx"]]


def source(key: str) -> dict:
    return load(TABLE)["sources"].get(key) or {}
