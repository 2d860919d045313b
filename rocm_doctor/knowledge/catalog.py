"""GPU catalog (data/gpu_catalog.json): look a device up by gfx target, PCI device id or marketing name, and read
its memory and peak dense throughput."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers.gfx import base_gfx

_NOISE = {"amd", "ati", "nvidia", "radeon", "geforce", "instinct", "tm", "graphics", "gpu", "the"}


@dataclass(frozen=True)
class GPU:
    id: str
    vendor: str
    names: tuple
    gfx: str
    arch: str
    kind: str
    vram_gb: float | None
    bandwidth_gbs: float | None
    peak_tflops: dict
    source: str
    note: str | None = None


def _table() -> dict:
    return load("gpu_catalog.json")


def _gpu(row: dict) -> GPU:
    return GPU(row["id"], row["vendor"], tuple(row["names"]), row["gfx"], row["arch"], row["kind"],
               row["vram_gb"], row["bandwidth_gbs"], dict(row["peak_tflops"]), row["figures_source"], row.get("note"))


def gpus() -> list[GPU]:
    return [_gpu(row) for row in _table()["gpus"]]


def target(gfx: str) -> dict | None:
    """The gfx target row (architecture, codename, KFD version, PCI id ranges), features and prefixes ignored."""
    base = base_gfx(gfx)
    return next((row for row in _table()["targets"] if row["gfx"] == base), None)


def by_gfx(gfx: str) -> list[GPU]:
    base = base_gfx(gfx) or (gfx or "").strip().lower()
    return [gpu for gpu in gpus() if gpu.gfx == base]


def _device_id(value) -> int | None:
    try:
        return int(value, 16) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        return None


def _in(device: int, spec: str) -> bool:
    low, _, high = spec.partition("-")
    return int(low, 16) <= device <= int(high or low, 16)


def gfx_for_pci_id(device_id) -> str | None:
    """AMD PCI device id (0x73ff, "73FF", "0x73ff") → its gfx target, or None."""
    device = _device_id(device_id)
    if device is None:
        return None
    return next((row["gfx"] for row in _table()["targets"] if any(_in(device, spec) for spec in row["pci_device_ids"])), None)


def by_pci_id(device_id) -> list[GPU]:
    """GPUs known by that exact device id, else every catalogued GPU of the id's gfx target."""
    device = _device_id(device_id)
    if device is None:
        return []
    exact = [_gpu(row) for row in _table()["gpus"] if any(_in(device, spec) for spec in row.get("pci_device_ids", ()))]
    return exact or by_gfx(gfx_for_pci_id(device) or "")


def _tokens(name: str) -> tuple:
    words = re.sub(r"[^a-z0-9]+", " ", (name or "").lower().replace("(tm)", " ")).split()
    return tuple(word for word in words if word not in _NOISE)


def by_name(name: str) -> GPU | None:
    """Marketing or driver name ("AMD Radeon RX 7900 XTX", "NVIDIA H200", "RX 6650 XT") → GPU, or None when unknown
    or ambiguous (e.g. the generic "AMD Radeon Graphics")."""
    query = _tokens(name)
    if not query:
        return None
    index = {_tokens(alias): row for row in _table()["gpus"] for alias in row["names"]}
    if query in index:
        return _gpu(index[query])
    subsets = [(len(key), row["id"]) for key, row in index.items() if key and set(key) <= set(query)]
    best = max((size for size, _ in subsets), default=0)
    winners = {gpu_id for size, gpu_id in subsets if size == best}
    if len(winners) == 1:
        return next(_gpu(row) for row in _table()["gpus"] if row["id"] in winners)
    close = difflib.get_close_matches(" ".join(query), [" ".join(key) for key in index], n=1, cutoff=0.9)
    return _gpu(index[tuple(close[0].split())]) if close else None


def peak(device_name: str) -> dict | None:
    """Peak figures for a torch device name: {"id", "tflops": {fp32, fp16, bf16, ...}, "bandwidth_gbs", "vram_gb", "source"}."""
    gpu = by_name(device_name)
    if gpu is None:
        return None
    return {"id": gpu.id, "tflops": gpu.peak_tflops, "bandwidth_gbs": gpu.bandwidth_gbs, "vram_gb": gpu.vram_gb, "source": gpu.source}
