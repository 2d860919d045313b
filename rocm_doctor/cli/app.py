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


class OneLineUsageError(DoctorUsageError):
    """click's usage error (usage line, hint, blank line, message) said in one line, with where help is."""

    def __init__(self, error: click.UsageError, path: str = "rocm-doctor") -> None:
        path = error.ctx.command_path if error.ctx is not None else path
        super().__init__(f"{error.format_message()} (see {path} --help)")
        self.exit_code = error.exit_code


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

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise OneLineUsageError(exc) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OneLineUsageError:
            raise
        except click.UsageError as exc:
            sub = f"{ctx.command_path} {ctx.invoked_subcommand}" if ctx.invoked_subcommand else ctx.command_path
            raise OneLineUsageError(exc, sub) from None

    # names a user may try for what a command under another name does
    ELSEWHERE = {"history": "diff --list, or fix --history for the fix runs",
                 "undo": "fix --undo", "doctor": "check", "diagnose": "check", "status": "check"}

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from rocm_doctor.engine.engine import did_you_mean

            elsewhere = self.ELSEWHERE.get(name) if ctx.parent is None else None
            hint = f" (try: {ctx.command_path} {elsewhere})" if elsewhere else did_you_mean(
                name, self.list_commands(ctx))
            ctx.fail(f"No such command '{name}'{hint}.")
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


EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: the shell's code for a writer whose reader left (`| head`)


def console(stderr: bool = False):
    """A rich console that goes plain when NO_COLOR is set or the stream is not a terminal."""
    from rich.console import Console

    class DoctorConsole(Console):
        def on_broken_pipe(self) -> None:
            """The reader left (`| head`): quietly, with the shell's code, not a contract code (rich says 1)."""
            self.quiet = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.file.fileno())
            raise SystemExit(EXIT_CLOSED_PIPE)

    stream = sys.stderr if stderr else sys.stdout
    no_color = "NO_COLOR" in os.environ
    return DoctorConsole(file=stream, no_color=no_color, highlight=False, soft_wrap=not stream.isatty())
