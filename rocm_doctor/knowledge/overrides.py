"""HSA_OVERRIDE_GFX_VERSION: the conventional value for a gfx target, parsing and validating a value, and whether a
value belongs to the target's family (data/overrides.json)."""

from __future__ import annotations

from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers import hsa_override
from rocm_doctor.parsers.gfx import base_gfx, from_override, to_override

_TRAILING = {"\r": "a carriage return (the file that sets it has Windows line endings)", "\n": "a line break",
             " ": "a space", "\t": "a tab"}


def parse(value) -> tuple[tuple | None, str | None]:
    """"10.3.0" → ((10, 3, 0), None); what libhsakmt rejects → (None, why). The grammar is libhsakmt's sscanf
    (parsers/hsa_override.py): leading white space and a `+` pass, anything after the stepping does not."""
    text = value if isinstance(value, str) else str(value or "")
    fields = hsa_override.scan(text)
    if fields is None:
        return None, f"{text!r} is not MAJOR.MINOR.STEPPING (three decimal numbers, e.g. 10.3.0){_hint(text)}"
    limits = load("overrides.json")["format"]["limits"]
    if fields[0] > limits["major"] or fields[1] > limits["minor"] or fields[2] > limits["stepping"]:
        return None, f"{text!r} is out of range (major <= {limits['major']}, minor and stepping <= 255)"
    return fields, None


def _hint(text: str) -> str:
    stripped = text.rstrip(" \t\r\n")
    if stripped != text and hsa_override.scan(stripped) is not None:
        return f"; the runtime rejects it because of the trailing {_TRAILING.get(text[len(stripped)], 'white space')}"
    gfx = base_gfx(text.strip()) or base_gfx("gfx" + text.strip())
    return f"; for {gfx} write {to_override(gfx)}" if gfx and to_override(gfx) else ""


def target_of(value) -> str | None:
    """The gfx the runtime will pretend to be: "10.3.0" → gfx1030, "9.0.10" → gfx90a; malformed → None."""
    fields, _ = parse(value)
    return from_override(".".join(map(str, fields))) if fields else None


def _families(gfx: str, include_weak: bool) -> list[dict]:
    base = base_gfx(gfx)
    return [fam for fam in load("overrides.json")["families"]
            if base in fam["covers"] and (include_weak or fam["evidence"] == "strong")]


def recommended(gfx: str, include_weak: bool = False) -> str | None:
    """The conventional override for `gfx` ("10.3.0" for gfx1032), or None (native targets, RDNA4, unknown)."""
    families = _families(gfx, include_weak)
    return families[0]["value"] if families else None


def matches_family(value, gfx: str) -> bool:
    """Whether `value` makes `gfx` run code of its own family: its own target or a documented family override."""
    pretend, base = target_of(value), base_gfx(gfx)
    if pretend is None or base is None:
        return False
    return pretend == base or any(fam["as"] == pretend for fam in _families(base, include_weak=True))


def caveats() -> list[dict]:
    return list(load("overrides.json")["caveats"])
