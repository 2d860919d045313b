"""Which GPU stages a command runs, from its flags: the kernels whenever torch sees a GPU (not with --no-gpu),
the quick benchmark with --bench, the collectives with --collectives. `check`, `report` and `fix` take the same
flags and so run the same stages; a replayed snapshot runs none and re-judges the results it carries."""

from __future__ import annotations

from dataclasses import dataclass

from rocm_doctor.engine.pipeline import Stage


@dataclass
class StageChoice:
    kernels: bool = True  # `--no-gpu` turns it off
    bench: bool = False
    collectives: bool = False


def chosen(choice: StageChoice) -> list[Stage]:
    stages: list[Stage] = []
    if choice.kernels:
        from rocm_doctor.gpu.kernels.stage import KernelStage

        stages.append(KernelStage())
    if choice.bench:
        from rocm_doctor.gpu.bench.stage import BenchStage

        stages.append(BenchStage(preset="quick"))
    if choice.collectives:
        from rocm_doctor.distributed.stage import CollectivesStage

        stages.append(CollectivesStage())
    return stages


def replayed() -> list[Stage]:
    """Every stage, for a replay: each re-judges the result a snapshot carries and is silent without one."""
    return chosen(StageChoice(kernels=True, bench=True, collectives=True))
