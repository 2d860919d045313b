"""`rocm-doctor checks`: list every check with its id, title, severity and platforms."""

from __future__ import annotations

import click

from rocm_doctor.cli.app import pass_app


@click.command("checks")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@pass_app
def command(app, as_json):
    """List the checks rocm-doctor runs (built-ins and plugins)."""
    from rocm_doctor.engine.registry import load_registry
    from rocm_doctor.report.results import ChecksResult

    registry = load_registry()
    rows = [
        {
            "id": c.id,
            "title": c.title,
            "area": c.area,
            "severity": c.severity.value,
            "platforms": [p.value for p in c.platforms],
        }
        for c in sorted(registry.checks, key=lambda c: (c.area, c.id))
    ]
    app.use("json" if as_json else "human")
    app.show(ChecksResult(rows, registry.problems))
