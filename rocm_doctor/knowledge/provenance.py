"""Version, date, checksums and sources of the embedded data (for `rocm-doctor data show`); regenerates
data/manifest.json: `python -m rocm_doctor.knowledge.provenance [DATA_DIR]`."""

from __future__ import annotations

import datetime
import hashlib
import json
import sys
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


def build_manifest(data_dir: Path, generated: str | None = None) -> dict:
    generated = generated or datetime.date.today().isoformat()
    files = [{"name": name, "sha256": sha256((data_dir / name).read_bytes()),
              "about": json.loads((data_dir / name).read_text(encoding="utf-8")).get("about", "")} for name in TABLES]
    return {"data_version": generated.replace("-", "."), "generated": generated, "files": files}


def write_manifest(data_dir: Path, generated: str | None = None) -> Path:
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


if __name__ == "__main__":
    print(write_manifest(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(str(resources.files("rocm_doctor.data")))))
