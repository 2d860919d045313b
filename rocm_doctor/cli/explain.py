"""`rocm-doctor explain ID`: what a check looks at, why it matters, how to fix it, references."""

from __future__ import annotations

import click

from rocm_doctor.cli.app import DoctorUsageError, pass_app


@click.command("explain")
@click.argument("check_id")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: the check's id, title, severity, "
                                                     "platforms and documentation.")
@pass_app
def command(app, check_id, as_json):
    """Show the documentation of one check (ids from `rocm-doctor checks`; a finding id like ID:subject works too)."""
    from rocm_doctor.engine.engine import did_you_mean
    from rocm_doctor.engine.registry import check_doc, load_registry
    from rocm_doctor.report.results import ExplainResult

    registry = load_registry()
    check = registry.by_id(check_id.split(":", 1)[0])
    if check is None:
        hint = did_you_mean(check_id.split(":", 1)[0], registry.ids())
        raise DoctorUsageError(f"unknown check id: {check_id}{hint or '; rocm-doctor checks lists them'}")
    app.use("json" if as_json else "human")
    app.show(ExplainResult(check, check_doc(check)))
