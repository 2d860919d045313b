"""Which distributions, Ubuntu kernel series and glibc versions each ROCm release lists (data/os_support.json),
and the distributions ROCm's WSL packages are built for."""

from __future__ import annotations

from dataclasses import dataclass, field

from rocm_doctor.knowledge import currency, versions
from rocm_doctor.knowledge.store import load


@dataclass(frozen=True)
class DistroSupport:
    status: str  # listed | not-listed | unknown-release | newer-release (past the table's newest row)
    release: str | None = None  # the ROCm row used
    source: str | None = None
    entry: dict | None = None  # the matching distro row
    listed: list = field(default_factory=list)  # "ubuntu 24.04", ... of the release, for the message
    note: str | None = None


def _table() -> dict:
    return load("os_support.json")


def release_row(rocm_version: str) -> dict | None:
    """The row of a ROCm version ("6.3.42131" → the 6.3 row), or None when the table has none."""
    version = versions.parse(rocm_version)
    if version is None:
        return None
    wanted = f"{version[0]}.{version[1]}"
    return next((row for row in _table()["releases"] if row["rocm"] == wanted), None)


def releases() -> list[str]:
    return [row["rocm"] for row in _table()["releases"]]


def _matches(entry: dict, distro: str, version_id: str, point: str | None) -> bool:
    if entry["id"] != distro:
        return False
    if distro in ("sles", "sled"):
        return entry["version"] == point
    wanted = entry["version"]
    if wanted == version_id:
        return True
    return "." not in wanted and (version_id or "").split(".")[0] == wanted  # "Oracle Linux 9" covers 9.x


def _label(entry: dict) -> str:
    return f"{entry['id']} {entry['version']}"


def distro(rocm_version: str, distro_id: str | None, version_id: str | None, point: str | None = None) -> DistroSupport:
    """Whether the distribution (os-release ID and VERSION_ID; SLES by service pack) is listed for that release;
    a `from` later than the installed point release counts as not listed."""
    row = release_row(rocm_version)
    if row is None:
        later = currency.newer("rocm", rocm_version)
        if later:
            return DistroSupport("newer-release", note=later)
        return DistroSupport("unknown-release", note=f"ROCm {rocm_version} is not in the OS table "
                             f"(rows: {', '.join(releases())})")
    listed = [_label(e) for e in row["distros"]]
    version = versions.parse(rocm_version)
    for entry in row["distros"]:
        if not _matches(entry, distro_id or "", version_id or "", point):
            continue
        first = entry.get("from")
        if first and version and not versions.at_least(version, first):
            return DistroSupport("not-listed", row["rocm"], row["source"], entry, listed, f"listed from {first}")
        return DistroSupport("listed", row["rocm"], row["source"], entry, listed, entry.get("note"))
    return DistroSupport("not-listed", row["rocm"], row["source"], None, listed)


def same_distro_versions(rocm_version: str, distro_id: str) -> list[str]:
    """The versions of one distribution a release lists (to say which one to move to)."""
    row = release_row(rocm_version)
    return [e["version"] for e in row["distros"] if e["id"] == distro_id] if row else []


def oldest_glibc(rocm_version: str) -> str | None:
    """The oldest glibc among the distributions a release lists: older than that, its binaries cannot load."""
    row = release_row(rocm_version)
    found = [e["glibc"] for e in (row or {}).get("distros", []) if e.get("glibc")]
    return min(found, key=lambda v: tuple(int(p) for p in v.split("."))) if found else None


def wsl_distros() -> list[dict]:
    return list(_table()["wsl"]["distros"])


def wsl_source() -> str:
    return _table()["wsl"]["source"]
