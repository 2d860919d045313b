"""`nvidia-smi` query outputs → the live state of each GPU and the compute processes on it. Pure; never raises.

Reads `--query-gpu=... --format=csv` with or without the header and units (`noheader,nounits`), the same for
`--query-compute-apps`, and `-L` (GPUs and their MIG devices). A value nvidia-smi cannot give (`[N/A]`,
`[Not Supported]`, `[Unknown Error]`, ...) becomes None; a field name the driver does not know makes the whole
query fail with `Field "x" is not a valid field to query.`, which is kept as an error line.
"""

from __future__ import annotations

import re

from rocm_doctor.parsers.garbled import MAX_GPUS, bounded_gpus
from rocm_doctor.parsers.untrusted_text import shown

# The fields the probe asks for, in order (their names as nvidia-smi --help-query-gpu spells them).
GPU_FIELDS = (
    "index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total", "clocks.sm", "clocks.max.sm",
    "clocks.mem", "clocks.max.mem", "power.draw", "power.limit", "power.default_limit", "temperature.gpu",
    "clocks_throttle_reasons.active", "persistence_mode", "compute_mode", "mig.mode.current",
    "ecc.errors.uncorrected.volatile.total", "pcie.link.gen.current", "pcie.link.gen.max",
    "pcie.link.width.current", "pcie.link.width.max",
)
APP_FIELDS = ("gpu_uuid", "pid", "process_name", "used_memory")

# Other spellings of the same fields (the header of --format=csv uses the long or renamed ones).
_ALIASES = {
    "gpu_name": "name", "gpu_uuid": "uuid", "clocks.current.sm": "clocks.sm", "clocks.current.memory": "clocks.mem",
    "clocks.max.memory": "clocks.max.mem", "clocks_event_reasons.active": "clocks_throttle_reasons.active",
    "gpu.power.default_limit": "power.default_limit",
}
_APP_ALIASES = {"name": "process_name", "used_gpu_memory": "used_memory"}
_INTS = {"index", "utilization.gpu", "memory.used", "memory.total", "clocks.sm", "clocks.max.sm", "clocks.mem",
         "clocks.max.mem", "temperature.gpu", "ecc.errors.uncorrected.volatile.total", "pcie.link.gen.current",
         "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max"}
_FLOATS = {"power.draw", "power.limit", "power.default_limit"}
_UNITS = re.compile(r"\s*(%|MiB|MHz|W|C)\s*$")
_HEADER_UNIT = re.compile(r"\s*\[[^\]]*\]\s*$")
_ERROR = re.compile(r"is not a valid field|NVIDIA-SMI has failed|No devices were found|Unable to determine|"
                    r"Failed to initialize NVML|couldn't communicate|GPU is lost|Insufficient Permissions",
                    re.IGNORECASE)
_LIST_GPU = re.compile(r"^\s*GPU\s+(?P<index>\d+):\s*(?P<name>.*?)\s*\(UUID:\s*(?P<uuid>GPU-[0-9A-Fa-f-]+)\)")
_LIST_MIG = re.compile(r"^\s*MIG\s+(?P<profile>\S+)\s+Device\s+(?P<device>\d+):\s*\(UUID:\s*(?P<uuid>MIG-[^)\s]+)\)")

# NVML clock event (throttle) reason bits (nvml.h, nvmlClocksEventReasons).
REASONS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def _missing(value: str) -> bool:
    text = value.strip()
    return not text or text.startswith("[") or text.upper() in ("N/A", "NOT SUPPORTED", "UNKNOWN ERROR")


def _number(value: str, kind: type):
    text = _UNITS.sub("", value.strip())
    try:
        return kind(text) if kind is float else int(float(text)) if "." in text else int(text)
    except ValueError:
        return None


def _value(field: str, raw: str):
    if _missing(raw):
        return None
    if field in _INTS:
        return _number(raw, int)
    if field in _FLOATS:
        return _number(raw, float)
    if field == "clocks_throttle_reasons.active":
        try:
            return int(raw.strip(), 16)
        except ValueError:
            return None
    return raw.strip()


def _header(line: str, aliases: dict) -> list[str] | None:
    """The field names of a --format=csv header line, or None when the line is data."""
    names = [aliases.get(n, n) for n in (_HEADER_UNIT.sub("", c.strip()) for c in line.split(","))]
    known = {"timestamp", *GPU_FIELDS, *APP_FIELDS, *aliases, *aliases.values()}
    return names if names and names[0] in known else None


def _cells(line: str, width: int, free: int) -> list[str] | None:
    """Split a row into `width` cells; surplus commas belong to the free-text cell at position `free`."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) < width:
        return None
    extra = len(parts) - width
    return parts[:free] + [", ".join(parts[free:free + extra + 1])] + parts[free + extra + 1:]


def _rows(text: str, default: tuple, aliases: dict, free_name: str) -> tuple[list[dict], list[str]]:
    fields, rows, errors = list(default), [], []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        if _ERROR.search(line):
            errors.append(line.strip())
            continue
        header = _header(line, aliases)
        if header:
            fields = header
            continue
        cells = _cells(line, len(fields), fields.index(free_name) if free_name in fields else len(fields) - 1)
        if cells is not None:
            rows.append(dict(zip(fields, cells)))
    return rows, errors


def query_fields(argv, switch: str = "--query-gpu") -> tuple[str, ...]:
    """The fields an argv asked for (`--query-gpu=a,b`), in canonical names; GPU_FIELDS when it names none."""
    for arg in argv or ():
        if str(arg).startswith(switch + "="):
            return tuple(_ALIASES.get(f.strip(), f.strip()) for f in str(arg).split("=", 1)[1].split(",") if f.strip())
    return GPU_FIELDS


def invalid_field(text: str) -> str | None:
    """The field a failed query names as unknown to this driver (`Field "x" is not a valid field to query.`)."""
    found = re.search(r'Field "([^"]+)" is not a valid field', text or "")
    return found.group(1) if found else None


def parse_gpu_query(text: str, fields: tuple = GPU_FIELDS) -> dict:
    """{"gpus": [one dict per GPU, keyed by the canonical field names], "errors": [lines]}."""
    rows, errors = _rows(text, tuple(fields), _ALIASES, "name")
    gpus = []
    for row in rows:
        gpu = {field: _value(field, raw) for field, raw in row.items()}
        if isinstance(gpu.get("index"), int) or gpu.get("uuid"):
            gpus.append(gpu)
    gpus, garbled = bounded_gpus("nvidia-smi", gpus)
    return {"gpus": gpus, "errors": errors + [entry["what"] for entry in garbled]}


def parse_compute_apps(text: str) -> dict:
    """{"processes": [{gpu_uuid, pid, name, used_mib}], "errors": [...]}; a name nvidia-smi could not read (another
    PID namespace: `[Not Found]`) is None, and so is memory it cannot attribute (`[N/A]`, Windows WDDM)."""
    rows, errors = _rows(text, APP_FIELDS, _APP_ALIASES, "process_name")
    processes = []
    for row in rows:
        pid = _number(row.get("pid", ""), int)
        if pid is None:
            continue
        name = row.get("process_name", "")
        used = row.get("used_memory", "")
        processes.append({"gpu_uuid": None if _missing(row.get("gpu_uuid", "")) else row["gpu_uuid"].strip(),
                          "pid": pid, "name": None if _missing(name) else shown(name),  # another user's text
                          "used_mib": None if _missing(used) else _number(used, int)})
    return {"processes": processes, "errors": errors}


def parse_list(text: str) -> list[dict]:
    """`nvidia-smi -L` → [{index, name, uuid, mig: [{profile, device, uuid}]}]."""
    gpus: list[dict] = []
    for line in (text or "").splitlines():
        gpu = _LIST_GPU.match(line)
        if gpu:
            if len(gpus) == MAX_GPUS:
                break
            gpus.append({"index": int(gpu["index"]), "name": gpu["name"], "uuid": gpu["uuid"], "mig": []})
            continue
        mig = _LIST_MIG.match(line)
        if mig and gpus:
            gpus[-1]["mig"].append({"profile": mig["profile"], "device": int(mig["device"]), "uuid": mig["uuid"]})
    return gpus


def reasons(mask: int | None) -> list[str]:
    """The names of the clock event reasons set in an `clocks_throttle_reasons.active` bitmask."""
    if not isinstance(mask, int):
        return []
    named = [name for bit, name in REASONS.items() if mask & bit]
    unknown = mask & ~sum(REASONS)
    return named + ([f"0x{unknown:x}"] if unknown else [])
