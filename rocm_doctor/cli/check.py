"""`rocm-doctor check`: diagnose this machine (or a snapshot) and report findings."""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorUsageError, diagnosed, pass_app
from rocm_doctor.cli.options import (chosen_run_env, chosen_stages, command_timeout_option, fail_on_option,
                                     python_option, run_env_options, stage_options, target_args,
                                     torch_timeout_option)


@click.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (its JSON Schema, report.schema.json, is installed in the "
                   "rocm_doctor/data package folder).")
@click.option("-v", "--verbose", is_flag=True, help="Show evidence, skipped checks and ids.")
@python_option
@click.option("--from", "from_file", type=click.Path(path_type=Path), help="Re-diagnose a snapshot or report file.")
@fail_on_option
@click.option("--only", multiple=True, metavar="ID", help="Run only this check (repeatable).")
@click.option("--skip", multiple=True, metavar="ID", help="Do not run this check (repeatable).")
@click.option("--online", is_flag=True, help="Also check that the package index the fixes use is reachable (network).")
@click.option("--log", "log_file", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
              help="Also match known error messages in this log (a traceback, AMD_LOG_LEVEL output; - reads standard "
                   "input) to their causes.")
@click.option("--no-history", is_flag=True,
              help="Neither compare this run with the run history nor add it there (`rocm-doctor diff`).")
@run_env_options
@stage_options
@torch_timeout_option
@command_timeout_option
@pass_app
def command(app, as_json, verbose, python, from_file, no_gpu, fail_on, only, skip, online, bench, torch_timeout,
            command_timeout, log_file, collectives, no_history, unit=None, user_unit=None, kernel=None):
    """Diagnose the PyTorch GPU setup and say what to do about each problem."""
    from rocm_doctor.diagnose import Options

    if from_file is not None and python:
        raise DoctorUsageError("--from replays a snapshot; --python applies only to a live run")
    options = Options(python=python, from_file=from_file, only=only, skip=skip, torch_timeout_s=torch_timeout,
                      command_timeout_s=command_timeout, online=online,
                      log=read_log(log_file) if log_file is not None else None,
                      stages=chosen_stages(no_gpu, bench, collectives),
                      run_target=chosen_run_env(unit, user_unit, kernel, from_file),
                      meanwhile=importer("rocm_doctor.report.results" if as_json else "rocm_doctor.report.human",
                                         *(() if from_file is not None or no_history else ("rocm_doctor.history.annotate",))))
    with app.status("diagnosing: loading the checks", enabled=not as_json) as progress:
        options.progress = progress
        report, facts = diagnosed(options)
    if from_file is None and not no_history:
        from rocm_doctor.history.annotate import after_check

        note = after_check(report, facts, add=not only and not skip)  # a partial run is no baseline
        if note:
            app.note(note)
    from rocm_doctor.report.results import DiagnosisResult

    app.use("json" if as_json else "human", verbose=verbose)
    app.show(DiagnosisResult(report, facts, again=target_args(python, unit, user_unit, kernel, from_file)))
    app.exit(app.code_for(report.findings, fail_on))


def importer(*names: str):
    """Imports the modules `names` when called: what this command needs after the diagnosis, imported while the
    probes run."""
    def run() -> None:
        for name in names:
            importlib.import_module(name)
    return run


LOG_CAP = 1_000_000


def read_log(path: Path) -> dict:
    """The probe value `user.log` (read by rocm_doctor.interpret.amd_derived): the log's last MB, the end being
    where a crash's message is. `-` is standard input; a pipe is read to its end (bounded)."""
    from rocm_doctor import inputfile

    try:
        raw, truncated = inputfile.read_tail(path, LOG_CAP)
    except inputfile.InputError as exc:
        raise DoctorUsageError(f"--log {exc}") from None
    return {"path": str(path), "text": raw.decode("utf-8", errors="replace"), "truncated": truncated}
