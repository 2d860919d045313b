"""The benchmark as a pipeline stage: its result is the `bench.results` fact (probe "bench"); its interpret step
sets `bench.figures` once per run (each figure, what the card should reach, what was seen around it: analysis.py),
which the checks judge (checks/bench.py, checks/perf_switches.py), the same on a live run and on a replayed
snapshot. The report's summary shows the figures with the verdicts the pipeline brings from those checks
(Check.shown_with_stage); `rocm-doctor bench` is a request for this stage alone (diagnose.py)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from rocm_doctor.engine.pipeline import Stage
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import STAGE_FACTS, TORCH_AVAILABLE
from rocm_doctor.interpret import stage_results

PROBE_KEY, FACT, NOT_RUN = stage_results.BENCH
FIGURES = next(key for key, stage in STAGE_FACTS.items() if stage == "bench")


class BenchStage(Stage):
    name = "bench"
    probe_key = PROBE_KEY
    provides = (FACT, FIGURES)

    def __init__(self, preset: str = "quick", device: str = "auto", device_index: int = 0, sections=(),
                 on_record: Optional[Callable[[dict], None]] = None) -> None:
        self.preset, self.device, self.device_index, self.sections = preset, device, device_index, tuple(sections)
        self.on_record = on_record  # every record of the child, for a caller's own progress bar (`bench`)
        self._measured: tuple = (None, None)  # (results, their figures): the report's summary reuses them

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
            if self.on_record is not None:
                self.on_record(record)

        device = self.device
        if device == "auto" and facts.get(TORCH_AVAILABLE) is False:  # measured on the CPU: sized for it
            device = "cpu"
        plan = plans.build(self.preset, self.sections, device=device)
        return session.run(target_python(facts), plan, device=device, device_index=self.device_index,
                           on_record=on_record, preset=self.preset, sample=sample)

    def interpret(self, observations, facts) -> None:
        """The stage's facts: the results as recorded, and their figures, computed here once for every check."""
        from rocm_doctor.gpu.bench.analysis import measure

        stage_results.interpret(observations, facts)
        results = facts.get(FACT)
        if isinstance(results, dict):
            facts.set(FIGURES, measure(results))
        else:
            facts.set_missing(FIGURES, facts.why_missing(FACT))
        self._measured = (results, facts.get(FIGURES))

    def summary(self, result: dict[str, Any], judged: dict[str, Any]) -> dict[str, Any]:
        """The results and their figures, every line judged by the bench checks (unjudged should they fail to
        load)."""
        from rocm_doctor.gpu.bench.analysis import measure

        done, figures = self._measured
        if done is not result or figures is None:
            figures = measure(result)
        return {"results": result, "analysis": judged.get("analysis") or figures}
