"""The Windows layer table (data/windows_layer.json): AMD driver versions, the driver each PyTorch-on-Windows and
HIP SDK release names or ships, Windows builds, and the Visual C++ runtime torch loads."""

from __future__ import annotations

import re

from rocm_doctor.knowledge.store import load

TABLE = "windows_layer.json"
_WINDOWS_VERSION = re.compile(r"^(\d+)\.0\.(\d)(\d\d)(\d\d)\.(\d+)$")


def table() -> dict:
    return load(TABLE)


def dotted(text) -> tuple:
    """'26.1.1' -> (26, 1, 1); '25.20.01.17' -> (25, 20, 1, 17); junk -> ()."""
    parts = re.findall(r"\d+", str(text or ""))
    return tuple(int(p) for p in parts[:4])


def decode_internal(windows_version) -> str | None:
    """The internal version a Windows driver store version encodes (32.0.21001.9024 -> 25.10.01.09), for the
    driver majors whose encoding every row of AMD's table confirms (31, 32); else None."""
    match = _WINDOWS_VERSION.match(str(windows_version or "").strip())
    if not match or int(match.group(1)) not in table()["decode_rule"]["majors"]:
        return None
    major, digit, minor, build, revision = match.groups()
    year = 21 + 2 * (int(major) - 31) + int(digit)
    internal = f"{year}.{minor}.{build}"
    if len(revision) > 3:
        internal += f".{int(revision[:-3]):02d}"
    return internal


def driver_by_windows_version(windows_version) -> dict | None:
    """AMD's row for an exact Windows driver store version (the WMI / registry DriverVersion)."""
    wanted = str(windows_version or "").strip()
    return next((row for row in table()["drivers"] if row["windows_version"] == wanted), None)


def adrenalin_rows(version) -> list[dict]:
    """AMD's rows for a public Adrenalin version (one per driver branch: main, RDNA1/RDNA2, Polaris/Vega)."""
    return [row for row in table()["drivers"] if dotted(row["adrenalin"]) == dotted(version)]


def pytorch_release(rocm_package=None, torch_version=None, torch_hip=None) -> tuple[dict | None, str]:
    """The PyTorch-on-Windows release row for the installed wheels, and how it was matched. The rocm package
    version decides first (7.2.0.dev0 vs 7.2.1), then torch's own version, then torch's HIP major.minor."""
    rows = table()["pytorch_windows"]
    for row in rows:
        if rocm_package and rocm_package in row["match"].get("rocm", []):
            return row, f"rocm package {rocm_package}"
    for row in rows:
        if torch_version and torch_version in row["match"].get("torch", []):
            return row, f"torch {torch_version}"
    hip = dotted(torch_hip)[:2]
    for row in rows:
        if hip and row["match"].get("torch_hip") and dotted(row["match"]["torch_hip"]) == hip:
            return row, f"torch's HIP {torch_hip}"
    return None, ""


def hip_sdk_row(version) -> dict | None:
    wanted = dotted(version)[:2]
    return next((row for row in table()["hip_sdk"] if dotted(row["release"]) == wanted), None) if wanted else None


def windows_version(name: str) -> dict | None:
    return next((row for row in table()["windows_versions"] if row["name"] == name), None)


def windows_name(build, server: bool = False) -> str | None:
    """The release name of a Windows build number ('Windows 11 24H2' for 26100), when the table has it."""
    family = "server" if server else "client"
    row = next((r for r in table()["windows_versions"] if r["build"] == build and r["family"] == family), None)
    return row["name"] if row else None


def windows_11(build) -> bool:
    return isinstance(build, int) and build >= table()["windows_11_from"]["build"]


def minimum_builds(names) -> dict[str, dict]:
    """For a release's OS list ('Windows 10 22H2', 'Windows 11', ...): the lowest listed build per family
    ('windows10', 'windows11', 'server') as {"build", "name"}. A bare 'Windows 11' means any Windows 11."""
    out: dict[str, dict] = {}
    for name in names or []:
        if name == "Windows 11":
            row = {"build": table()["windows_11_from"]["build"], "name": name}
            key = "windows11"
        else:
            found = windows_version(name)
            if found is None:
                continue
            row = {"build": found["build"], "name": name}
            key = "server" if found["family"] == "server" else "windows11" if windows_11(found["build"]) else "windows10"
        if key not in out or row["build"] < out[key]["build"]:
            out[key] = row
    return out


def vc_runtime() -> dict:
    return table()["vc_runtime"]


def driver_runtime() -> dict:
    return table()["driver_runtime"]


def therock_nightlies() -> dict:
    return table()["therock_nightlies"]
