"""Version, date, checksums, currency and sources of the embedded data (for `rocm-doctor data show`); the manifest
itself is written by the maintainer's `python tools/rebuild_data.py`, which dates it by its saved sources."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

from rocm_doctor import safefile

TABLES = ("gpu_catalog.json", "rocm_support_linux.json", "support_windows.json", "torch_wheels.json",
          "overrides.json", "error_signatures.json", "os_support.json", "amdgpu_firmware.json",
          "perf_switches.json", "legacy_values.json", "torch_family.json", "windows_layer.json",
          "amdgpu_driver_support.json", "nvidia_xid.json", "nvidia_arch.json",
          "nvidia_driver_cuda.json", "runtime_status.json", "env_catalog.json")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def current_as_of(table: dict) -> str | None:
    """The oldest read date among a table's verified sources that name the page's version or commit: a table is as
    current as its least recently checked source; None when no source of it is verified that way."""
    dates = [s["read"] for s in (table.get("sources") or {}).values()
             if isinstance(s, dict) and s.get("verified") is True and s.get("version")]
    return min(dates) if dates else None


def build_manifest(data_dir: Path, generated: str) -> dict:
    """The manifest of the tables in `data_dir`, dated `generated` (the newest read date of the saved sources)."""
    files = []
    for name in TABLES:
        raw = (data_dir / name).read_bytes()
        table = json.loads(raw)
        sources = [s for s in (table.get("sources") or {}).values() if isinstance(s, dict)]
        files.append({"name": name, "sha256": sha256(raw), "about": table.get("about", ""),
                      "current_as_of": current_as_of(table),
                      "sources_verified": [sum(s.get("verified") is True for s in sources), len(sources)]})
    return {"data_version": generated.replace("-", "."), "generated": generated, "files": files}


def write_manifest(data_dir: Path, generated: str) -> Path:
    path = data_dir / "manifest.json"
    safefile.write(path, json.dumps(build_manifest(data_dir, generated), indent=1) + "\n", stream=False)
    return path


def data_provenance() -> dict:
    """The embedded data (an installed `data update` bundle is update.py's business):
    {"data_version", "generated", "files": [{"name", "sha256", "about", "intact", "sources": {key: {...}}}]}."""
    root = resources.files("rocm_doctor.data")
    manifest = json.loads(root.joinpath("manifest.json").read_text(encoding="utf-8"))
    files = []
    for entry in manifest["files"]:
        raw = root.joinpath(entry["name"]).read_bytes()
        files.append(dict(entry, intact=sha256(raw) == entry["sha256"], sources=json.loads(raw).get("sources", {})))
    return {"data_version": manifest["data_version"], "generated": manifest["generated"], "files": files}
