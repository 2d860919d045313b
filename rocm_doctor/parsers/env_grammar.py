"""The value grammars of data/env_catalog.json: whether a variable's value is one its library reads, and the exact
reason when it is not. Pure; never raises.

A grammar is a short string: bool, int (int:A..B, int:A..), enum:A|B|..., index-list, device-list, path, path-list,
text, kv-list, cublas-workspace, gfx-version. Device lists follow rocm_doctor.parsers.visible_devices (the runtimes
stop at the first entry they cannot read); a device named twice is reported here because the runtime shows it twice
(or, for CUDA, stops at the repeat), so the process sees fewer distinct GPUs than the list suggests.
"""

from __future__ import annotations

import re
from typing import Optional

from rocm_doctor.parsers.hsa_override import parse as parse_override
from rocm_doctor.parsers.visible_devices import entries, index, is_uuid

BOOL_WORDS = {"0", "1", "true", "false", "on", "off", "yes", "no", "y", "n", "enable", "enabled", "disable", "disabled"}
FALSY = {"", "0", "false", "off", "no", "n", "none"}
KINDS = ("bool", "int", "enum", "index-list", "device-list", "path", "path-list", "text", "kv-list",
         "cublas-workspace", "gfx-version")
_RANGE = re.compile(r"(-?\d+)?\.\.(-?\d+)?")
_WORKSPACE = re.compile(r"(:\d+:\d+)+")


def kind(grammar: str) -> str:
    """The grammar's kind ("int" for "int:1..32")."""
    return grammar.split(":", 1)[0]


def integer(text: str) -> Optional[int]:
    """An integer as C's strtol with base 0 reads a whole value (decimal, 0x hex), else None."""
    try:
        return int(text.strip(), 0)
    except ValueError:
        try:
            return int(text.strip(), 10)  # "010": C reads octal, Python's base 0 refuses; the number is what counts
        except ValueError:
            return None


def repeated(value: str) -> Optional[tuple[str, int, int]]:
    """The first device a list names twice, with both positions (1-based): ("0", 1, 2) for "0,0", else None.
    A UUID and its case-changed copy are the same device."""
    seen: dict[str, int] = {}
    for position, entry in enumerate(entries(value), 1):
        number = index(entry)
        key = str(number) if number is not None else entry.upper()
        if key in seen:
            return entry, seen[key], position
        seen[key] = position
    return None


def device_problem(value: str, gpu_count: Optional[int] = None, uuids: bool = True) -> Optional[str]:
    """Why a device list is not a plain selection of distinct existing devices, or None (an empty list hides every
    GPU: a visibility judgement, not a grammar one)."""
    found = entries(value)
    for position, entry in enumerate(found, 1):
        number = index(entry)
        if number is None and not (uuids and is_uuid(entry)):
            what = "a device index" + (" or a GPU UUID" if uuids else "")
            return f"entry {position} {entry!r} is not {what}: the runtime ignores it and every entry after it"
        if number is not None and number >= 0 and gpu_count is not None and number >= gpu_count:
            return (f"entry {position} names device {number}, but only {gpu_count} GPU(s) exist (indices 0 to "
                    f"{gpu_count - 1}): it and every entry after it are ignored")
    twice = repeated(value)
    if twice:
        entry, first, second = twice
        return f"device {entry} is listed twice (entries {first} and {second})"
    return None


def problem(grammar: str, value: str, gpu_count: Optional[int] = None) -> Optional[str]:
    """Why `value` is outside `grammar`, or None when it fits (an unknown grammar accepts everything)."""
    text = value if isinstance(value, str) else str(value)
    what, _, arg = grammar.partition(":")
    stripped = text.strip()
    if what == "bool":
        return None if stripped.lower() in BOOL_WORDS else f"{text!r} is not a boolean (0 or 1)"
    if what == "int":
        number = integer(text)
        if number is None:
            return f"{text!r} is not an integer"
        bounds = _RANGE.fullmatch(arg) if arg else None
        if bounds:
            low, high = (int(b) if b is not None else None for b in bounds.groups())
            if (low is not None and number < low) or (high is not None and number > high):
                return f"{number} is outside {low if low is not None else ''}..{high if high is not None else ''}"
        return None
    if what == "enum":
        allowed = arg.split("|")
        if stripped.lower() in {a.lower() for a in allowed}:
            return None
        return f"{text!r} is not one of {', '.join(allowed)}"
    if what in ("index-list", "device-list"):
        return device_problem(text, gpu_count, uuids=what == "device-list")
    if what == "path":
        return None if stripped else "the value is empty, not a path"
    if what == "kv-list":
        bad = [item for item in text.split(",") if item.strip() and ":" not in item]
        return f"{bad[0].strip()!r} is not a key:value pair" if bad else None
    if what == "cublas-workspace":
        return None if _WORKSPACE.fullmatch(stripped) else f"{text!r} is not :SIZE:COUNT (e.g. :4096:8)"
    if what == "gfx-version":
        return None if parse_override(text) is not None else f"{text!r} is not major.minor.stepping (e.g. 11.0.0)"
    return None  # text, path-list: anything goes


def is_on(value: str, on: Optional[dict] = None) -> bool:
    """Whether a logging or debugging switch set to `value` is on: `on` is {"above": N} or {"values": [...]};
    without it any value but an off word. An unreadable number counts as on (the library may read it so)."""
    text = (value or "").strip()
    if on and "values" in on:
        return text.lower() in {str(v).lower() for v in on["values"]}
    if on and "above" in on:
        number = integer(text)
        return number > on["above"] if number is not None else text.lower() not in FALSY
    return text.lower() not in FALSY
