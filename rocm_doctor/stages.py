"""The stages that run after the static checks: confirm (GPU kernels), measure (benchmark), collectives.

Each stage runs in child processes of the target interpreter, adds its data to report.stages and turns its
outcome into findings; none of them can take the report down. A replayed snapshot runs no GPU work: it only
re-judges benchmark results the snapshot carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rocm_doctor.facts.facts import Facts
from rocm_doctor.report.model import Report


@dataclass
class StageChoice:
    kernels: bool = True  # whenever torch sees a GPU; `--no-gpu` turns it off
    bench: bool = False
    collectives: bool = False
    replay: bool = False  # a snapshot given with --from: no GPU work
    show_progress: bool = True
    only: Sequence[str] = ()
    skip: Sequence[str] = ()


def run_stages(report: Report, facts: Facts, choice: StageChoice) -> None:
    if choice.kernels and not choice.replay:
        from rocm_doctor.gpu.kernels.stage import run_in_check

        run_in_check(report, facts, only=choice.only, skip=choice.skip)
    if choice.bench or choice.replay:
        from rocm_doctor.cli.bench import attach_bench

        attach_bench(report, facts, run=choice.bench and not choice.replay, show_progress=choice.show_progress)
    if choice.collectives and not choice.replay:
        from rocm_doctor.distributed.stage import run_stage

        report.stages["collectives"], report.findings = run_stage(
            facts, report.findings, show_progress=choice.show_progress
        )
