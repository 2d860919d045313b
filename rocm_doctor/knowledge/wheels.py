"""Which PyTorch wheel index builds a gfx target natively (download.pytorch.org for Linux, AMD TheRock per family or
multi-arch, Windows), whether an arch list covers a target, and the exact pip command for the target interpreter."""

from __future__ import annotations

import shlex

from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers.gfx import base_gfx, is_generic


def latest_rocm_index() -> str:
    table = load("torch_wheels.json")
    return table["index_base"] + table["releases"][-1]["rocm_index"]


def cuda_index() -> str:
    table = load("torch_wheels.json")
    return table["index_base"] + table["cuda_default_index"]


def pip_install_command(python: str, index_url: str, packages: str = "torch") -> str:
    quoted = f'"{python}"' if " " in python else shlex.quote(python)
    return f"{quoted} -m pip install --force-reinstall {packages} --index-url {index_url}"


def covers(arch_list, gfx: str) -> bool:
    """Whether a torch arch list (["gfx90a:sramecc+:xnack-", "gfx11-generic", ...]) has code for `gfx`."""
    base = base_gfx(gfx)
    if base is None:
        return False
    generic = load("torch_wheels.json")["generic_targets"]["targets"]
    for arch in arch_list or ():
        entry = base_gfx(arch)
        if entry == base or (entry and is_generic(entry) and base in generic.get(entry, ())):
            return True
    return False


def index_archs(index: str) -> list[str] | None:
    """The gfx targets in a download.pytorch.org index's wheels ("rocm6.4"), or None when not recorded."""
    entry = load("torch_wheels.json")["index_archs"].get(index.rstrip("/").rsplit("/", 1)[-1])
    return list(entry["archs"]) if entry else None


def native_indexes(gfx: str) -> list[str]:
    """download.pytorch.org ROCm indexes (Linux) whose wheels contain `gfx`, oldest first."""
    table = load("torch_wheels.json")
    return [index for index, entry in table["index_archs"].items() if covers(entry["archs"], gfx)]


def torch_versions(index: str) -> list[str]:
    """torch releases built against a download.pytorch.org ROCm index (from the release matrix)."""
    return [row["torch"] for row in load("torch_wheels.json")["releases"] if row["rocm_index"] == index]


def therock_family(gfx: str) -> dict | None:
    """The AMD TheRock per-family index that builds `gfx` ({"family", "targets", "index", "windows", ...}), or None."""
    therock = load("torch_wheels.json")["therock"]
    base = base_gfx(gfx)
    family = next((fam for fam in therock["families"] if base in fam["targets"]), None)
    return dict(family, index=therock["index_base"] + family["family"] + "/") if family else None


def therock_multi_arch(gfx: str, stable: bool = False) -> dict | None:
    """The multi-arch index and the pip requirement for `gfx` ({"index", "torch", "rocm"}), or None if not a TheRock target."""
    multi = load("torch_wheels.json")["therock"]["multi_arch"]
    base = base_gfx(gfx)
    if base not in multi["targets"]:
        return None
    return {"index": multi["stable" if stable else "nightly"], "torch": multi["torch_spec"].format(gfx=base),
            "rocm": multi["rocm_spec"].format(gfx=base)}


def windows_options() -> dict:
    """Where Windows PyTorch for AMD comes from (download.pytorch.org has none)."""
    return dict(load("torch_wheels.json")["windows"])


def amd_torch_index(gfx: str | None, platform_os: str) -> tuple[str, str]:
    """(index URL, why) of the torch build to install for an AMD GPU with this gfx target on this OS.

    Linux: the newest download.pytorch.org ROCm index whose wheels contain the gfx, else AMD's TheRock index for
    its family, else the newest ROCm index (which then lacks the gfx: gfx-not-in-torch-arch-list says what next).
    Windows and WSL use AMD's wheels: TheRock's family index, else the multi-arch index.
    """
    family = therock_family(gfx) if gfx else None
    if platform_os == "linux":
        native = native_indexes(gfx) if gfx else []
        if native:
            return load("torch_wheels.json")["index_base"] + native[-1], f"the newest PyTorch ROCm wheels that build {gfx}"
        if family:
            return family["index"], f"AMD's TheRock wheels for {family['family']}, which build {gfx} natively"
        return latest_rocm_index(), "the newest PyTorch ROCm wheels" + (f" (they have no code for {gfx})" if gfx else "")
    if family and family.get("windows", False):
        return family["index"], f"AMD's TheRock wheels for {family['family']}"
    multi = load("torch_wheels.json")["therock"]["multi_arch"]
    return multi["stable"], "AMD's multi-arch ROCm wheels (pick the extra for your GPU family)"
