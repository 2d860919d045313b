"""The known error signatures in what the kernels printed (a measurement of the stage, no verdict).

* `signature_matches(text)`: known error signatures (rocm_doctor.knowledge.signatures) in a failed case's error,
  traceback or stderr, each naming the static check it bears on ("invalid device function" →
  gfx-not-in-torch-arch-list; a HIPRTC header error → hiprtc-headers-missing).
* `analyse(suite)`: the matches attached to each failed case and to a suite that could not start.
Which static findings the outcomes confirm or refute is judged in checks/gpu_confirm.py.
"""

from __future__ import annotations

import re
from typing import Any, Optional


FAILED = ("wrong", "error", "crashed", "hung")

# Used only when rocm_doctor.knowledge.signatures cannot be imported (kept to the essentials).
_FALLBACK_SIGNATURES = [
    ("hip-no-binary-for-gpu", "gfx-not-in-torch-arch-list", r"hipErrorNoBinaryForGpu",
     "torch has no code object for this GPU's gfx target"),
    ("hip-invalid-device-function", "gfx-not-in-torch-arch-list", r"invalid device function|hipErrorInvalidDeviceFunction",
     "a kernel has no code for this GPU's gfx target"),
    ("hsa-invalid-isa", "hsa-override-gfx-version", r"HSA_STATUS_ERROR_INVALID_ISA",
     "the runtime rejected the ISA (often a wrong HSA_OVERRIDE_GFX_VERSION)"),
    ("hiprtc-headers-missing", "hiprtc-headers-missing", r"fatal error: '(type_traits|limits|cstdint)' file not found",
     "runtime compilation cannot find the standard headers"),
    ("tensile-library-missing", "rocblas-library-coverage", r"Cannot read \S*TensileLibrary\S*",
     "rocBLAS has no Tensile kernels for this GPU"),
]

def signature_matches(text: str) -> list[dict[str, str]]:
    """[{id, check, meaning, line}] for known error signatures in `text`."""
    if not text:
        return []
    try:
        from rocm_doctor.knowledge.signatures import match
    except Exception:  # the knowledge module is optional for this stage
        match = None
    found: list[dict[str, str]] = []
    if match is not None:
        try:
            for item in match(text):
                found.append({
                    "id": str(_field(item, "id", "signature")),
                    "check": str(_field(item, "check", "check_id")),
                    "meaning": str(_field(item, "meaning", "title") or ""),
                    "line": str(_field(item, "line") or "")[:300],
                })
            return found
        except Exception:
            found = []
    for sig_id, check, pattern, meaning in _FALLBACK_SIGNATURES:
        hit = re.search(pattern, text)
        if hit:
            line = next((ln for ln in text.splitlines() if re.search(pattern, ln)), hit.group(0))
            found.append({"id": sig_id, "check": check, "meaning": meaning, "line": line.strip()[:300]})
    return found


def _field(item: Any, *names: str) -> Any:
    for name in names:
        if isinstance(item, dict) and name in item:
            return item[name]
        if hasattr(item, name):
            return getattr(item, name)
    return None


def case_text(record: dict) -> str:
    parts = [record.get("error") or "", record.get("traceback") or "", record.get("detail") or "",
             record.get("reason") or ""]
    parts += list(record.get("stderr_tail") or [])
    parts += list(record.get("warnings") or [])
    parts += list(record.get("notes") or [])
    return "\n".join(p for p in parts if p)


def analyse(suite: dict, log_text: str = "") -> dict[str, Any]:
    """Attach the signature matches to the failed cases and to a suite that could not start; count the outcomes.
    What they confirm or refute is judged by the checks (checks/gpu_confirm.py)."""
    results = suite.get("results") or []
    for record in results:
        if record.get("outcome") not in FAILED:
            continue
        matches = signature_matches(case_text(record))
        if matches:
            record["signatures"] = matches
    fatal = suite.get("fatal")
    if fatal:
        matches = signature_matches("\n".join([fatal.get("error") or ""] + list(fatal.get("stderr_tail") or [])))
        if matches:
            fatal["signatures"] = matches
    return {
        "ok": sum(1 for r in results if r.get("outcome") == "ok"),
        "failed": [r["case"] for r in results if r.get("outcome") in FAILED],
        "log_signatures": signature_matches(log_text) if log_text else [],
    }
