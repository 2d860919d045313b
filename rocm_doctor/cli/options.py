"""Options shared by the commands that diagnose (check, snapshot, report, fix)."""

from __future__ import annotations

import click

python_option = click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Interpreter whose torch to diagnose (default: the active virtual/conda environment's, else this one).",
)
torch_timeout_option = click.option(
    "--torch-timeout",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long the torch probe may take before it counts as hung.",
)
command_timeout_option = click.option(
    "--command-timeout",
    type=click.FloatRange(min=0.5),
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
