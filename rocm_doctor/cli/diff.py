"""`rocm-doctor diff [A] [B]`: what changed between two runs, most relevant first (docs/history.md).

Exit codes: 0 no relevant change, 1 changes (with --fail-on warn|fail: a check that got worse, to that status or
above), 2 could not compare (no runs, an unknown id, an unreadable file).
"""

from __future__ import annotations

import click

from rocm_doctor.cli.app import EXIT_OK, EXIT_PROBLEMS, DoctorUsageError, pass_app
from rocm_doctor.cli.options import FAIL_ON


@click.command("diff")
@click.argument("older", required=False, metavar="[A]")
@click.argument("newer", required=False, metavar="[B]")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the common envelope, kind diff).")
@click.option("--format", "fmt", type=click.Choice(["human", "json", "markdown"]), default=None,
              help="Output format (default: human; markdown to paste into an issue).")
@click.option("--list", "list_runs", is_flag=True,
              help="List the stored runs: id, date, verdict, what each diagnosed (which Python), root causes.")
@click.option("--fail-on", type=click.Choice(("change",) + FAIL_ON), default="change", show_default=True,
              help="What makes the exit code 1: any relevant change, or a check that got worse, reaching warn or fail.")
@pass_app
def command(app, older, newer, as_json, fmt, list_runs, fail_on):
    """Compare two runs: a stored run's id, a date (the last run that day) or a snapshot/report file; by default
    the last healthy run and the newest."""
    from rocm_doctor.fix.journal import JournalError, trusted_state_dir
    from rocm_doctor.history import rundiff, sides, store

    if as_json and fmt not in (None, "json"):
        raise DoctorUsageError(f"--json and --format {fmt} ask for two formats; give one")
    app.use("json" if as_json else (fmt or "human"))
    try:
        state = trusted_state_dir()
    except JournalError as exc:
        raise DoctorUsageError(str(exc)) from None
    runs, unreadable = store.runs(store.folder(state))
    for path in unreadable:
        app.warn(f"{path} is not a stored run this rocm-doctor can read; ignored")
    if list_runs:
        _list(app, runs)
        app.exit(EXIT_OK)
    try:
        a, b = sides.choose(older, newer, runs, store.folder(state))
    except sides.HistoryError as exc:
        raise DoctorUsageError(str(exc)) from None
    from rocm_doctor.engine.registry import load_registry
    from rocm_doctor.report.results import DiffResult

    doc = rundiff.document(rundiff.judge(a), rundiff.judge(b), load_registry().checks, state)
    app.show(DiffResult(doc))
    app.exit(EXIT_PROBLEMS if _fails(doc, fail_on) else EXIT_OK)


def _fails(doc, fail_on: str) -> bool:
    from rocm_doctor.engine.model import Status
    from rocm_doctor.history import rundiff

    if fail_on == "change":
        return rundiff.has_changes(doc)
    rank = {s.value: s.rank for s in Status}
    return any(rank.get(f["after"], 0) >= Status(fail_on).rank and rank.get(f["after"], 0) > rank.get(f["before"], 0)
               for f in doc.get("findings") or [])


def _list(app, runs) -> None:
    from rocm_doctor.history.sides import describe
    from rocm_doctor.report.results import RunListResult

    rows = [{"run": r.id, "created_at": r.created_at, "verdict": r.verdict, "diagnosed": describe(r.subject),
             "subject": r.subject, "root_causes": [c.get("finding") for c in r.root_causes]} for r in runs]
    app.show(RunListResult(rows))
