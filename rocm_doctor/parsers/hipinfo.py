"""`hipInfo.exe` output -> devices (name, gfx, integrated or not, memory) and its failure lines. Pure; never raises.

Layouts: blocks starting `device#  N` with `key: value` lines (the separator line of dashes may be missing, e.g.
pasted output); TheRock builds on a machine where the driver enumerates nothing print
`[topology_sysfs_get_system_props] No WDDM adapters found.` and
`checkHipErrors() HIP API error = 0100 "no ROCm-capable device is detected" from file <...>, line N.`
"""

from __future__ import annotations

import re
from typing import Any

_DEVICE = re.compile(r"^\s*device#\s*(?P<index>\d+)\s*$")
_FIELD = re.compile(r"^\s*(?P<key>[A-Za-z][\w.-]*)\s*:\s*(?P<value>.*?)\s*$")
_HIP_ERROR = re.compile(r'HIP API error\s*=\s*(?P<code>\d+)\s*"(?P<message>[^"]*)"')
_SIZE = re.compile(r"^(?P<num>[\d.]+)\s*(?P<unit>[KMGT]?B)\b", re.I)
_GFX = re.compile(r"gfx[0-9a-f]+", re.I)
_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


def _number(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        pass
    match = _SIZE.match(value)
    if match:
        try:
            return int(float(match["num"]) * _UNITS[match["unit"].upper()])
        except ValueError:
            return value
    return value


def _device(index: int, fields: dict[str, str]) -> dict:
    arch = fields.get("gcnArchName") or ""
    gfx = _GFX.search(arch)
    integrated = fields.get("isIntegrated")
    return {
        "index": index,
        "name": fields.get("Name") or fields.get("name"),
        "gcn_arch_name": arch or None,
        "gfx": gfx.group(0).lower() if gfx else None,
        "is_integrated": None if integrated is None else integrated.strip() not in ("0", "false", ""),
        "total_global_mem_bytes": _number(fields["totalGlobalMem"]) if "totalGlobalMem" in fields else None,
        "multi_processor_count": _number(fields.get("multiProcessorCount", "")) if "multiProcessorCount" in fields else None,
        "pci_bus_id": _number(fields["pciBusID"]) if "pciBusID" in fields else None,
        "major": _number(fields["major"]) if "major" in fields else None,
        "minor": _number(fields["minor"]) if "minor" in fields else None,
        "fields": fields,
    }


def parse_hipinfo(text: str) -> dict:
    """{"devices": [...], "no_wddm_adapters": bool, "no_device": bool, "hip_errors": [{"code", "message"}],
    "error_lines": [...]}."""
    devices: list[dict] = []
    errors: list[dict] = []
    error_lines: list[str] = []
    no_wddm = False
    index: int | None = None
    fields: dict[str, str] = {}
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        if "No WDDM adapters found" in line:
            no_wddm = True
            if line.strip() not in error_lines:
                error_lines.append(line.strip())
            continue
        hip_error = _HIP_ERROR.search(line)
        if hip_error:
            errors.append({"code": hip_error["code"], "message": hip_error["message"]})
            error_lines.append(line.strip())
            continue
        device = _DEVICE.match(line)
        if device:
            if index is not None:
                devices.append(_device(index, fields))
            index, fields = int(device["index"]), {}
            continue
        if index is None:
            continue
        match = _FIELD.match(line)
        if match and match["key"] not in fields:
            fields[match["key"]] = match["value"]
    if index is not None:
        devices.append(_device(index, fields))
    no_device = any("no ROCm-capable device" in e["message"] or e["code"] == "0100" for e in errors)
    return {
        "devices": devices,
        "no_wddm_adapters": no_wddm,
        "no_device": no_device or (not devices and no_wddm),
        "hip_errors": errors,
        "error_lines": error_lines,
    }
