"""Where the tables end: the newest ROCm, HIP SDK, torch and CUDA release each one knows, and the words for a
release on the machine that is newer than that. Such a release is judged from what the machine shows, never
called unsupported for lacking a row."""

from __future__ import annotations

from rocm_doctor.knowledge import versions
from rocm_doctor.knowledge.store import load

UPDATE = "rocm-doctor data update"

# kind -> (what it is called, the table, its rows, the row key): the one place each table's end is read from.
_TABLES = {
    "rocm": ("ROCm", "rocm_support_linux.json", "releases", "rocm"),
    "hip-sdk": ("HIP SDK", "support_windows.json", "releases", "rocm"),
    "torch": ("torch", "torch_wheels.json", "releases", "torch"),
    "cuda": ("CUDA", "nvidia_driver_cuda.json", "toolkits", "cuda"),
}


def ends_at(kind: str) -> str:
    """The newest release the table for `kind` has a row for ("10.0" for rocm)."""
    _, table, rows, key = _TABLES[kind]
    found = [row[key] for row in load(table)[rows]]
    return max(found, key=lambda value: versions.parse(value) or (0,))


def newer(kind: str, version: str | None) -> str | None:
    """"ROCm 11.0.1 is newer than rocm-doctor's data (which ends at 10.0)" when the version's major.minor is past the
    table's newest row, else None (older, known, or not a version)."""
    parsed, end = versions.parse(version or ""), ends_at(kind)
    if parsed is None or parsed[:2] <= (versions.parse(end) or (0,))[:2]:
        return None
    return words(_TABLES[kind][0], version, end)


def words(what: str, version: str, end: str) -> str:
    """The one phrasing of a release past a table's end."""
    return f"{what} {version} is newer than rocm-doctor's data (which ends at {end})"


def advice() -> str:
    return f"Run `{UPDATE}` for tables that know newer releases"
