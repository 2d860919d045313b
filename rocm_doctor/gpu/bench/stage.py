"""The benchmark as a pipeline stage: its result is the `bench.results` fact (probe "bench"); its interpret step
sets `bench.analysis` once per run (the figures against what the card should reach, analysis.py), which the
checks judge (checks/bench.py, checks/perf_switches.py), the same on a live run and on a replayed snapshot."""

from __future__ import annotations

from typing import Any, Optional

from rocm_doctor.engine import relations
from rocm_doctor.engine.engine import Selection, sort_findings
from rocm_doctor.engine.pipeline import Stage, rerun
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts, target_python
from rocm_doctor.facts.keys import STAGE_FACTS
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import stage_results

PROBE_KEY, FACT, NOT_RUN = stage_results.BENCH
ANALYSIS = next(key for key, stage in STAGE_FACTS.items() if stage == "bench")


class BenchStage(Stage):
    name = "bench"
    probe_key = PROBE_KEY
    provides = (FACT, ANALYSIS)

    def __init__(self, preset: str = "quick", device: str = "auto", device_index: int = 0, sections=()) -> None:
        self.preset, self.device, self.device_index, self.sections = preset, device, device_index, tuple(sections)
        self._analysed: tuple = (None, None)  # (results, their analysis): the report's summary reuses it

    def run(self, facts, progress=None) -> dict[str, Any]:
        return self.run_watched(facts, progress, None)

    def run_watched(self, facts, progress, sample) -> dict[str, Any]:
        """The benchmark with the live state sampled around each section, and re-runs without speed switches."""
        from rocm_doctor.gpu.bench import plan as plans
        from rocm_doctor.gpu.bench import session
        from rocm_doctor.gpu.bench.plan import TITLES

        def on_record(record: dict[str, Any]) -> None:
            if progress and record.get("bench") == "section_start":
                progress(f"benchmark: {TITLES.get(record.get('section'), record.get('section'))}")

        device = self.device
        if device == "auto" and facts.get("torch.available") is False:  # measured on the CPU: sized for it
            device = "cpu"
        plan = plans.build(self.preset, self.sections, device=device)
        return session.run(target_python(facts), plan, device=device, device_index=self.device_index,
                           on_record=on_record, preset=self.preset, sample=sample)

    def interpret(self, observations, facts) -> None:
        interpret(observations, facts)
        self._analysed = (facts.get(FACT), facts.get(ANALYSIS))

    def summary(self, result: dict[str, Any]) -> dict[str, Any]:
        from rocm_doctor.gpu.bench.analysis import analyze

        done, analysis = self._analysed
        return {"results": result, "analysis": analysis if done is result and analysis is not None else analyze(result)}


def interpret(observations, facts) -> None:
    """The stage's facts: the results as recorded, and their analysis, computed here once for every check."""
    from rocm_doctor.gpu.bench.analysis import analyze

    stage_results.interpret(observations, facts)
    results = facts.get(FACT)
    if isinstance(results, dict):
        facts.set(ANALYSIS, analyze(results))
    else:
        facts.set_missing(ANALYSIS, facts.why_missing(FACT))


def findings(results: dict[str, Any], facts: Optional[Facts] = None) -> list:
    """The bench checks' verdicts on `results` (on `facts` when given, else on facts holding only the results),
    linked: a switch the re-run measured as slowing explains the low figures it moved."""
    facts = facts if facts is not None else Facts(Observations())
    facts.observations.add_probe(PROBE_KEY, results)
    interpret(facts.observations, facts)
    registry = load_registry(include_plugins=False)
    found = rerun(registry, facts, [], BenchStage.provides, Selection())
    relations.link(found, registry.checks, facts)
    return sort_findings(found)
