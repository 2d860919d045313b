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


class DoctorGroup(click.Group):
    """A command group whose help lists each command's whole summary (click cuts it at about 45 characters) and
    that answers a mistyped command with the closest names."""

    def format_commands(self, ctx, formatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, " ".join((cmd.help or "").split("\n\n", 1)[0].split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from rocm_doctor.engine.engine import did_you_mean

            ctx.fail(f"No such command '{name}'{did_you_mean(name, self.list_commands(ctx))}.")
        return super().resolve_command(ctx, args)


NB_HYPHEN = "\u2011"  # textwrap breaks after "-" but not after a non-breaking hyphen


def keep_words_whole() -> None:
    """click wraps help text after hyphens ("--allow-" / "install", "rocm-" / "doctor"); option and command names
    must stay whole, so its wrapper sees non-breaking hyphens and gives the plain ones back."""
    from click import formatting

    wrap = formatting.wrap_text
    if getattr(wrap, "keeps_words_whole", False):
        return

    def wrap_text(text, *args, **kwargs):
        return wrap(text.replace("-", NB_HYPHEN), *args, **kwargs).replace(NB_HYPHEN, "-")

    wrap_text.keeps_words_whole = True
    formatting.wrap_text = wrap_text


def console(stderr: bool = False):
    """A rich console that goes plain when NO_COLOR is set or the stream is not a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    no_color = "NO_COLOR" in os.environ
    return Console(file=stream, no_color=no_color, highlight=False, soft_wrap=not stream.isatty())
