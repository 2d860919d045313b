"""The facts the GPU stages provide, read from the observations the stages left: `gpu.kernels` (probe
"kernels"), `bench.results` (probe "bench"), `collectives.results` (probe "collectives").

The same reading serves a live run (after the stage) and a replayed snapshot or report; without a result the fact
is missing with the reason, so the checks that need it skip saying how to run the stage.
"""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import BENCH_RESULTS, COLLECTIVES_RESULTS, GPU_KERNELS
from rocm_doctor.facts.observations import Observations

KERNELS = ("kernels", GPU_KERNELS,
           "the GPU kernels did not run (--no-gpu, no GPU visible to torch, or a snapshot without them)")
BENCH = ("bench", BENCH_RESULTS,
         "the benchmark did not run (rocm-doctor bench or rocm-doctor check --bench runs it)")
COLLECTIVES = ("collectives", COLLECTIVES_RESULTS,
               "the collectives did not run (rocm-doctor check --collectives or rocm-doctor bench --collectives runs them)")


def interpret(observations: Observations, facts: Facts) -> None:
    for probe, fact, why in (KERNELS, BENCH, COLLECTIVES):
        value = observations.probes.get(probe)
        if _usable(probe, value):
            facts.set(fact, value)
        else:
            facts.set_missing(fact, why)


def _usable(probe: str, value) -> bool:
    if not isinstance(value, dict):
        return False
    return isinstance(value.get("sections"), dict) if probe == "bench" else True
