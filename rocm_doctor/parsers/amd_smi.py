"""`amd-smi list` / `amd-smi static` (text or --json), the default summary table and `amd-smi version` → devices,
versions and abort lines. Pure; never raises.

amd-smi's JSON shape changed between releases (a bare list of per-GPU objects, or one under "gpu_data"); the text
form is an indented `KEY: value` tree per `GPU: N`. An unsupported APU may have no TARGET_GRAPHICS_VERSION.
"""

from __future__ import annotations

import json
import re

from rocm_doctor.parsers import gfx as gfxlib
from rocm_doctor.parsers.garbled import bounded_gpus, impossible

_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z0-9_][A-Za-z0-9_ ./()-]*?)\s*:\s?(?P<value>.*?)\s*$")
_TABLE_NAME = re.compile(r"^\|\s*(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?P<name>.*?)\s*\|")
_TABLE_IDS = re.compile(r"^\|\s*(?P<gpu>\d+)\s+(?P<hip>\d+|N/A)\s+(?P<oam>\d+|N/A)\s+(?P<mode>\S+)\s*\|(?P<rest>.*)$")
_MEM_USAGE = re.compile(r"(?P<used>\d+)/(?P<total>\d+)\s*MB")
_VERSIONS = {
    "amd_smi": re.compile(r"(?:AMD-SMI|AMDSMI Tool:)\s*(\S+)"),
    "library": re.compile(r"AMDSMI Library version:\s*(\S+)"),
    "rocm": re.compile(r"ROCm version:\s*(\S+)"),
    "amdgpu": re.compile(r"amdgpu version:\s*(\S+)"),
}
_ABORT = re.compile(r"Assertion .* failed|Aborted|Traceback|Segmentation fault|terminate called|Error code|ERROR")


def _scalar(value):
    if isinstance(value, dict) and "value" in value:  # {"value": 196288, "unit": "MB"}
        return value.get("value")
    if isinstance(value, str) and value.strip() in ("", "N/A", "n/a"):
        return None
    return value


def _int(value) -> int | None:
    value = _scalar(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    match = re.match(r"^\s*(\d+)", str(value)) if value is not None else None
    return int(match.group(1)) if match else None


def _tree(text: str) -> list[dict]:
    """The indented text form as one nested dict per `GPU: N`, keys lower-cased."""
    gpus: list[dict] = []
    stack: list[tuple[int, dict]] = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        indent, key, value = len(match["indent"].expandtabs()), match["key"].strip().lower(), match["value"]
        if indent == 0 and key == "gpu":
            gpus.append({"gpu": _int(value)})
            stack = [(0, gpus[-1])]
            continue
        while stack and len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        if not stack:
            continue
        parent = stack[-1][1]
        if value:
            parent[key] = value
        else:
            parent[key] = {}
            stack.append((indent, parent[key]))
    return gpus


def _json_gpus(value) -> list[dict] | None:
    if isinstance(value, dict):
        for key in ("gpu_data", "gpu_list", "gpus"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
        else:
            value = [value] if "gpu" in value else None
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, dict)]


def _device(raw: dict, position: int) -> dict:
    asic = raw.get("asic") if isinstance(raw.get("asic"), dict) else {}
    bus = raw.get("bus") if isinstance(raw.get("bus"), dict) else {}
    vram = raw.get("vram") if isinstance(raw.get("vram"), dict) else {}
    gfx_raw = _scalar(asic.get("target_graphics_version"))
    index = _int(raw.get("gpu"))
    return {
        "index": position if index is None else index,
        "bdf": _scalar(raw.get("bdf")) or _scalar(bus.get("bdf")),
        "uuid": _scalar(raw.get("uuid")),
        "kfd_id": _int(raw.get("kfd_id")),
        "node_id": _int(raw.get("node_id")),
        "name": _scalar(asic.get("market_name")),
        "gfx": gfxlib.from_rocm_smi(str(gfx_raw)) if gfx_raw else None,
        "device_id": _scalar(asic.get("device_id")),
        "vendor_id": _scalar(asic.get("vendor_id")),
        "compute_units": _int(asic.get("num_compute_units")),
        "vram_mb": _int(vram.get("size")),
        "vram_type": _scalar(vram.get("type")),
    }


def _table(text: str) -> list[dict]:
    """The default `amd-smi` summary: a `| BDF name |` line followed by `| GPU HIP-ID OAM-ID mode |`."""
    devices: list[dict] = []
    pending = None
    for line in text.splitlines():
        name = _TABLE_NAME.match(line)
        ids = _TABLE_IDS.match(line)
        if name:
            pending = {"bdf": name["bdf"].lower(), "name": name["name"] or None}
        elif ids and pending is not None:
            memory = _MEM_USAGE.search(ids["rest"])
            devices.append({
                "index": int(ids["gpu"]),
                **pending,
                "hip_id": _int(ids["hip"]),
                "partition_mode": ids["mode"],
                "vram_mb": int(memory["total"]) if memory else None,
            })
            pending = None
    return devices


def parse_amd_smi(text: str | None) -> dict:
    """{format: json|text|table|empty, devices: [{index, bdf, uuid, kfd_id, node_id, name, gfx, device_id, ...}],
    versions: {amd_smi, library, rocm, amdgpu}, errors: [abort lines], garbled: [{what, lines}]}."""
    text = text or ""
    stripped = text.strip()
    versions = {}
    for key, pattern in _VERSIONS.items():
        match = pattern.search(text)
        if match:
            versions[key] = match.group(1).rstrip("|")
    errors = [line.strip() for line in text.splitlines() if _ABORT.search(line)]
    raw = None
    if stripped[:1] in ("[", "{"):
        try:
            raw = _json_gpus(json.loads(stripped))
        except (json.JSONDecodeError, RecursionError):
            raw = None
    items: list = []
    if raw is not None:
        fmt, items = "json", raw
        devices = [_device(item, i) for i, item in enumerate(items)]
    elif _table(text):
        fmt, devices = "table", _table(text)
    else:
        items = _tree(text)
        devices = [_device(item, i) for i, item in enumerate(items)]
        fmt = "text" if devices else "empty"
    devices, garbled = bounded_gpus("amd-smi", devices)
    garbled += [entry for i, d in enumerate(devices) for entry in impossible(
        f"GPU {d['index']}", _gfx_raw(items[i]) if i < len(items) else None, d.get("gfx"),
        d["vram_mb"] * 1024 * 1024 if isinstance(d.get("vram_mb"), int) else None, f"VRAM {d.get('vram_mb')} MB")]
    return {"format": fmt, "devices": devices, "versions": versions, "errors": errors, "garbled": garbled}


def _gfx_raw(item) -> str | None:
    asic = item.get("asic") if isinstance(item, dict) and isinstance(item.get("asic"), dict) else {}
    value = _scalar(asic.get("target_graphics_version"))
    return str(value) if value else None
