"""`amd-smi metric` and `amd-smi process` (JSON or plain text) → live state and processes per GPU. Pure; never raises.

JSON comes as a list of per-GPU objects, or (amd-smi 26.x) wrapped as {"gpu_data": [...]}; values are
{"value": v, "unit": u}, bare numbers, or "N/A". The plain form is the same tree written as indented `KEY: value`
lines under `GPU: N`, so both are read into one tree. `amd-smi process` lists a process under each GPU it uses;
the name is "N/A" for another user's process unless run as root.
"""

from __future__ import annotations

import json
import re

from rocm_doctor.parsers.garbled import MAX_GPUS
from rocm_doctor.parsers.untrusted_text import shown

_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z0-9_ ]+?)\s*:\s*(?P<value>.*?)\s*$")
_QUANTITY = re.compile(r"^(?P<value>-?[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[A-Za-z/%°]*)")
_MIB_PER = {"b": 1 / 2**20, "kb": 1 / 1024, "kib": 1 / 1024, "mb": 1, "mib": 1, "gb": 1024, "gib": 1024,
            "tb": 2**20, "tib": 2**20}


def quantity(value) -> tuple[float | None, str]:
    """(number, unit) of {"value", "unit"}, a number, or text such as "20 W" / "10.1 GB"; (None, "") otherwise."""
    if isinstance(value, dict):
        number, unit = quantity(value.get("value"))
        return number, str(value.get("unit") or unit)
    if isinstance(value, bool):
        return None, ""
    if isinstance(value, (int, float)):
        return float(value), ""
    match = _QUANTITY.match(str(value or "").strip())
    return (float(match["value"]), match["unit"]) if match else (None, "")


def mib(value, default_unit: str = "MB") -> float | None:
    number, unit = quantity(value)
    factor = _MIB_PER.get((unit or default_unit).lower())
    return None if number is None or factor is None else number * factor


def _number(value) -> float | None:
    return quantity(value)[0]


def _first(*values) -> float | None:
    return next((n for n in map(_number, values) if n is not None), None)


def _text(value) -> str | None:
    text = str(value).strip() if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""
    return None if not text or text.upper() == "N/A" else text


def _tree(text: str) -> list[dict]:
    """The plain form as [{"gpu": N, key: value or subtree}]; keys lower-cased; a repeated key becomes a list."""
    gpus: list[dict] = []
    stack: list[tuple[int, dict]] = []
    for line in (text or "").splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        indent, key, value = len(match["indent"].expandtabs()), match["key"].strip().lower(), match["value"]
        if key == "gpu" and indent == 0:
            gpus.append({"gpu": _number(value)})
            stack = [(-1, gpus[-1])]
            continue
        if not stack:
            continue
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        node: object = value if value else {}
        if key in parent:
            existing = parent[key]
            parent[key] = (existing if isinstance(existing, list) else [existing]) + [node]
        else:
            parent[key] = node
        if isinstance(node, dict):
            stack.append((indent, node))
    return gpus


def _records(text: str) -> list:
    try:
        data = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return _tree(text)
    if isinstance(data, dict):
        data = data.get("gpu_data", [data])
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def _get(tree, *path):
    for key in path:
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree


def parse_metric(text: str) -> list[dict]:
    """Per GPU: index, gfx_activity (%), vram_used_mib, vram_total_mib, power_w, throttle_status, gfx_clock_mhz,
    gfx_clock_max_mhz, mem_clock_mhz, mem_clock_max_mhz, temperature_c (hotspot, else edge), pcie_width,
    pcie_speed_gts, ecc_uncorrectable, perf_level (lower case without the AMDSMI_DEV_PERF_LEVEL_ prefix)."""
    out = []
    for record in _records(text):
        index = _number(record.get("gpu"))
        if index is None:
            continue
        if len(out) == MAX_GPUS:
            break
        perf = _text(record.get("perf_level"))
        throttle = _text(_get(record, "power", "throttle_status"))
        out.append({
            "index": int(index),
            "gfx_activity": _number(_get(record, "usage", "gfx_activity")),
            "vram_used_mib": mib(_get(record, "mem_usage", "used_vram")),
            "vram_total_mib": mib(_get(record, "mem_usage", "total_vram")),
            "power_w": _number(_get(record, "power", "socket_power")),
            "throttle_status": throttle.lower() if throttle else None,
            "gfx_clock_mhz": _number(_get(record, "clock", "gfx_0", "clk")),
            "gfx_clock_max_mhz": _number(_get(record, "clock", "gfx_0", "max_clk")),
            "mem_clock_mhz": _number(_get(record, "clock", "mem_0", "clk")),
            "mem_clock_max_mhz": _number(_get(record, "clock", "mem_0", "max_clk")),
            "temperature_c": _first(_get(record, "temperature", "hotspot"), _get(record, "temperature", "edge")),
            "pcie_width": _number(_get(record, "pcie", "width")),
            "pcie_speed_gts": _number(_get(record, "pcie", "speed")),
            "ecc_uncorrectable": _number(_get(record, "ecc", "total_uncorrectable_count")),
            "perf_level": perf.lower().removeprefix("amdsmi_dev_perf_level_") if perf else None,
        })
    return out


def _name(value) -> str | None:
    """A process's name: another user's text, shown neutral and without its secrets."""
    name = _text(value)
    return shown(name) if name else name


def _process(gpu, info: dict) -> dict | None:
    pid = _number(info.get("pid"))
    if pid is None:
        return None
    vram = mib(_get(info, "memory_usage", "vram_mem"), "B")
    return {"gpu": None if gpu is None else int(gpu), "pid": int(pid), "name": _name(info.get("name")),
            "vram_mib": vram, "mem_mib": mib(info.get("mem_usage", info.get("mem")), "B")}


def parse_process(text: str) -> list[dict]:
    """[{gpu, pid, name, vram_mib, mem_mib}], one per process and GPU; "No running processes detected" gives none."""
    out = []
    for record in _records(text):
        if "pid" in record:  # one record per process, its GPUs inside (amd-smi process --sort-by-pid)
            for use in record.get("gpus") if isinstance(record.get("gpus"), list) else []:
                if isinstance(use, dict):
                    out.append(_process(_number(use.get("gpu_index")), {**use, "pid": record["pid"],
                                                                         "name": record.get("name")}))
            continue
        listed = record.get("process_list", record.get("process_info"))
        for item in listed if isinstance(listed, list) else [listed]:
            info = item.get("process_info", item) if isinstance(item, dict) else None
            for one in info if isinstance(info, list) else [info]:
                if isinstance(one, dict):
                    out.append(_process(_number(record.get("gpu")), one))
    return [p for p in out if p]
