"""The `bench.results` fact: benchmark results stored in the observations (probe key "bench") and read back.

`interpret` has the interpreter signature, so a snapshot or report that carries the results replays the
bench checks (checks/bench.py) like any other. `findings` runs just those checks over a results object.
"""

from __future__ import annotations

from typing import Any, Optional

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations

PROBE_KEY = "bench"
FACT = "bench.results"
NOT_RUN = "the benchmark did not run (use `rocm-doctor bench` or `rocm-doctor check --bench`)"


def interpret(observations: Observations, facts: Facts) -> None:
    results = observations.probes.get(PROBE_KEY)
    if isinstance(results, dict) and isinstance(results.get("sections"), dict):
        facts.set(FACT, results)
    else:
        facts.set_missing(FACT, NOT_RUN)


def bench_checks() -> list:
    from rocm_doctor.engine.registry import load_registry

    return [c for c in load_registry(include_plugins=False).checks if c.__module__.endswith(".checks.bench")]


def findings(results: dict[str, Any], facts: Optional[Facts] = None) -> list:
    """The bench checks' findings for `results` (on `facts` when given, else on facts holding only the results)."""
    from rocm_doctor.engine.engine import run_one, sort_findings

    if facts is None:
        facts = Facts(Observations())
    facts.observations.add_probe(PROBE_KEY, results)
    interpret(facts.observations, facts)
    out = []
    for check in bench_checks():
        out.extend(run_one(check, facts))
    return sort_findings(out)


def attach(report, facts: Facts, results: Optional[dict[str, Any]] = None) -> None:
    """Add the benchmark to a `check` report: stages["bench"] and the bench findings (replacing their skips).

    With results=None it uses results already in the observations (a replayed snapshot); without any, no-op.
    """
    from rocm_doctor.engine.engine import sort_findings
    from rocm_doctor.gpu.bench.analysis import analyze

    results = results if results is not None else facts.observations.probes.get(PROBE_KEY)
    if not isinstance(results, dict):
        return
    new = findings(results, facts)
    ids = {f.check for f in new}
    report.findings = sort_findings([f for f in report.findings if f.check not in ids] + new)
    report.stages["bench"] = {"results": results, "analysis": analyze(results)}
