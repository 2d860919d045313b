"""Options shared by the commands that diagnose (check, snapshot, report, fix)."""

from __future__ import annotations

import math

import click


class Seconds(click.ParamType):
    """A timeout: a finite number of seconds, at least `minimum` (FloatRange lets `nan` and `inf` through, and a
    wait of nan seconds never ends)."""

    name = "seconds"

    def __init__(self, minimum: float) -> None:
        self.minimum = minimum

    def convert(self, value, param, ctx):
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds < self.minimum:
            self.fail(f"{value!r} is not a finite number of seconds of at least {self.minimum:g}", param, ctx)
        return seconds


python_option = click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Interpreter whose torch to diagnose (default: the active virtual/conda environment's, else this one).",
)
torch_timeout_option = click.option(
    "--torch-timeout",
    type=Seconds(1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long the torch probe may take before it counts as hung.",
)
command_timeout_option = click.option(
    "--command-timeout",
    type=Seconds(0.5),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="How long each external tool (hipconfig, rocminfo, ...) may run before it is killed.",
)



def stage_options(command):
    """--no-gpu, --bench, --collectives: the GPU stages after the checks, the same for check, report and fix."""
    command = click.option("--collectives", is_flag=True,
                           help="Also run collectives across every local GPU (one process per GPU) and the "
                                "peer-access matrix.")(command)
    command = click.option("--bench", is_flag=True,
                           help="Also run the quick performance benchmark (`rocm-doctor bench --quick`).")(command)
    return click.option("--no-gpu", is_flag=True, help="Do not run GPU kernels (static checks only).")(command)


def chosen_stages(no_gpu: bool, bench: bool, collectives: bool) -> list:
    from rocm_doctor.stages import StageChoice, chosen

    return chosen(StageChoice(kernels=not no_gpu, bench=bench, collectives=collectives))
