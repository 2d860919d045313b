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
