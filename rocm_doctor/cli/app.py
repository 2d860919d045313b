"""The app object every command writes through (its stdout and stderr consoles, the status line, the output
format chosen and the exit code), the exit codes, and the one way a command gives up with exit code 2."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from typing import Any, Callable, Iterator, NoReturn, Optional

import click

# The exit codes, the same for every command (README's table).
EXIT_OK = 0
EXIT_PROBLEMS = 1  # problems at or above --fail-on
EXIT_CANNOT_RUN = 2  # could not do its job
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: the shell's code for a writer whose reader left (`| head`)


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


def diagnosed(options):
    """The command's request through the one pipeline (rocm_doctor/diagnose.py): its Report and Facts. What the
    user gave that cannot be used (an unreadable snapshot, a bad --python or service, an unknown check id) ends the
    command with one line and exit code 2."""
    from rocm_doctor.diagnose import diagnose
    from rocm_doctor.engine.engine import UnknownCheckError
    from rocm_doctor.facts.snapshot import SnapshotError
    from rocm_doctor.probes import TargetError

    try:
        return diagnose(options)
    except (SnapshotError, TargetError, UnknownCheckError) as exc:
        raise DoctorUsageError(str(exc)) from None


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


class App:
    """What a command writes through, made once per run and handed to each command by click (`pass_app`). The
    result goes to standard output in the format the command chose (report/format.py); notes, warnings and the
    status line go to standard error; the command ends with `exit`. Commands never print."""

    def __init__(self) -> None:
        self._consoles: dict[bool, Any] = {}
        self.format = "human"
        self.verbose = False

    # -- where output goes ----------------------------------------------------------------------------------
    @property
    def out(self):
        """The rich console on standard output (made when first used: plain output never loads rich)."""
        return self._console(stderr=False)

    @property
    def err(self):
        return self._console(stderr=True)

    def _console(self, stderr: bool):
        if stderr not in self._consoles:
            self._consoles[stderr] = console(stderr=stderr)
        return self._consoles[stderr]

    @property
    def terminal(self) -> bool:
        return sys.stdout.isatty()

    def width(self) -> Optional[int]:
        """The terminal's width for plain columns (COLUMNS first); None for a pipe, where one line per row suits
        grep."""
        if not self.terminal and not os.environ.get("COLUMNS", "").isdigit():
            return None
        return shutil.get_terminal_size().columns

    def write(self, text: str = "", nl: bool = True) -> None:
        """Plain text on standard output."""
        click.echo(text, nl=nl)

    # -- the result -----------------------------------------------------------------------------------------
    def use(self, fmt: str, verbose: bool = False) -> None:
        """The format the result is shown in: human, json or markdown."""
        self.format, self.verbose = fmt, verbose

    def show(self, result, fmt: Optional[str] = None) -> None:
        """The command's result in the chosen format (or `fmt`)."""
        from rocm_doctor.report.format import FORMATS, NoView

        try:
            FORMATS[fmt or self.format](verbose=self.verbose).emit(result, self)
        except NoView as exc:
            raise DoctorUsageError(str(exc)) from None

    # -- the person at the terminal -------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        """A line for the person on standard error, beside the result (a file written, what was redacted)."""
        click.echo(text, err=True)

    def note(self, text: str) -> None:
        self.say(f"rocm-doctor: note: {text}")

    def warn(self, text: str) -> None:
        self.say(f"rocm-doctor: warning: {text}")

    def error(self, text: str) -> None:
        """An error said beside a result that still comes (the command then exits 2 through `exit`)."""
        self.say(f"rocm-doctor: error: {text}")

    @property
    def interactive(self) -> bool:
        """Whether a person can answer a question (standard input is a terminal)."""
        try:
            return sys.stdin.isatty()
        except (AttributeError, ValueError):
            return False

    def confirm(self, question: str) -> bool:
        return click.confirm(question, default=False, err=True)

    @contextlib.contextmanager
    def status(self, first: str = "starting", enabled: bool = True) -> Iterator[Optional[Callable[[str], None]]]:
        """The one-line status on standard error while the command works (only on a terminal): yields a callback
        that shows its text (`first` until it is called), or None when nothing is shown."""
        if not (enabled and sys.stderr.isatty()):
            yield None
            return
        with self.err.status(first) as line:
            yield lambda text: line.update(text)

    @contextlib.contextmanager
    def bar(self, first: str, total: int, unit: str, enabled: bool = True) -> Iterator[Optional[Any]]:
        """A progress bar of `total` `unit` on standard error (only on a terminal): yields a rich Progress task
        handle with `describe(text)` and `advance()`, or None."""
        if not (enabled and sys.stderr.isatty()):
            yield None
            return
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                            TextColumn("{task.completed}/{task.total} " + unit), TimeElapsedColumn(),
                            console=self.err, transient=True)
        task = progress.add_task(first, total=total)
        with progress:
            yield _Bar(progress, task)

    # -- the end --------------------------------------------------------------------------------------------
    @staticmethod
    def code_for(findings, fail_on: str) -> int:
        """0 when no finding is at or above `fail_on`, else 1: one contract for every command that judges."""
        from rocm_doctor.engine.model import Status

        threshold = Status(fail_on).rank
        return EXIT_PROBLEMS if any(f.status.rank >= threshold for f in findings) else EXIT_OK

    @staticmethod
    def exit(code: int = EXIT_OK) -> NoReturn:
        raise SystemExit(code)


class _Bar:
    def __init__(self, progress, task) -> None:
        self._progress, self._task = progress, task

    def describe(self, text: str) -> None:
        self._progress.update(self._task, description=text)

    def advance(self) -> None:
        self._progress.advance(self._task)


pass_app = click.make_pass_decorator(App, ensure=True)
