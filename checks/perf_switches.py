"""Speed switches proven by measurement: an environment variable from data/perf_switches.json that is set while the
benchmark ran, judged by what a re-run of the sections it moves, in a fresh child without it, measured.

The re-runs and the figure-by-figure comparison come from the bench (the fact bench.figures, "observed"); this
check decides: a switch slows the benchmark when a figure it moves is better without it by more than that figure's
run-to-run variation (bench_judge.slowed; then it is the cause of those bench findings, with the step to unset it);
one that much worse without it helps (bench_judge.helped), one in between is harmless (both info); not re-run, the
finding says why. A logging or debug switch the re-run measured harmless refutes the static
gpu-library-logging-enabled warning (`evidence_on`).
"""

from __future__ import annotations

from rocm_doctor.checks.visibility import set_in_rc_file
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains, same_subject
from rocm_doctor.facts.keys import BENCH_FIGURES, BENCH_RESULTS
from rocm_doctor.checks.bench import check_of
from rocm_doctor.checks.bench_judge import helped, slowed, slows
from rocm_doctor.knowledge.perf_switches import describe


def slowed_by(cause, symptom, _facts=None) -> bool:
    """The bench finding reports a figure the switch was measured to slow."""
    return symptom.check in ((cause.data or {}).get("slowed_checks") or ())


class EnvSwitchSlows(Check):
    id = "env-switch-slows"
    title = "Environment switches that slow the benchmark"
    area = "performance"
    severity = Severity.MEDIUM
    requires = (BENCH_RESULTS, BENCH_FIGURES)
    explains = (Explains("bench-*", slowed_by), Explains("gpu-library-logging-enabled", same_subject))

    def run(self, facts):
        results = facts[BENCH_RESULTS]
        chosen = results.get("switch_ab")
        if not isinstance(chosen, dict):
            return self.skip("this benchmark did not look for speed switches (results from an older rocm-doctor)")
        live = {(s["variable"], s["value"]) for s in chosen.get("set") or [] if facts.env.get(s["variable"]) == s["value"]}
        if not live:
            return self.ok("no speed switch from data/perf_switches.json is set")
        rows = {s["variable"]: s for s in chosen.get("set") or []}
        figures = facts[BENCH_FIGURES]
        findings = []
        for comparison in figures["observed"]["switches"]:
            if (comparison["variable"], comparison["value"]) in live:
                findings.append(self._measured(facts, comparison, rows[comparison["variable"]], figures))
        for skipped in chosen.get("not_run") or []:
            if (skipped["variable"], skipped["value"]) in live:
                row = rows[skipped["variable"]]
                findings.append(self.info(f"{skipped['variable']}={skipped['value']} is set; not re-run without it: "
                                          f"{skipped['why']}.", subject=skipped["variable"], evidence=_row(row),
                                          data={"variable": skipped["variable"], "value": skipped["value"]}))
        return findings or self.ok("no speed switch from data/perf_switches.json is set")

    def evidence_on(self, facts):
        """A logging or debug switch the re-run without it measured harmless: the static warning is refuted."""
        out = {}
        for comparison in facts[BENCH_FIGURES]["observed"]["switches"]:
            if comparison["figures"] and not slows(comparison) and not comparison["unreliable"] \
                    and not comparison["failed"]:
                out[f"gpu-library-logging-enabled:{comparison['variable']}"] = {
                    "refuted": True, "kind": "bench-switch-ab",
                    "detail": "re-run without it: " + "; ".join(describe(f) for f in comparison["figures"])}
        return out

    def _measured(self, facts, comparison, row, measured):
        variable, value = comparison["variable"], comparison["value"]
        name = f"{variable}={value}"
        figures = comparison["figures"]
        evidence = [describe(f) for f in figures] + _row(row)
        data = {"variable": variable, "value": value, "figures": figures, "speedup": comparison["speedup"]}
        doubt = comparison["unreliable"] + comparison["failed"]
        if doubt or not figures:
            why = "; ".join(doubt) or "the re-run measured none of the figures it moves"
            return self.info(f"{name} is set; the re-run without it could not tell its effect: {why}.",
                             subject=variable, evidence=evidence, data=data)
        slowed_figures = [f for f in figures if slowed(f)]
        if not slowed_figures:
            worst = min(figures, key=lambda f: f["speedup"])
            helps = helped(worst)
            return self.info(f"{name} is set and {'helps here' if helps else 'measured harmless here'}: a re-run "
                             f"without it measured {describe(worst if helps else max(figures, key=_change))}.",
                             subject=variable, evidence=evidence, data=dict(data, helps=helps))
        keys = {f["key"] for f in slowed_figures}
        data["slowed_checks"] = sorted({check_of(l["figure"]) for l in measured["lines"]
                                        if l["key"] in keys and l.get("figure")})
        best = max(slowed_figures, key=lambda f: f["speedup"])
        return self.warn(
            f"{name} slows this machine's work: a re-run without it, in a fresh child, measured {describe(best)}. "
            f"What it does: {row['changes']}.", subject=variable, evidence=evidence, data=data,
            remediation=["Unset it; set it only on the command line of the one run that needs it."],
            fix=S.unset_where_set(variable, set_in_rc_file(facts, variable)))


def _change(figure) -> float:
    return max(figure["speedup"], 1 / figure["speedup"]) if figure["speedup"] else 0.0


def _row(row) -> list[str]:
    return [f"{row['variable']}: {row['changes']} (source: {row['url']}, read {row['read']})"]
