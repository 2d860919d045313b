"""One-line summaries of the stages that ran after the checks (GPU kernels, benchmark, collectives).

The full data stays in report.stages (JSON, `report`); the human report shows only what a reader scans first.
"""

from __future__ import annotations

from typing import Any, Iterable


def kernels_lines(stage: dict[str, Any]) -> Iterable[str]:
    if not stage.get("ran"):
        yield f"GPU kernels did not run: {stage.get('reason', 'unknown reason')}"
        return
    suite = stage.get("suite") or {}
    counts = suite.get("counts") or {}
    parts = [f"{n} {outcome}" for outcome, n in counts.items() if n]
    yield f"GPU kernels: {', '.join(parts) or 'no cases'} in {stage.get('seconds', 0):.1f} s on {stage.get('device')}"
    libraries: dict[str, set] = {}
    for result in suite.get("results") or []:
        served = [lib for lib in (result.get("attribution") or {}).get("libraries") or [] if "copy" not in lib]
        if served:
            libraries.setdefault(result.get("category", "?"), set()).update(served)
    if libraries:
        yield "served by: " + "; ".join(f"{category} → {', '.join(sorted(libs))}" for category, libs in sorted(libraries.items()))


def bench_lines(stage: dict[str, Any]) -> Iterable[str]:
    analysis = stage.get("analysis") or {}
    for line in analysis.get("lines") or []:
        label = line.get("label") or line.get("key") or "?"
        measured = line.get("value")
        unit = line.get("unit", "")
        verdict = line.get("verdict") or "no expectation"
        expected = line.get("expected")
        against = f" of {expected:g} {unit} expected" if isinstance(expected, (int, float)) else ""
        if isinstance(measured, (int, float)):
            yield f"{label}: {measured:,.1f} {unit}{against} — {verdict}"


def collectives_lines(stage: dict[str, Any]) -> Iterable[str]:
    if not isinstance(stage, dict):
        return
    if stage.get("ran") is False:
        yield f"collectives did not run: {stage.get('reason', 'unknown reason')}"
        return
    summary = stage.get("summary")
    if isinstance(summary, str):
        yield summary


SUMMARIES = {"kernels": kernels_lines, "bench": bench_lines, "collectives": collectives_lines}


def stage_lines(stages: dict[str, Any]) -> list[tuple[str, list[str]]]:
    out = []
    for name, summarise in SUMMARIES.items():
        if isinstance(stages.get(name), dict):
            lines = list(summarise(stages[name]))
            if lines:
                out.append((name, lines))
    return out
