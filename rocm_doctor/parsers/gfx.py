"""gfx target names in every spelling the AMD tools use, reduced to one form ("gfx1032"). Pure; never raises.

Sources of the rules: LLVM target ids (`gfx942:sramecc+:xnack-`, generic `gfx10-3-generic`), KFD's
`gfx_target_version` (major*10000 + minor*100 + stepping, decimal), HSA_OVERRIDE_GFX_VERSION
(`major.minor.stepping` as libhsakmt scans it: parsers/hsa_override.py) and rocm-smi's renderings
(see `from_rocm_smi`).
"""

from __future__ import annotations

import re

from rocm_doctor.parsers import hsa_override

ISA_PREFIX = "amdgcn-amd-amdhsa--"
_TARGET = re.compile(r"^gfx(?:[0-9]{1,2}[0-9a-f]{2}|[0-9]{1,2}(?:-[0-9a-f])?-generic)$")
_FEATURE = re.compile(r"^(?P<name>[a-z0-9_-]+)(?P<state>[+-])$")

# Targets that only ship as integrated GPUs (APUs sharing system memory).
INTEGRATED_TARGETS = frozenset(
    {"gfx902", "gfx90c", "gfx1013", "gfx1033", "gfx1035", "gfx1036", "gfx1103",
     "gfx1150", "gfx1151", "gfx1152", "gfx1153"}
)


def split_target_id(text: str | None) -> tuple[str | None, dict[str, str]]:
    """`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` → ("gfx942", {"sramecc": "+", "xnack": "-"})."""
    if not isinstance(text, str):
        return None, {}
    text = text.strip().lower()
    if text.startswith(ISA_PREFIX):
        text = text[len(ISA_PREFIX):]
    base, *parts = text.split(":")
    if not _TARGET.match(base):
        return None, {}
    features = {}
    for part in parts:
        match = _FEATURE.match(part.strip())
        if match:
            features[match["name"]] = match["state"]
    return base, features


def base_gfx(text: str | None) -> str | None:
    """The target without features or ISA prefix, or None if `text` names no gfx target."""
    return split_target_id(text)[0]


def target_id(text: str | None) -> str | None:
    """The full target id without the ISA prefix (`gfx90c:xnack-`), or None."""
    base, features = split_target_id(text)
    if base is None:
        return None
    return ":".join([base] + [f"{name}{state}" for name, state in features.items()])


def is_generic(gfx: str | None) -> bool:
    return bool(gfx) and gfx.endswith("-generic")


def _name(major: int, minor: int, stepping: int) -> str | None:
    if not (6 <= major <= 99 and 0 <= minor <= 15 and 0 <= stepping <= 15):
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


def from_kfd_version(value) -> str | None:
    """KFD gfx_target_version (100302 → gfx1032, 90010 → gfx90a); 0 (a CPU node) and junk → None."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    if number <= 0:
        return None
    return _name(number // 10000, number // 100 % 100, number % 100)


def from_override(text: str | None) -> str | None:
    """HSA_OVERRIDE_GFX_VERSION `10.3.0` → gfx1030, `9.0.10` → gfx90a; what the runtime rejects → None."""
    fields = hsa_override.parse(text)
    return _name(*fields) if fields else None


def to_override(gfx: str | None) -> str | None:
    """A gfx target as an HSA_OVERRIDE_GFX_VERSION value: gfx1032 → `10.3.2`, gfx90a → `9.0.10`; else None."""
    base = base_gfx(gfx)
    if base is None or is_generic(base):
        return None
    digits = base[3:]
    return f"{int(digits[:-2])}.{int(digits[-2], 16)}.{int(digits[-1], 16)}"


def from_rocm_smi(text: str | None) -> str | None:
    """A gfx as rocm-smi printed it, in any of its versions' renderings.

    rocm_smi_lib 6.1-6.2 (`rsmi_get_gfx_target_version`) printed major*100 + minor*10 + stepping, decimal, and
    multiplied major by 10 more when minor was 0: gfx1102 → `gfx11002`, gfx1100 → `gfx11000`, gfx90a → `gfx9010`,
    gfx906 → `gfx9006`, while gfx1036 and gfx942 came out right. Before 6.1 it printed the raw KFD number
    (`gfx110002`); later versions print the real name. Names that already parse are taken as they are.
    """
    raw = (text or "").strip().lower()
    if base_gfx(raw) and not raw[3:].isdigit():
        return base_gfx(raw)
    digits = raw[3:] if raw.startswith("gfx") else raw
    if not (digits.isascii() and digits.isdigit()):  # str.isdigit() also takes "²", which int() refuses
        return None
    number = int(digits)
    if len(digits) == 3 or (len(digits) == 4 and digits[0] == "1"):
        return base_gfx("gfx" + digits)  # already the real name: gfx942, gfx1036, gfx1151
    if len(digits) == 4 or (len(digits) == 5 and digits[0] == "1"):
        return _name(number // 1000, 0, number % 1000)  # the minor-0 rendering: 9010, 11002
    if len(digits) in (5, 6):
        return from_kfd_version(number)
    return None
