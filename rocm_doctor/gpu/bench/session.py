"""One benchmark as `bench` and the bench stage run it: the sections in a child (harness.run_bench), the live GPU
state sampled by the parent before the run, at the start and end of each section as its records arrive, and after
the run (the child holds each section until its start sample is taken, so no query runs while a figure is being
measured); then, for each speed switch from data/perf_switches.json that is set where a figure it moves was measured
(switches.choose), the sections it moves again in a fresh child without it. Everything lands in the results, so a
replay re-judges it.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from rocm_doctor.gpu.bench import switches
from rocm_doctor.gpu.bench.harness import OnRecord, run_bench
from rocm_doctor.gpu.bench.plan import Section
from rocm_doctor.interpret.live_sample import read

Sampler = Callable[[], dict]
BUSY_PCT = 10  # a GPU this busy in the first sample is sampled again: the doctor's own earlier work may not have drained
SETTLE_S = 1.0
SHARED_S = 0.5  # a section's start this soon after the previous one's end shares its sample
NOT_SAMPLED = "the live GPU state was not sampled in this run"
KEPT = ("header", "sections", "live", "children", "elapsed_s", "measured_s")


class Watch:
    """The samples of one child run, each marked with what it was taken for ("before", "matmul.start", ...)."""

    def __init__(self, sample: Optional[Sampler]) -> None:
        self.sample, self.samples, self.started = sample, [], time.monotonic()

    def take(self, *marks: str) -> Optional[dict]:
        if self.sample is None:
            return None
        at = round(time.monotonic() - self.started, 3)
        try:
            taken = dict(self.sample())
        except Exception as exc:  # a failed sample is recorded; the measurement goes on
            taken = {"error": f"{type(exc).__name__}: {exc}"}
        taken.update(marks=list(marks), at_s=at)
        self.samples.append(taken)
        return taken

    def baseline(self) -> None:
        """The state before the child starts; sampled again a second later when a GPU was busy."""
        first = self.take("before")
        state, _ = read(first) if first else (None, "")
        if state and any((g.get("utilization_pct") or 0) >= BUSY_PCT for g in state.get("gpus") or []):
            first["marks"] = ["before.first"]
            time.sleep(SETTLE_S)
            self.take("before")

    def hook(self, forward: Optional[OnRecord], hold_dir: Optional[str] = None) -> OnRecord:
        """Samples at each section's start (then lets the held child go on) and end, then `forward`."""
        def on_record(record: dict[str, Any]) -> None:
            kind, section = record.get("bench"), record.get("section")
            if kind == "section_start" and section:
                try:
                    self._start(section)
                finally:
                    if hold_dir:
                        Path(hold_dir, f"{section}.go").touch()
            elif kind in ("section_end", "section_timeout") and section:
                self.take(f"{section}.end")
            if forward is not None:
                forward(record)
        return on_record

    def _start(self, section: str) -> None:
        last = self.samples[-1] if self.samples else None
        if last and str(last["marks"][-1]).endswith(".end") and \
                time.monotonic() - self.started - last["at_s"] < SHARED_S:
            last["marks"].append(f"{section}.start")
        else:
            self.take(f"{section}.start")

    def record(self) -> dict[str, Any]:
        if self.sample is None:
            return {"samples": [], "reason": NOT_SAMPLED}
        return {"samples": self.samples, "seconds": round(sum(s.get("seconds") or 0.0 for s in self.samples), 3)}


def watched(python: str, plan: Sequence[Section], device: str, device_index: int, on_record: Optional[OnRecord],
            env: Mapping[str, str], preset: str, sample: Optional[Sampler]) -> dict[str, Any]:
    """run_bench with the live state sampled around the run and each section (results["live"])."""
    watch = Watch(sample)
    watch.baseline()
    with tempfile.TemporaryDirectory(prefix="rocm-doctor-hold-") as hold:
        hold_dir = hold if sample is not None else None
        results = run_bench(python, plan, device=device, device_index=device_index, env=env, preset=preset,
                            on_record=watch.hook(on_record, hold_dir), hold_dir=hold_dir)
    watch.take("after")
    results["live"] = watch.record()
    return results


def run(python: str, plan: Sequence[Section], device: str = "auto", device_index: int = 0,
        on_record: Optional[OnRecord] = None, env: Optional[Mapping[str, str]] = None, preset: str = "custom",
        sample: Optional[Sampler] = None) -> dict[str, Any]:
    """The watched run, then the re-runs without each speed switch that may explain a figure (results["switch_ab"])."""
    environment = dict(os.environ if env is None else env)
    results = watched(python, plan, device, device_index, on_record, environment, preset, sample)
    results["switch_ab"] = _switch_ab(python, plan, results, environment, device, device_index, preset, sample)
    return results


def _switch_ab(python: str, plan: Sequence[Section], results: dict[str, Any], env: dict, device: str,
               device_index: int, preset: str, sample: Optional[Sampler]) -> dict[str, Any]:
    from rocm_doctor.gpu.bench.analysis import measure

    chosen = switches.choose(results, env, measure(results)["lines"], [s.name for s in plan])
    for entry in chosen["runs"]:
        sections = [s for s in plan if s.name in entry["sections"]]
        without = {k: v for k, v in env.items() if k != entry["variable"]}
        rerun = watched(python, sections, device, device_index, None, without, preset, sample)
        entry["results"] = {key: rerun.get(key) for key in KEPT}
    return chosen
