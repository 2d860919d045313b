"""The terminal a command writes to, and the one way a command gives up with exit code 2."""

from __future__ import annotations

import os
import sys

import click

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_CANNOT_RUN = 2


class DoctorUsageError(click.ClickException):
    """The doctor could not do its job; printed as one line, exit code 2."""

    exit_code = EXIT_CANNOT_RUN

    def show(self, file=None) -> None:
        click.echo(f"rocm-doctor: error: {self.format_message()}", err=True, file=file)


def console(stderr: bool = False):
    """A rich console that goes plain when NO_COLOR is set or the stream is not a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    no_color = "NO_COLOR" in os.environ
    return Console(file=stream, no_color=no_color, highlight=False, soft_wrap=not stream.isatty())
