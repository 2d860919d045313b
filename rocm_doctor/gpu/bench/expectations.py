"""What the detected card should reach: peak throughput and bandwidth from data/gpu_catalog.json.

`expected_for(device_name, gfx)` matches torch's device name (e.g. 'NVIDIA H200') against the catalog's names,
then, on AMD, the gfx target from gcnArchName (features such as ':sramecc+' stripped) when the name is generic
or unknown. It returns None when there is no catalog row or the match is ambiguous; `lookup` also says why.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from rocm_doctor.parsers.gfx import base_gfx

TF32_NOTE = ("tf32 peak derived as half the dense fp16 tensor rate (NVIDIA Ampere/Hopper/Blackwell datacenter "
             "parts and CDNA3 XF32 have that ratio)")
TF32_ARCHES = ("Ampere", "Hopper", "Blackwell", "CDNA3")


def _norm(text: Optional[str]) -> str:
    return re.sub(r"\s+", " ", (text or "").strip().lower())


def _catalog() -> Optional[dict[str, Any]]:
    try:
        from rocm_doctor.knowledge.store import load

        data = load("gpu_catalog.json")
    except Exception:  # absent or unreadable catalog: no expectations, raw figures only
        return None
    return data if isinstance(data, dict) else None


def _expectation(row: dict[str, Any], match: str, catalog: dict[str, Any]) -> dict[str, Any]:
    peaks = dict(row.get("peak_tflops") or {})
    notes = [row["note"]] if row.get("note") else []
    if peaks.get("tf32") is None and row.get("arch") in TF32_ARCHES and peaks.get("fp16"):
        peaks["tf32"] = round(peaks["fp16"] / 2, 1)
        notes.append(TF32_NOTE)
    source_id = row.get("figures_source") or row.get("source")
    source = (catalog.get("sources") or {}).get(source_id) or {}
    return {
        "id": row.get("id"),
        "name": (row.get("names") or [None])[0],
        "vendor": row.get("vendor"),
        "arch": row.get("arch"),
        "gfx": row.get("gfx"),
        "peak_tflops": peaks,
        "bandwidth_gbs": row.get("bandwidth_gbs"),
        "match": match,
        "source": source_id,
        "source_title": source.get("title"),
        "notes": notes,
    }


def lookup(device_name: Optional[str], gfx: Optional[str] = None) -> tuple[Optional[dict[str, Any]], str]:
    """(expectation or None, how it was matched or why there is none)."""
    catalog = _catalog()
    if catalog is None:
        return None, "no GPU catalog (data/gpu_catalog.json) is available"
    rows = [r for r in catalog.get("gpus") or [] if isinstance(r, dict)]
    name = _norm(device_name)
    if name:
        for row in rows:
            if name in {_norm(n) for n in row.get("names") or []}:
                return _expectation(row, "name", catalog), f"matched by name {device_name!r}"
    target = base_gfx(gfx)
    if target:
        same = [r for r in rows if _norm(r.get("gfx")) == target]
        figures = {(r.get("bandwidth_gbs"), tuple(sorted((r.get("peak_tflops") or {}).items()))) for r in same}
        if len(same) == 1 or (same and len(figures) == 1):
            return _expectation(same[0], "gfx", catalog), f"matched by {target} ({len(same)} catalog row(s))"
        if same:
            names = ", ".join((r.get("names") or ["?"])[0] for r in same[:5])
            return None, f"{device_name!r} is not in the catalog and {target} is shared by cards with different peaks ({names})"
    return None, f"{device_name or 'this device'} ({target or 'no gfx'}) is not in the GPU catalog"


def expected_for(device_name: Optional[str], gfx: Optional[str] = None) -> Optional[dict[str, Any]]:
    """The catalog's peak figures for this card, or None when there is no (unambiguous) row."""
    return lookup(device_name, gfx)[0]
