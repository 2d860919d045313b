"""A known message's own fix text (data/error_signatures.json "fix"), with the values the log names filled in: the
gfx target (the one the matched line names, else the log's first), the override of its family, the ROCm index whose
wheels have code for it. Used where the check the message points to cannot run (a paste judged without its
machine). Pure."""

from __future__ import annotations

from rocm_doctor.knowledge import overrides, wheels
from rocm_doctor.parsers.log_machine import MAX_LINE

NOT_FOUND = "- [Not Found]"  # HIP's loader, under AMD_LOG_LEVEL, on each device target the binary has no code for

UNKNOWN = {"gfx": "this GPU's gfx target (rocminfo names it)",
           "override": "the value of its family (rocm-doctor check on that machine names it)",
           "index": "a ROCm index whose wheels have its code"}


def values(log: dict, line: str = "") -> dict:
    """{gfx, override, index, rocm}: what the matched line or else the log names, or words saying how to find it
    out. A line that names a target is about that one: "amdgcn-amd-amdhsa--gfx1036 - [Not Found]" on a machine whose
    first GPU is a gfx1100 asks for gfx1036's code; a line that names none takes a target the loader listed as
    not found, then the log's first."""
    rows = (log or {}).get("targets") or []  # each with the line the log parser read it from
    named = [t["gfx"] for t in rows if line and t.get("line") == line[:MAX_LINE]]
    missing = [t["gfx"] for t in rows if NOT_FOUND in str(t.get("line") or "")]  # the loader's list of what lacks code
    targets = named or missing or [t["gfx"] for t in rows]
    gfx = targets[0] if targets else None
    out = dict(UNKNOWN)
    if gfx:
        native = wheels.native_indexes(gfx)
        # the loader named the GPU without code, and the log names others: an override would move them all
        others = sorted({t["gfx"] for t in rows} - set(missing)) if missing else []
        override = (f"none (it applies to every GPU, and beside {gfx} this log names {', '.join(others)}: hide the "
                    "GPU without code instead)" if others else overrides.recommended(gfx)
                    or f"none (no documented override runs {gfx} code as another target)")
        out.update(gfx=gfx, override=override,
                   index=(f"download.pytorch.org/whl/{native[-1]}" if native else
                          f"none on download.pytorch.org (TheRock's multi-arch wheels are the path for {gfx})"))
    rocm = ((log or {}).get("rocm") or (log or {}).get("hip") or [None])[0]
    out["rocm"] = rocm["version"] if rocm else "the installed ROCm release"
    return out


def fill(text: str, log: dict, line: str = "") -> str:
    """`text` with {gfx}, {override}, {index} and {rocm} replaced for the matched `line`; an unknown placeholder is
    left as written."""
    known = values(log, line)
    for key, value in known.items():
        text = text.replace("{" + key + "}", str(value))
    return text
