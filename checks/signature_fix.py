"""A known message's own fix text (data/error_signatures.json "fix"), with the values the log names filled in: the
gfx target, the override of its family, the ROCm index whose wheels have code for it. Used where the check the
message points to cannot run (a paste judged without its machine). Pure."""

from __future__ import annotations

from rocm_doctor.knowledge import overrides, wheels

UNKNOWN = {"gfx": "this GPU's gfx target (rocminfo names it)",
           "override": "the value of its family (rocm-doctor check on that machine names it)",
           "index": "a ROCm index whose wheels have its code"}


def values(log: dict) -> dict:
    """{gfx, override, index, rocm}: what the log names, or words saying how to find it out."""
    targets = [t["gfx"] for t in (log or {}).get("targets") or []]
    gfx = targets[0] if targets else None
    out = dict(UNKNOWN)
    if gfx:
        native = wheels.native_indexes(gfx)
        out.update(gfx=gfx, override=overrides.recommended(gfx) or f"none (no documented override runs {gfx} code "
                                                                      "as another target)",
                   index=(f"download.pytorch.org/whl/{native[-1]}" if native else
                          f"none on download.pytorch.org (TheRock's multi-arch wheels are the path for {gfx})"))
    rocm = ((log or {}).get("rocm") or (log or {}).get("hip") or [None])[0]
    out["rocm"] = rocm["version"] if rocm else "the installed ROCm release"
    return out


def fill(text: str, log: dict) -> str:
    """`text` with {gfx}, {override}, {index} and {rocm} replaced; an unknown placeholder is left as written."""
    known = values(log)
    for key, value in known.items():
        text = text.replace("{" + key + "}", str(value))
    return text
