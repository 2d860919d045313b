"""The known error signatures in what the kernels printed (a measurement of the stage, no verdict).

* `signature_matches(text)`: known error signatures (rocm_doctor.knowledge.signatures) in a failed case's error,
  traceback or stderr, each naming the static check it bears on ("invalid device function" →
  gfx-not-in-torch-arch-list; a HIPRTC header error → hiprtc-headers-missing).
* `analyse(suite)`: the matches attached to each failed case and to a suite that could not start.
Which static findings the outcomes confirm or refute is judged in checks/gpu_confirm.py.
"""

from __future__ import annotations

from typing import Any

from rocm_doctor.knowledge.signatures import match

FAILED = ("wrong", "error", "crashed", "hung")


def signature_matches(text: str) -> list[dict[str, str]]:
    """[{id, check, meaning, line}] for the known error signatures (data/error_signatures.json) in `text`."""
    return [{"id": m.id, "check": m.check, "meaning": m.meaning, "line": m.line[:300]} for m in match(text)] if text else []


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
