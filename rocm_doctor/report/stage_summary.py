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
    """The figures that fall short, how many met their expectation, and the CPU/GPU speed-ups."""
    lines = (stage.get("analysis") or {}).get("lines") or []
    good = [line for line in lines if line.get("verdict") == "good"]
    short = [line for line in lines if line.get("verdict") not in ("good", "info")]
    for line in short:
        expected = line.get("expected")
        against = f" (expected {expected:.4g} {line.get('unit', '')})" if isinstance(expected, (int, float)) else ""
        value = line.get("value")
        shown = f"{value:,.1f} {line.get('unit', '')}" if isinstance(value, (int, float)) else "not measured"
        yield f"{line.get('label')}: {shown}{against} — {line.get('verdict')}"
    if good:
        yield f"{len(good)} figure(s) at or near what this GPU should reach"
    for line in lines:
        if ".speedup." in str(line.get("key")) and isinstance(line.get("value"), (int, float)):
            yield f"{line.get('label')}: {line['value']:.1f}x"


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
