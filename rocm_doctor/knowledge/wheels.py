"""Which PyTorch wheel index builds a gfx target natively (download.pytorch.org for Linux, else AMD TheRock's
multi-arch index with the target's device extra), which CUDA index has a torch release, and whether an arch list
covers a target."""

from __future__ import annotations

import re

from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers.gfx import base_gfx, is_generic


def latest_rocm_index() -> str:
    table = load("torch_wheels.json")
    return table["index_base"] + table["releases"][-1]["rocm_indexes"][-1]


def cpu_index() -> str:
    """The download.pytorch.org index of torch built for the CPU only: what runs where no GPU was found."""
    table = load("torch_wheels.json")
    return table["index_base"] + table["cpu_index"]["index"]


def cuda_index(torch_version: str | None = None) -> str:
    """The download.pytorch.org CUDA index that builds this torch release ("2.9.1+cpu" -> its newest Stable CUDA,
    cu128); a release missing from the table (or none given) gets the newest release's: an index has only the torch
    releases built for its CUDA version."""
    table = load("torch_wheels.json")
    match = re.match(r"\s*(\d+\.\d+)", str(torch_version or ""))
    rows = table["releases"]
    row = next((r for r in rows if match and r["torch"] == match.group(1)), rows[-1])
    return table["index_base"] + row["cuda_indexes"][-1]


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
    return [row["torch"] for row in load("torch_wheels.json")["releases"] if index in row["rocm_indexes"]]


def needs_beside(index: str) -> dict | None:
    """What a download.pytorch.org ROCm index's wheels need installed beside them ({"rocm": "bundled"} or
    {"rocm": "separate", "requirement", "advice"}), or None when not recorded."""
    entry = load("torch_wheels.json")["index_archs"].get(index.rstrip("/").rsplit("/", 1)[-1])
    return dict(entry["needs"]) if entry and entry.get("needs") else None


def _with_needs(index: str, why: str) -> str:
    needs = needs_beside(index) or {}
    return f"{why}; {needs['advice']}" if needs.get("rocm") == "separate" else why


def therock_multi_arch(gfx: str) -> dict | None:
    """AMD TheRock's multi-arch index for `gfx` and its pip requirements ({"index", "channel", "torch", "rocm"}): the
    stable index where it publishes the target, else the nightly one; None if TheRock has no device extra for it."""
    multi = load("torch_wheels.json")["therock"]["multi_arch"]
    base = base_gfx(gfx)
    if base not in multi["targets"]:
        return None
    channel = "stable" if base in multi["stable_targets"] else "nightly"
    return {"index": multi[channel], "channel": channel, "torch": multi["torch_spec"].format(gfx=base),
            "rocm": multi["rocm_spec"].format(gfx=base)}


def windows_options() -> dict:
    """Where Windows PyTorch for AMD comes from (download.pytorch.org has none)."""
    return dict(load("torch_wheels.json")["windows"])


def amd_torch_index(gfx: str | None, platform_os: str) -> tuple[str, str, list[str]]:
    """(index URL, why, requirements) of the torch build to install for an AMD GPU with this gfx target on this OS.

    Linux: the newest download.pytorch.org ROCm index whose wheels contain the gfx, else AMD's TheRock multi-arch
    index with the gfx's device extra, else the newest ROCm index (which then lacks the gfx: gfx-not-in-torch-arch-list
    says what next). Windows and WSL use AMD's multi-arch wheels; TheRock's per-family indexes are no longer built.
    """
    multi = therock_multi_arch(gfx) if gfx else None
    if platform_os == "linux":
        native = native_indexes(gfx) if gfx else []
        if native:
            index = load("torch_wheels.json")["index_base"] + native[-1]
            return index, _with_needs(index, f"the newest PyTorch ROCm wheels that build {gfx}"), ["torch"]
    if multi:
        why = f"AMD's TheRock {multi['channel']} multi-arch wheels, which build {gfx} natively"
        return multi["index"], why, [multi["torch"]]
    if platform_os == "linux":
        why = "the newest PyTorch ROCm wheels" + (f" (they have no code for {gfx})" if gfx else "")
        return latest_rocm_index(), _with_needs(latest_rocm_index(), why), ["torch"]
    stable = load("torch_wheels.json")["therock"]["multi_arch"]["stable"]
    return stable, "AMD's multi-arch ROCm wheels (pick the device extra for your GPU)", ["torch"]
