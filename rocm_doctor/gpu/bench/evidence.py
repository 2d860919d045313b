"""What the benchmark observed about its own figures, applied to the lines once they are made.

A figure measured while the GPU was shared or slowed (interference.py) is marked unreliable with what was seen;
one measured with nothing against it carries what the samples showed (`context["observed"]`); a figure a speed
switch moves carries what the re-run without the switch measured (switches.py). What that says about a low figure
is the checks' judgement (checks/bench_judge.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocm_doctor.gpu.bench import interference, switches

if TYPE_CHECKING:
    from rocm_doctor.gpu.bench.analysis import Analysis


def apply(a: Analysis) -> dict[str, Any]:
    """Annotate a.lines in place; return {"live": the interference judgement, "switches": [comparisons]}."""
    compared = [_switch(a, run) for run in (a.results.get("switch_ab") or {}).get("runs") or [] if run.get("results")]
    judged = interference.judge(a.results)
    for line in a.lines:
        if line["value"] is None:
            continue
        reasons = judged["run"]["reasons"] + (judged["sections"].get(line["section"]) or {}).get("reasons", [])
        if reasons:
            line["unreliable"] = "; ".join(reasons)
        else:
            line["context"]["observed"] = interference.observed(judged, line["section"])
    return {"live": judged, "switches": compared}


def _switch(a: Analysis, run: dict[str, Any]) -> dict[str, Any]:
    without = type(a)(switches.merged(a.results, run), a.expectation, use_catalog=False).run()
    comparison = switches.compare(run, a.lines, without["lines"])
    comparison["unreliable"] = sorted({l["unreliable"] for l in without["lines"]
                                       if l.get("unreliable") and l["key"] in run.get("figures", ())})
    by_key = {line["key"]: line for line in a.lines}
    for figure in comparison["figures"]:
        by_key[figure["key"]]["details"]["without_switch"] = dict(figure, variable=run["variable"], value=run["value"])
    return comparison
