"""What the benchmark observed about its own figures, applied to the analysis lines once they are made.

A figure measured while the GPU was shared or slowed (interference.py) is marked unreliable, and that is the
explanation of a low one; a figure a speed switch moves carries what the re-run without the switch measured
(switches.py), and the switch is the explanation of a low figure it was measured to slow; an explanation with no
cause to name says what the samples showed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocm_doctor.gpu.bench import interference, switches
from rocm_doctor.gpu.bench.verdicts import LOW, NOT_EXPLAINED, VERY_LOW

if TYPE_CHECKING:
    from rocm_doctor.gpu.bench.analysis import Analysis

SHORT = (LOW, VERY_LOW)


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
            if line["verdict"] in SHORT:
                line["explanation"] = f"measured while {line['unreliable']}: the figure says little about this machine"
                line["remedy"] = ["Run the benchmark again when nothing else uses the GPU and it is not throttled."]
        elif line["verdict"] in SHORT and NOT_EXPLAINED in (line["explanation"] or ""):
            line["explanation"] += f" ({interference.observed(judged, line['section'])})"
    return {"live": judged, "switches": compared}


def _switch(a: Analysis, run: dict[str, Any]) -> dict[str, Any]:
    without = type(a)(switches.merged(a.results, run), a.expectation, use_catalog=False).run()
    comparison = switches.compare(run, a.lines, without["lines"])
    comparison["unreliable"] = sorted({l["unreliable"] for l in without["lines"]
                                       if l.get("unreliable") and l["key"] in run.get("figures", ())})
    by_key = {line["key"]: line for line in a.lines}
    name = f"{run['variable']}={run['value']}"
    for figure in comparison["figures"]:
        line = by_key[figure["key"]]
        line["details"]["without_switch"] = dict(figure, variable=run["variable"], value=run["value"])
        if line["verdict"] not in SHORT:
            continue
        if comparison["slows"] and figure["speedup"] >= switches.SLOWS_AT and not comparison["unreliable"]:
            line["explanation"] = f"{name} is set, and a re-run without it in a fresh child measured " \
                                  + switches.describe(figure)
            line["remedy"] = [f"Unset {run['variable']} (see the finding env-switch-slows:{run['variable']})."]
        else:
            effect = ("it helps" if figure["speedup"] <= 1 / switches.SLOWS_AT else
                      f"{figure['speedup']:.2f}x, under the {switches.SLOWS_AT}x told apart from run-to-run variation")
            line["explanation"] = "; ".join(filter(None, [line["explanation"], (
                f"{name} is set, but a re-run without it measured {figure['without']:.3g} {figure['unit']} "
                f"({effect})")]))
    return comparison
