"""The NVIDIA driver a CUDA build needs (data/nvidia_driver_cuda.json): the least driver per CUDA major under
minor version compatibility, the driver each CUDA toolkit release ships with, the CUDA release a driver version
belongs to, and the download.pytorch.org CUDA index a driver can run."""

from __future__ import annotations

import re

from rocm_doctor.knowledge import currency
from rocm_doctor.knowledge.store import load

TABLE = "nvidia_driver_cuda.json"
_INDEX = re.compile(r"^cu(\d+)(\d)$")


def driver_key(version: str | None) -> tuple[int, ...] | None:
    """"525.60.13" → (525, 60, 13), "580" → (580,); None for anything else."""
    parts = str(version or "").strip().split(".")
    return tuple(int(p) for p in parts) if parts and all(p.isdigit() for p in parts) else None


def cuda_key(cuda: str | None) -> tuple[int, int] | None:
    """"12.1" → (12, 1), "13.0.2" → (13, 0); None when it is not a CUDA version."""
    match = re.match(r"^\s*(\d+)\.(\d+)", str(cuda or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def _column(platform_os: str) -> str:
    """Windows and WSL run the Windows driver."""
    return "windows" if platform_os in ("windows", "wsl") else "linux"


def major_row(cuda: str | None) -> dict | None:
    key = cuda_key(cuda)
    return next((r for r in load(TABLE)["majors"] if key and r["cuda"] == str(key[0])), None)


def minimum(cuda: str | None, platform_os: str) -> str | None:
    """The least driver that runs a build of this CUDA major (minor version compatibility)."""
    return (major_row(cuda) or {}).get(_column(platform_os))


def release_driver(cuda: str | None, platform_os: str) -> str | None:
    """The driver the first toolkit release of this CUDA minor (its GA) shipped with: every feature of it works."""
    key = cuda_key(cuda)
    drivers = [r[_column(platform_os)] for r in load(TABLE)["toolkits"]
               if key and cuda_key(r["cuda"]) == key and r[_column(platform_os)]]
    return min(drivers, key=driver_key) if drivers else None


def newer_driver(version: str | None, platform_os: str) -> str | None:
    """"NVIDIA driver 610.20 is newer than rocm-doctor's data (which ends at 590.48.01)" for a driver past every
    driver the table's toolkits ship with: which CUDA it supports in full is then the driver's own answer."""
    have = driver_key(version)
    known = [r[_column(platform_os)] for r in load(TABLE)["toolkits"] if r[_column(platform_os)]]
    newest = max(known, key=driver_key) if known else None
    if have is None or newest is None or have <= driver_key(newest):
        return None
    return currency.words("NVIDIA driver", version, newest)


def cuda_of_driver(version: str | None, platform_os: str) -> str | None:
    """The newest CUDA minor release whose toolkit shipped with this driver or an older one: what it supports in
    full. None when the driver is older than every release in the table (or not a driver version)."""
    have = driver_key(version)
    if have is None:
        return None
    fitting = [cuda_key(r["cuda"]) for r in load(TABLE)["toolkits"]
               if r[_column(platform_os)] and driver_key(r[_column(platform_os)]) <= have]
    return "{}.{}".format(*max(fitting)) if fitting else None


def runs(driver: str | None, cuda: str | None, platform_os: str) -> bool | None:
    """Whether this driver can run a build of this CUDA at all (its major's minimum); None when unknown."""
    have, least = driver_key(driver), driver_key(minimum(cuda, platform_os))
    return None if have is None or least is None else have >= least


def index_cuda(index: str) -> str | None:
    """"cu128" → "12.8", "cu130" → "13.0"."""
    match = _INDEX.match(index)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def index_for_driver(driver_cuda: str | None) -> tuple[str, str] | None:
    """(index URL, CUDA) of the newest download.pytorch.org CUDA index in the driver's CUDA major, preferring one
    the driver supports in full (its CUDA at most the driver's) over one it runs under minor version
    compatibility; None when no torch index is in that major."""
    have = cuda_key(driver_cuda)
    wheels = load("torch_wheels.json")
    indexes = {i for r in wheels["releases"] for i in r["cuda_indexes"] + (r.get("cuda_experimental") or [])}
    same_major = sorted((cuda_key(index_cuda(i)), i) for i in indexes
                        if have and index_cuda(i) and cuda_key(index_cuda(i))[0] == have[0])
    if not same_major:
        return None
    full = [item for item in same_major if item[0] <= have]
    key, index = (full or same_major)[-1]
    return wheels["index_base"] + index, "{}.{}".format(*key)


def source(key: str) -> dict:
    return load(TABLE)["sources"].get(key) or {}
