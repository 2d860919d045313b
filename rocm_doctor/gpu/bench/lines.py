"""The line, the unit of the benchmark's figures (see analysis.py for its fields), and reading the results object.

`figure` names what a judged line measured (matmul, bandwidth, launch, ...); which check judges each kind, and
against which threshold, is checks/bench.py's choice (checks/bench_judge.py), not the stage's. `context` holds what
was measured around the figure that the judgement needs and the renderers do not show."""

from __future__ import annotations

from typing import Any, Optional


def make_line(section: str, key: str, label: str, value: Optional[float], unit: str, figure: Optional[str] = None,
              expected: Optional[float] = None, fraction: Optional[float] = None, explanation: str = "",
              context: Optional[dict[str, Any]] = None, **details: Any) -> dict[str, Any]:
    return {"section": section, "key": key, "label": label, "value": value, "unit": unit, "expected": expected,
            "fraction": fraction, "explanation": explanation, "figure": figure, "details": details,
            "context": context or {}}


def records(results: dict[str, Any], section: str, kind: Optional[str] = None) -> list[dict[str, Any]]:
    entry = (results.get("sections") or {}).get(section) or {}
    return [r for r in entry.get("records") or [] if kind is None or r.get("bench") == kind]


def device_of(results: dict[str, Any]) -> dict[str, Any]:
    return dict((results.get("header") or {}).get("device") or {})
