"""`rocm-doctor checks`: list every check with its id, title, severity and platforms."""

from __future__ import annotations

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
    # Plain aligned columns: a rich Table takes longer to lay out 80 rows than the rest of the command.
    widths = {key: max(len(key), *(len(row[key]) for row in rows)) for key in ("id", "area", "severity")}
    header = f"{'id':<{widths['id']}}  {'area':<{widths['area']}}  {'severity':<{widths['severity']}}  title [platforms]"
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row['id']:<{widths['id']}}  {row['area']:<{widths['area']}}  {row['severity']:<{widths['severity']}}  "
            f"{row['title']} [{','.join(row['platforms'])}]"
        )
    for problem in registry.problems:
        lines.append(f"could not load {problem.source}: {problem.error}")
    click.echo("\n".join(lines))
