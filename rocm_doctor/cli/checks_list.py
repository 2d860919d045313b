"""`rocm-doctor checks`: list every check with its id, title, severity and platforms."""

from __future__ import annotations

import click

from rocm_doctor.cli.app import console


@click.command("checks")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def command(as_json):
    """List the checks rocm-doctor runs (built-ins and plugins)."""
    from rocm_doctor.engine.registry import load_registry

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
    if as_json:
        import json

        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table(show_edge=False, pad_edge=False)
    for column in ("id", "title", "area", "severity", "platforms"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["id"], row["title"], row["area"], row["severity"], ",".join(row["platforms"]))
    out = console()
    out.print(table)
    for problem in registry.problems:
        out.print(f"could not load {problem.source}: {problem.error}")
