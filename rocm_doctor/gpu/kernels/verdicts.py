"""What the kernel outcomes say about the static findings.

* `signature_matches(text)`: known error signatures (rocm_doctor.knowledge.signatures) in a failed case's error,
  traceback or stderr, each naming the static check it confirms ("invalid device function" →
  gfx-not-in-torch-arch-list; a HIPRTC header error → hiprtc-headers-missing).
* `analyse(suite)`: per failed case, its matches; which checks the kernels confirm and which they refute.
* `kernel_evidence(stage)`: {check id: confirmed/refuted with the detail}, which the pipeline applies to the static
  findings as typed evidence (a refuted problem drops a level, a confirmed one becomes a fail).
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

# Static checks the kernels can refute: when the condition holds on a real GPU, their problem did not show.
#   all_ok:    every case that ran on the GPU was ok (at least `min_ok` of them)
#   cases_ok:  these cases were ok
#   categories_ok: every case of these categories that ran was ok (at least one)
REFUTATIONS: list[dict[str, Any]] = [
    {"check": "gfx-not-in-torch-arch-list", "when": "all_ok", "min_ok": 10},
    {"check": "sm-not-in-torch-arch-list", "when": "all_ok", "min_ok": 10},
    {"check": "hsa-override-gfx-version", "when": "all_ok", "min_ok": 10},
    {"check": "hiprtc-headers-missing", "when": "cases_ok", "cases": ["jiterator-float32", "jiterator-float16"]},
    {"check": "rocblas-library-coverage", "when": "categories_ok", "categories": ["matmul", "linear"]},
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


def first_line(text: Optional[str], limit: int = 240) -> str:
    """The first non-blank line of `text`, stripped and cut to `limit` characters."""
    for line in str(text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def on_gpu(suite: Optional[dict]) -> bool:
    hello = (suite or {}).get("hello") or {}
    return hello.get("device_type") == "cuda"


def analyse(suite: dict, log_text: str = "") -> dict[str, Any]:
    """Attach signature matches to failed cases; say which static checks the run confirms and refutes."""
    results = suite.get("results") or []
    confirmed: dict[str, list[str]] = {}
    for record in results:
        if record.get("outcome") not in FAILED:
            continue
        matches = signature_matches(case_text(record))
        if matches:
            record["signatures"] = matches
        for m in matches:
            confirmed.setdefault(m["check"], [])
            if record["case"] not in confirmed[m["check"]]:
                confirmed[m["check"]].append(record["case"])
    fatal = suite.get("fatal")
    if fatal:
        for m in signature_matches("\n".join([fatal.get("error") or ""] + list(fatal.get("stderr_tail") or []))):
            confirmed.setdefault(m["check"], []).append("(kernel child startup)")
    log_matches = signature_matches(log_text) if log_text else []
    refuted = {}
    if on_gpu(suite) and not fatal:
        for rule in REFUTATIONS:
            why = _refutes(rule, results)
            if why and rule["check"] not in confirmed:
                refuted[rule["check"]] = why
    ok = sum(1 for r in results if r.get("outcome") == "ok")
    return {
        "ok": ok,
        "failed": [r["case"] for r in results if r.get("outcome") in FAILED],
        "confirmed": confirmed,
        "refuted": refuted,
        "log_signatures": log_matches,
    }


def _refutes(rule: dict, results: list[dict]) -> Optional[str]:
    ran = [r for r in results if r.get("outcome") not in ("unavailable", "not-run")]
    if rule["when"] == "all_ok":
        ok = [r for r in ran if r.get("outcome") == "ok"]
        if ran and len(ok) == len(ran) and len(ok) >= rule.get("min_ok", 1):
            return f"{len(ok)} kernels ran correctly on the GPU"
        return None
    if rule["when"] == "cases_ok":
        by_name = {r["case"]: r for r in results}
        picked = [by_name[c] for c in rule["cases"] if c in by_name]
        if picked and all(r.get("outcome") == "ok" for r in picked):
            return "runtime-compiled kernels (" + ", ".join(r["case"] for r in picked) + ") compiled and ran correctly"
        return None
    if rule["when"] == "categories_ok":
        picked = [r for r in ran if r.get("category") in rule["categories"]]
        if picked and all(r.get("outcome") == "ok" for r in picked):
            return f"{len(picked)} {'/'.join(rule['categories'])} kernels ran correctly on the GPU"
        return None
    return None


def kernel_evidence(stage: Optional[dict]) -> dict[str, dict[str, Any]]:
    """What the kernels showed about static checks, for rocm_doctor.engine.pipeline.apply_evidence: a check whose
    signature a failed kernel printed is confirmed; one whose problem did not show on a real GPU is refuted."""
    analysis = (stage or {}).get("analysis") or {}
    out: dict[str, dict[str, Any]] = {}
    for check, why in (analysis.get("refuted") or {}).items():
        out[check] = {"refuted": True, "kind": "gpu-kernels", "detail": why}
    for check, cases in (analysis.get("confirmed") or {}).items():
        out[check] = {"confirmed": True, "kind": "gpu-kernels", "cases": list(cases),
                      "detail": f"GPU kernels that failed with this problem's error: {', '.join(cases[:6])}"}
    return out
