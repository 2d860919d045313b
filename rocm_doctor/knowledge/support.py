"""Official support of a gfx target: Linux ROCm per release, Windows HIP SDK (runtime vs SDK), ROCm on WSL; and the
closest working path for a card that is not supported."""

from __future__ import annotations

from dataclasses import dataclass

from rocm_doctor.knowledge import currency, overrides, versions
from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers.gfx import base_gfx



@dataclass(frozen=True)
class Support:
    status: str  # supported | deprecated | unsupported | unknown | newer (a release past the table's newest row)
    release: str | None = None  # the table row used
    source: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class WindowsSupport:
    runtime: str
    sdk: str
    release: str | None = None
    source: str | None = None
    note: str | None = None


def _entry(value) -> dict:
    return {"status": value} if isinstance(value, str) else dict(value)


def _linux_row(version: tuple) -> dict | None:
    rows = load("rocm_support_linux.json")["releases"]
    wanted = f"{version[0]}.{version[1]}"
    exact = next((row for row in rows if row["rocm"] == wanted), None)
    if exact:
        return exact
    for row in rows:  # a row read at one release of a stream covers the stream's other releases (7.9-7.13)
        span = [versions.parse(end)[:2] for end in row.get("range") or ()]
        if span and span[0] <= version[:2] <= span[1]:
            return row
    return None


def _dated(entry: dict, version: tuple, release: str, source: str) -> Support:
    first = entry.get("from")
    if first and not versions.at_least(version, first):
        return Support("unsupported", release, source, f"supported from {first}")
    note = entry.get("note") or (f"from {first}" if first else None)
    return Support(entry["status"], release, source, note)


def linux(gfx: str, rocm_version: str) -> Support:
    """Status of `gfx` in a Linux ROCm release ("6.3.42131" → the 6.3 row; 7.9-7.13 → the preview-stream row)."""
    version, base = versions.parse(rocm_version), base_gfx(gfx)
    row = _linux_row(version) if version and base else None
    if row is None:
        later = currency.newer("rocm", rocm_version) if base else None
        if later:
            return Support("newer", note=later)
        return Support("unknown", note="ROCm release not in the table" if base else "not a gfx target")
    entry = row["gfx"].get(base)
    if entry is None:
        return Support("unsupported", row["rocm"], row["source"], "not listed for this release")
    return _dated(_entry(entry), version, row["rocm"], row["source"])


def windows(gfx: str, hip_version: str) -> WindowsSupport:
    """Windows HIP SDK: the Runtime and HIP SDK columns for `gfx` in that release (e.g. gfx1032: runtime only on 6.x)."""
    version, base = versions.parse(hip_version), base_gfx(gfx)
    rows = load("support_windows.json")["releases"]
    row = next((r for r in rows if version and r["rocm"] == f"{version[0]}.{version[1]}"), None)
    if row is None or base is None:
        later = currency.newer("hip-sdk", hip_version) if base else None
        if later:
            return WindowsSupport("newer", "newer", note=later)
        return WindowsSupport("unknown", "unknown", note="HIP SDK release not in the table" if base else "not a gfx target")
    entry = row["gfx"].get(base)
    if entry is None:
        return WindowsSupport("unsupported", "unsupported", row["rocm"], row["source"], "not listed for this release")
    first = entry.get("from")
    if first and not versions.at_least(version, first):
        return WindowsSupport("unsupported", "unsupported", row["rocm"], row["source"], f"supported from {first}")
    return WindowsSupport(entry["runtime"], entry["sdk"], row["rocm"], row["source"], entry.get("note"))


def wsl(gfx: str, rocm_version: str) -> Support:
    """ROCm on WSL2: does this exact release ship a WSL build, and is the gfx on the WSL list."""
    table = load("support_windows.json")["wsl"]
    version, base = versions.parse(rocm_version), base_gfx(gfx)
    if version is None or base is None:
        return Support("unknown", note="not a version" if base else "not a gfx target")
    release = next((r for r in table["releases"] if versions.parse(r["rocm"]) == version), None)
    if release and not release["wsl_build"]:
        return Support("unsupported", release["rocm"], release["source"], "this ROCm release has no WSL build")
    entry = table["gfx"].get(base)
    if entry is None:
        return Support("unknown", note="GPU not in the WSL table (official WSL list not retrieved)")
    label = release["rocm"] if release else None
    return _dated(entry, version, label, entry["source"])


def first_linux_release(gfx: str) -> str | None:
    """The first Linux ROCm release that supports `gfx` (its point release where the row names one), else None."""
    base = base_gfx(gfx)
    for row in load("rocm_support_linux.json")["releases"]:
        entry = _entry(row["gfx"].get(base, "unsupported"))
        if entry["status"] in ("supported", "deprecated"):
            return entry.get("from") or row["rocm"]
    return None


def _last_linux_release(base: str) -> str | None:
    good = [row["rocm"] for row in load("rocm_support_linux.json")["releases"]
            if _entry(row["gfx"].get(base, "unsupported"))["status"] in ("supported", "deprecated")]
    return good[-1] if good else None


def closest_working_path(gfx: str, platform: str = "linux") -> list[dict]:
    """Ordered suggestions ({"kind", "text", "source"}) for running `gfx` on `platform` (linux, wsl, windows)."""
    base = base_gfx(gfx)
    if base is None:
        return []
    if platform == "windows":
        return _windows_paths(base)
    paths = []
    last = _last_linux_release(base)
    if last:
        paths.append({"kind": "rocm-release", "text": f"ROCm {last} lists {base}", "source": "rocm_support_linux.json"})
    value = overrides.recommended(base)
    if value and platform in ("linux", "wsl"):
        paths.append({"kind": "override", "text": f"HSA_OVERRIDE_GFX_VERSION={value} (runs {overrides.target_of(value)} code objects)", "source": "overrides.json"})
    ready = load("rocm_support_linux.json")["therock_status"]["linux"]
    if base in ready["release_ready"] + ready["build_only"]:
        level = "release-ready" if base in ready["release_ready"] else "build-only (runtime unverified)"
        paths.append({"kind": "therock", "text": f"TheRock nightly wheels ({level} for {base})", "source": "TR-SUP"})
    return paths


def _windows_paths(base: str) -> list[dict]:
    paths = []
    for row in reversed(load("support_windows.json")["releases"]):
        entry = row["gfx"].get(base)
        if entry and entry["runtime"] == "supported":
            scope = "runtime and HIP SDK" if entry["sdk"] == "supported" else "runtime only (no rocBLAS / math libraries)"
            paths.append({"kind": "hip-sdk", "text": f"HIP SDK {row['rocm']}: {scope}", "source": row["source"]})
            break
    status = load("support_windows.json")["therock_status"]
    if base in status["release_ready"] + status["build_only"]:
        paths.append({"kind": "therock", "text": f"TheRock win_amd64 nightly wheels for {base}", "source": "TR-SUP"})
    return paths


SOURCE_TABLES = ("rocm_support_linux.json", "support_windows.json", "torch_wheels.json", "overrides.json")


def source_name(key: str) -> str:
    """A source key of the tables ("TR-SUP", "overrides.json") as a reader names it: the document's title without
    its details, or the rocm-doctor table it comes from."""
    if key.endswith(".json"):
        return f"rocm-doctor's {key[:-5].replace('_', ' ')} table"
    for table in SOURCE_TABLES:
        entry = (load(table).get("sources") or {}).get(key)
        if isinstance(entry, dict) and entry.get("title"):
            title = str(entry["title"])
            return title.split(" (", 1)[0].split(": ", 1)[0]
    return key
