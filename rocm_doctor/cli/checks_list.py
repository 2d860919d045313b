"""`rocm-doctor checks`: list every check with its id, title, severity and platforms."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap

import click


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

        from rocm_doctor.report.envelope import envelope

        click.echo(json.dumps(envelope("checks", checks=rows), indent=2))
        return
    click.echo("\n".join(listing(rows, _width())))
    for problem in registry.problems:
        click.echo(f"could not load {problem.source}: {problem.error}")


def _width() -> int | None:
    """The terminal's width (COLUMNS first); None for a pipe, where one line per check suits grep."""
    if not sys.stdout.isatty() and not os.environ.get("COLUMNS", "").isdigit():
        return None
    return shutil.get_terminal_size().columns


def listing(rows: list[dict], width: int | None) -> list[str]:
    """Plain columns under one heading per area, the title wrapped at word boundaries under its own column (a rich
    Table takes longer to lay out 80 rows than the rest of the command)."""
    id_width = max(len(row["id"]) for row in rows)
    sev_width = max(len(row["severity"]) for row in rows)
    lead = 2 + id_width + 2 + sev_width + 2
    lines, area = [], None
    for row in rows:
        if row["area"] != area:
            area = row["area"]
            lines += ([""] if lines else []) + [area.upper()]
        title = f"{row['title']} [{', '.join(row['platforms'])}]"
        head = f"  {row['id']:<{id_width}}  {row['severity']:<{sev_width}}  "
        if width is None:
            lines.append(head + title)
        elif width - lead >= 30:
            wrapped = textwrap.wrap(title, width - lead, break_long_words=False, break_on_hyphens=False)
            lines += [head + wrapped[0]] + [" " * lead + more for more in wrapped[1:]]
        else:  # too narrow for columns: the title on lines of its own
            lines.append(f"  {row['id']}  {row['severity']}")
            lines += textwrap.wrap(title, max(20, width - 6), initial_indent="      ", subsequent_indent="      ",
                                   break_long_words=False, break_on_hyphens=False)
    return lines
