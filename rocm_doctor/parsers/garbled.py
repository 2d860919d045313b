"""Values no healthy GPU tool prints: a gfx that is no target and a memory size of zero or of a pebibyte and more.
The parsers list them as `garbled` instead of reading them as normal. Pure."""

from __future__ import annotations

PIB = 1 << 50
MAX_GPUS = 256  # no machine has more GPUs than this: a tool that lists more prints garbage (300,001 empty entries)


def impossible(label: str, gfx_raw=None, gfx=None, memory_bytes=None, memory_text: str = "") -> list[dict]:
    """[{what, lines}] for the device called `label`: a gfx was printed but names no target, or its memory size is
    0 or at least a pebibyte (memory_bytes None: not printed)."""
    out = []
    if gfx_raw and not gfx:
        out.append({"what": f"{label}: gfx '{gfx_raw}' is no gfx target", "lines": [str(gfx_raw)]})
    if isinstance(memory_bytes, int) and (memory_bytes == 0 or memory_bytes >= PIB):
        out.append({"what": f"{label}: memory size {memory_bytes:,} bytes", "lines": [memory_text or str(memory_bytes)]})
    return out



def bounded_gpus(label: str, devices: list) -> tuple[list, list[dict]]:
    """(the first MAX_GPUS devices, a garbled entry saying how many more the tool listed, if any)."""
    if len(devices) <= MAX_GPUS:
        return devices, []
    return devices[:MAX_GPUS], [{"what": f"{label} lists {len(devices):,} GPUs; only the first {MAX_GPUS} are read",
                                 "lines": []}]
