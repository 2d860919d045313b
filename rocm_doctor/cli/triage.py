"""`rocm-doctor triage FILE...`: diagnose what a user pasted (a log, rocminfo, a ticket's text; `-` reads standard
input), judging the paste alone and never this machine."""

from __future__ import annotations

from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorUsageError, pass_app
from rocm_doctor.cli.options import fail_on_option

PASTE_CAP = 4_000_000  # the end of a long log is where its error is


@click.command("triage")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: the report check --json prints.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print Markdown to answer the ticket with.")
@click.option("-v", "--verbose", is_flag=True, help="Show evidence, skipped checks and ids.")
@fail_on_option
@pass_app
def command(app, files, as_json, as_markdown, verbose, fail_on):
    """Diagnose pasted logs and tool outputs (several combine) without looking at this machine."""
    from rocm_doctor import inputfile
    from rocm_doctor.report.results import DiagnosisResult
    from rocm_doctor.triage import triage

    if as_json and as_markdown:
        raise DoctorUsageError("--json and --markdown each print the whole diagnosis; choose one")
    pastes = []
    for path in files:
        try:
            raw, _ = inputfile.read_tail(path, PASTE_CAP)
        except inputfile.InputError as exc:
            raise DoctorUsageError(str(exc)) from None
        pastes.append(("stdin" if str(path) == "-" else str(path), raw))
    report, facts = triage(pastes)
    app.use("json" if as_json else "markdown" if as_markdown else "human", verbose=verbose)
    app.show(DiagnosisResult(report, facts))
    app.exit(app.code_for(report.findings, fail_on))
