"""`rocm-smi` in its output forms → devices and abort lines. Pure; never raises.

Forms: `--json` (values are all strings), `--csv`, `--showproductname` (tab-separated `GPU[0] : Card series: ...`),
`--showhw` (Concise Hardware Info table, whose GFX VER column may read `gfx11002` for gfx1102) and the plain
Concise Info table. rocm-smi reads sysfs, so a device listed here says nothing about compute access.
"""

from __future__ import annotations

import csv
import io
import json
import re

from rocm_doctor.parsers import gfx as gfxlib
from rocm_doctor.parsers.garbled import impossible

_HEX_ONLY = re.compile(r"^0x[0-9a-fA-F]+$")
_PRODUCT_LINE = re.compile(r"^\s*GPU\[(?P<index>\d+)\]\s*:\s*(?P<key>[^:]+?)\s*:\s*(?P<value>.*?)\s*$")
_ROW = re.compile(r"^\s*(?P<index>\d+)\s+(?P<node>\d+)\s+(?P<did>0x[0-9a-fA-F]+),?\s+(?P<guid>\d+)(?P<rest>.*)$")
_GFX_TOKEN = re.compile(r"\bgfx[0-9a-z]+\b", re.IGNORECASE)
_BDF = re.compile(r"\b(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b")
_ABORT = re.compile(r"Exception caught|Assertion .* failed|Aborted|Traceback|ERROR:|Segmentation fault")

# JSON/CSV/product-line keys (lower-cased) → device fields.
_FIELDS = {
    "card series": "series",
    "card model": "model",
    "card vendor": "vendor",
    "card sku": "sku",
    "device id": "device_id",
    "device name": "series",
    "gfx version": "gfx_raw",
    "node id": "node",
    "guid": "guid",
    "pci bus": "bdf",
    "unique id": "unique_id",
    "vram total memory (b)": "vram_total_bytes",
    "subsystem id": "subsystem_id",
}


def _clean(value) -> str | None:
    text = str(value).strip() if value is not None else ""
    return None if text in ("", "N/A", "n/a", "Unknown") else text


def _device(index: int, values: dict) -> dict:
    """One device with its fields; `name` is the card series unless that is only a hex id (no pci.ids entry)."""
    device: dict = {"index": index}
    for key, value in values.items():
        field = _FIELDS.get(str(key).strip().lower())
        if field and _clean(value) is not None:
            device[field] = _clean(value)
    for field in ("node", "guid", "vram_total_bytes"):
        if field in device:
            device[field] = int(device[field]) if str(device[field]).isdigit() else None
    series, model = device.get("series"), device.get("model")
    device["name"] = series if series and not _HEX_ONLY.match(series) else None
    if "device_id" not in device:
        # Newer rocm-smi (the ones that print a Subsystem ID) put the PCI device id in Card Model; older ones fall
        # back to the hex device id in Card Series when pci.ids lacks the name.
        if model and "subsystem_id" in device and _HEX_ONLY.match(model):
            device["device_id"] = model
        elif series and _HEX_ONLY.match(series):
            device["device_id"] = series
    if "device_id" in device:
        device["device_id"] = _hex_id(device["device_id"])
    if "gfx_raw" in device:
        device["gfx"] = gfxlib.from_rocm_smi(device["gfx_raw"])
    return device


def _hex_id(text: str) -> str | None:
    try:
        return f"0x{int(text, 16):04x}"
    except ValueError:
        return None


def _card_index(name: str, fallback: int) -> int:
    digits = re.sub(r"\D", "", name)
    return int(digits) if digits else fallback


def _from_json(text: str) -> list[dict] | None:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    cards = [(k, v) for k, v in value.items() if str(k).lower().startswith("card") and isinstance(v, dict)]
    return [_device(_card_index(k, i), v) for i, (k, v) in enumerate(cards)]


def _from_csv(text: str) -> list[dict]:
    lines = [line for line in text.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.lower().startswith("device,")), None)
    if start is None:
        return []
    devices = []
    try:
        for i, row in enumerate(csv.DictReader(io.StringIO("\n".join(lines[start:])))):
            name = str(row.get("device") or "")
            if name.lower().startswith("card"):
                devices.append(_device(_card_index(name, i), {k: v for k, v in row.items() if k}))
    except csv.Error:
        pass
    return devices


def _from_text(text: str) -> list[dict]:
    by_index: dict[int, dict] = {}
    for line in text.splitlines():
        product = _PRODUCT_LINE.match(line)
        row = _ROW.match(line)
        if product:
            by_index.setdefault(int(product["index"]), {})[product["key"].strip()] = product["value"]
        elif row:
            values = by_index.setdefault(int(row["index"]), {})
            values.update({"Node ID": row["node"], "Device ID": row["did"].lower(), "GUID": row["guid"]})
            gfx = _GFX_TOKEN.search(row["rest"])
            bdf = _BDF.search(row["rest"])
            if gfx:
                values["GFX Version"] = gfx.group(0)
            if bdf:
                values["PCI Bus"] = bdf.group(0)
    return [_device(index, values) for index, values in sorted(by_index.items())]


def parse_rocm_smi(text: str | None) -> dict:
    """{format: json|csv|text|empty, devices: [{index, name, series, model, device_id, gfx, gfx_raw, node, ...}],
    errors: [abort/exception lines], garbled: [{what, lines}]}."""
    text = text or ""
    stripped = text.strip()
    errors = [line.strip() for line in text.splitlines() if _ABORT.search(line)]
    json_start = next((i for i, line in enumerate(text.splitlines()) if line.lstrip().startswith("{")), None)
    devices = None if json_start is None else _from_json("\n".join(text.splitlines()[json_start:]).strip())
    if devices is not None:
        fmt = "json"
    elif any(line.lower().startswith("device,") for line in stripped.splitlines()):
        fmt, devices = "csv", _from_csv(stripped)
    else:
        devices = _from_text(text)
        fmt = "text" if devices or "ROCm System Management Interface" in text else "empty"
    garbled = [entry for d in devices for entry in impossible(
        f"GPU {d['index']}", d.get("gfx_raw"), d.get("gfx"), d.get("vram_total_bytes"),
        f"VRAM Total Memory (B): {d.get('vram_total_bytes')}")]
    return {"format": fmt, "devices": devices, "errors": errors, "garbled": garbled}
