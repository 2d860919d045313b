"""The `rocm-doctor` command group. Each command lives in its own module and is imported lazily."""

from __future__ import annotations

import errno
import importlib
import os
import signal
import sys
from typing import Optional

import click

from rocm_doctor import __version__
from rocm_doctor.cli.app import EXIT_CANNOT_RUN, EXIT_CLOSED_PIPE, App, DoctorGroup, keep_words_whole, pass_app

# command name -> module defining `command`
COMMANDS = {
    "bench": "rocm_doctor.cli.bench",
    "check": "rocm_doctor.cli.check",
    "snapshot": "rocm_doctor.cli.snapshot",
    "checks": "rocm_doctor.cli.checks_list",
    "explain": "rocm_doctor.cli.explain",
    "fleet": "rocm_doctor.cli.fleet",
    "kernels": "rocm_doctor.cli.kernels",
    "fix": "rocm_doctor.cli.fix",
    "report": "rocm_doctor.cli.report",
    "data": "rocm_doctor.cli.data",
    "diff": "rocm_doctor.cli.diff",
    "triage": "rocm_doctor.cli.triage",
}


class LazyGroup(DoctorGroup):
    """Imports a command's module only when it runs, so `--version` and `checks` stay fast."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        module = COMMANDS.get(name)
        return importlib.import_module(module).command if module else None


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Start with `rocm-doctor check`. Exit codes, for every command: 0 fine, 1 problems at or above "
                    "--fail-on, 2 could not do its job.")
@click.version_option(__version__, prog_name="rocm-doctor")
@click.pass_context
@pass_app
def cli(app, ctx):
    """Diagnose and repair PyTorch GPU setups (AMD ROCm first; NVIDIA too).

    Without a command it prints this help and exits 0."""
    if ctx.invoked_subcommand is None:
        app.write(ctx.get_help())


def _tolerate_narrow_encodings() -> None:
    """A console or pipe that cannot encode a character ('—', '✓'; PYTHONIOENCODING=ascii, a legacy code page) gets
    a replacement character instead of a UnicodeEncodeError in the middle of the report."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (tests, pythonw)
            pass


def _printing(exc: BaseException) -> bool:
    """Whether `exc` came out of a write to the terminal streams (click.echo or rich), not from other work."""
    tb, innermost = exc.__traceback__, ""
    while tb is not None:
        innermost, tb = tb.tb_frame.f_code.co_filename.replace("\\", "/"), tb.tb_next
    return innermost.endswith(("/click/utils.py", "/rich/console.py"))


def _stdout_failed(app: App, exc: Optional[OSError] = None) -> Optional[int]:
    """The exit code when standard output lost what was written to it, else None. A closed pipe (the reader, such
    as `head`, had enough) is not a result of the diagnosis: it ends quietly with the shell's SIGPIPE code, not with
    a contract code; a full disk or `> /dev/full` says so in one line (2). Either way standard output then gets out
    of the way, so that shutting down does not fail a second time."""
    if isinstance(sys.stdout, click.utils.PacifyFlushWrapper):  # click met a closed pipe and said nothing
        return EXIT_CLOSED_PIPE
    try:
        sys.stdout.flush()
    except ValueError:  # closed
        return None
    except OSError as flush_exc:
        exc = flush_exc
    else:
        if exc is None or not _printing(exc):
            return None
    try:
        sys.stdout = open(os.devnull, "w")
    except OSError:
        pass
    if exc.errno == errno.EPIPE:
        return EXIT_CLOSED_PIPE
    app.error(f"cannot write to standard output: {exc.strerror or exc}")
    return EXIT_CANNOT_RUN


def _stopped(app: App, signum: int) -> None:
    from rocm_doctor.engine import runner

    runner.reported()
    runner.stop_children()
    name = signal.Signals(signum).name
    app.say("rocm-doctor: interrupted" if signum == signal.SIGINT else f"rocm-doctor: stopped by {name}")
    sys.exit(128 + signum)


def _stop_if_signalled(app: App) -> None:
    """A signal whose Interrupted had to wait for an import and never reached the command still decides the exit."""
    from rocm_doctor.engine import runner

    if runner.signalled() is not None:
        _stopped(app, runner.signalled())


def main() -> None:
    from rocm_doctor.engine import runner

    _tolerate_narrow_encodings()
    keep_words_whole()
    runner.stop_children_on_signals()
    app = App()
    try:
        cli.main(prog_name="rocm-doctor", standalone_mode=True, obj=app)
    except runner.Interrupted as exc:
        _stopped(app, exc.signum)
    except SystemExit as exc:
        _stop_if_signalled(app)
        failed = _stdout_failed(app)
        if failed is not None:
            sys.exit(failed)
        raise exc
    except OSError as exc:
        _stop_if_signalled(app)
        failed = _stdout_failed(app, exc)
        if failed is not None:
            sys.exit(failed)
        app.say(f"rocm-doctor: internal error: {type(exc).__name__}: {exc} (please report this)")
        sys.exit(EXIT_CANNOT_RUN)
    except Exception as exc:  # last resort: never a traceback for the user
        _stop_if_signalled(app)
        app.say(f"rocm-doctor: internal error: {type(exc).__name__}: {exc} (please report this)")
        sys.exit(EXIT_CANNOT_RUN)
    failed = _stdout_failed(app)
    if failed is not None:
        sys.exit(failed)
