"""HSA_OVERRIDE_GFX_VERSION (and HSA_OVERRIDE_GFX_VERSION_<node>) read exactly as the runtime reads it. Pure.

libhsakmt, where it reads a GPU node's properties (ROCm/ROCR-Runtime libhsakmt/src/topology.c; earlier
ROCm/ROCT-Thunk-Interface src/topology.c; the same test for the per-node variable), accepts a value only when

    sscanf(envvar, "%u.%u.%u%c", &major, &minor, &step, &dummy) == 3

and then major <= 63, minor <= 255, step <= 255; otherwise it logs "HSA_OVERRIDE_GFX_VERSION %s is invalid" and
the GPU's node fails to initialise. With glibc that means:
- each `%u` skips leading white space (space, \\t, \\n, \\v, \\f, \\r), takes an optional `+` or `-` and one or more
  ASCII digits, and converts them like strtoul (an overflow saturates at ULONG_MAX, a minus negates modulo
  2**64) before the store into an unsigned int keeps the low 32 bits;
- each `.` must be the very next character (no white space before it);
- `%c` must find nothing: any character after the third number (a trailing space, `\\r` from a file with Windows
  line endings, `\\n`, a letter) makes sscanf return 4, and the value is rejected.
So ` 10.3.0`, `+10.3.0` and `10. 3.0` are accepted as 10.3.0; `10.3.0 `, `10.3.0\\r`, `10.3`, `１０.3.0` (full-width
digits) and `10 .3.0` are not.
"""

from __future__ import annotations

import re
from typing import Optional

VARIABLE = "HSA_OVERRIDE_GFX_VERSION"  # and VARIABLE_<node> for one KFD node
LIMITS = (63, 255, 255)  # major, minor, stepping, as libhsakmt checks them
_SPACE = " \t\n\v\f\r"  # isspace() in the C locale
_FIELD = rf"[{_SPACE}]*([+-]?)([0-9]+)"
_SCAN = re.compile(rf"{_FIELD}\.{_FIELD}\.{_FIELD}", re.ASCII)
_ULONG_MAX = 2**64 - 1


def names(node) -> list[str]:
    """The variables that set the override of the GPU at KFD node `node`, the one the runtime reads first first."""
    return ([f"{VARIABLE}_{node}"] if node is not None else []) + [VARIABLE]


def variables(env: dict) -> dict[str, str]:
    """Every override variable set in `env`: the plain one and the per-node ones."""
    return {k: v for k, v in env.items() if k == VARIABLE or re.fullmatch(VARIABLE + r"_\d+", k)}


def _unsigned(sign: str, digits: str) -> int:
    value = int(digits)
    if value > _ULONG_MAX:
        value = _ULONG_MAX
    elif sign == "-":
        value = -value % 2**64
    return value % 2**32


def scan(value: object) -> Optional[tuple[int, int, int]]:
    """The three numbers sscanf stores when it returns exactly 3, else None (the runtime rejects the value)."""
    if not isinstance(value, str):
        return None
    match = _SCAN.fullmatch(value)
    if match is None:
        return None
    parts = match.groups()
    return tuple(_unsigned(parts[i], parts[i + 1]) for i in (0, 2, 4))  # type: ignore[return-value]


def in_range(fields: tuple[int, int, int]) -> bool:
    return all(field <= limit for field, limit in zip(fields, LIMITS))


def parse(value: object) -> Optional[tuple[int, int, int]]:
    """The override libhsakmt applies (major, minor, stepping), or None when it rejects the value."""
    fields = scan(value)
    return fields if fields is not None and in_range(fields) else None
