"""`rocm-smi --showuse --showmemuse --showpids` (JSON or text) → use per card and the KFD processes. Pure; never
raises.

JSON: {"card0": {"GPU use (%)": "0", "GPU Memory Allocated (VRAM%)": "0", ...}, "system": {"PID123": "name, gpus,
vram bytes, sdma, cu occupancy"}}. Text: the "KFD process information" table, tab- or space-separated, with
UNKNOWN where rocm-smi could not read a value. Its GPU(s) column is the number of GPUs a process uses, not which.
"""

from __future__ import annotations

import json
import re

from rocm_doctor.parsers.untrusted_text import shown

_CARD = re.compile(r"^card(\d+)$")
_PID_KEY = re.compile(r"^PID\s*(\d+)$")
_ROW = re.compile(r"^\s*(?P<pid>\d+)\s+(?P<name>.*?)\s+(?P<gpus>\d+)\s+(?P<vram>\d+|UNKNOWN)\s+"
                  r"(?P<sdma>\d+|UNKNOWN)\s+(?P<cu>\d+|UNKNOWN)\s*$")
_USE_KEYS = ("gpu use (%)",)
_MEM_PCT_KEYS = ("gpu memory allocated (vram%)", "gpu memory use (%)")
_USED_KEYS = ("vram total used memory (b)", "gpu memory use")
_TOTAL_KEYS = ("vram total memory (b)",)


def _int(value) -> int | None:
    try:
        return int(float(str(value).strip()))
    except (ValueError, TypeError):
        return None


def _first(values: dict, keys) -> int | None:
    for key in keys:
        if key in values and _int(values[key]) is not None:
            return _int(values[key])
    return None


def _process(pid: int, name: str, gpus, vram) -> dict:
    name = name.strip()  # another user's text: shown neutral and without its secrets
    return {"pid": pid, "name": shown(name) if name and name.upper() not in ("N/A", "UNKNOWN") else None,
            "gpu_count": _int(gpus), "vram_bytes": _int(vram)}


def _from_json(data: dict) -> dict:
    cards, processes = [], []
    for key, values in data.items():
        card = _CARD.match(str(key))
        if card and isinstance(values, dict):
            low = {str(k).strip().lower(): v for k, v in values.items()}
            cards.append({"index": int(card.group(1)), "gpu_use_pct": _first(low, _USE_KEYS),
                          "vram_pct": _first(low, _MEM_PCT_KEYS), "vram_used_bytes": _first(low, _USED_KEYS),
                          "vram_total_bytes": _first(low, _TOTAL_KEYS)})
    system = data.get("system") if isinstance(data.get("system"), dict) else {}
    for key, value in system.items():
        pid = _PID_KEY.match(str(key).strip())
        if pid and isinstance(value, str):
            parts = [p.strip() for p in value.split(",")]
            if len(parts) >= 5:  # a name with commas in it keeps them
                processes.append(_process(int(pid.group(1)), ", ".join(parts[:-4]), parts[-4], parts[-3]))
            elif len(parts) >= 3:
                processes.append(_process(int(pid.group(1)), parts[0], parts[1], parts[2]))
    return {"cards": sorted(cards, key=lambda c: c["index"]), "processes": processes}


def parse_rocm_smi_live(text: str) -> dict:
    """{"cards": [{index, gpu_use_pct, vram_pct, vram_used_bytes, vram_total_bytes}], "processes": [{pid, name,
    gpu_count, vram_bytes}]}."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        data = None
    if isinstance(data, dict):
        return _from_json(data)
    processes = []
    for line in (text or "").splitlines():
        row = _ROW.match(line.replace("\t", " "))
        if row:
            processes.append(_process(int(row["pid"]), row["name"], row["gpus"], row["vram"]))
    return {"cards": [], "processes": processes}
