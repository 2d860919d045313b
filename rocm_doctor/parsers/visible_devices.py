"""The *_VISIBLE_DEVICES grammar (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES,
GPU_DEVICE_ORDINAL): comma-separated device indices or UUIDs (GPU-…, MIG-…). The runtimes read the entries in order
and stop at the first one they cannot read, so one bad entry hides it and everything after it. Pure; never raises.
"""

from __future__ import annotations

import re
from typing import Optional

_INDEX = re.compile(r"-?[0-9]+")
_UUID = re.compile(r"(GPU-|MIG-|MIG-GPU-)?[0-9a-fA-F-]{6,}(/[0-9]+/[0-9]+)?")  # MIG-GPU-<uuid>/<gi>/<ci>: before R470


def entries(value: str) -> list[str]:
    """The entries of a value, spaces around each removed; an empty or blank value has none (it hides every GPU)."""
    return [e.strip() for e in value.split(",")] if value.strip() else []


def index(entry: str) -> Optional[int]:
    """The device index an entry names (negative ones included: -1 means none), or None for a UUID or garbage."""
    return int(entry) if _INDEX.fullmatch(entry) else None


def is_uuid(entry: str) -> bool:
    return bool(_UUID.fullmatch(entry))


def parse_visible(value: str) -> tuple[list[str], list[str]]:
    """(entries, malformed entries): a malformed entry is neither an index nor a UUID."""
    found = entries(value)
    return found, [e for e in found if index(e) is None and not is_uuid(e)]


def visible_order(devices: list[dict], env: dict, variables: tuple[str, ...]) -> list[dict]:
    """The devices in HIP's order after ROCR_VISIBLE_DEVICES (indices or UUIDs) and then HIP/CUDA_VISIBLE_DEVICES
    (indices into what ROCr left). An entry that names no device stops the list, as the runtimes do."""
    order = list(devices)
    for variable in variables:
        value = env.get(variable)
        if value is None:
            continue
        picked = []
        for entry in entries(value):
            number = index(entry)
            by_uuid = [d for d in order if d.get("uuid") == entry] if variable == "ROCR_VISIBLE_DEVICES" else []
            if number is not None and 0 <= number < len(order):
                picked.append(order[number])
            elif by_uuid:
                picked.append(by_uuid[0])
            else:
                break
        order = picked
    return order
