"""The line, the unit of a benchmark analysis (see analysis.py for its fields), and reading the results object.

`figure` names what a judged line measured (matmul, bandwidth, launch, ...); which check judges each kind is
checks/bench.py's choice, not the analysis's."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from rocm_doctor.gpu.bench.verdicts import INFO


def make_line(section: str, key: str, label: str, value: Optional[float], unit: str, figure: Optional[str] = None,
              expected: Optional[float] = None, fraction: Optional[float] = None, verdict_: str = INFO,
              explanation: str = "", remedy: Iterable[str] = (), **details: Any) -> dict[str, Any]:
    return {"section": section, "key": key, "label": label, "value": value, "unit": unit, "expected": expected,
            "fraction": fraction, "verdict": verdict_, "explanation": explanation, "remedy": list(remedy),
            "figure": figure, "details": details}


def records(results: dict[str, Any], section: str, kind: Optional[str] = None) -> list[dict[str, Any]]:
    entry = (results.get("sections") or {}).get(section) or {}
    return [r for r in entry.get("records") or [] if kind is None or r.get("bench") == kind]


def device_of(results: dict[str, Any]) -> dict[str, Any]:
    return dict((results.get("header") or {}).get("device") or {})
