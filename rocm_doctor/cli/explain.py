"""`rocm-doctor explain ID`: what a check looks at, why it matters, how to fix it, references."""

from __future__ import annotations

import sys

import click

from rocm_doctor.cli.app import DoctorUsageError, console


@click.command("explain")
@click.argument("check_id")
def command(check_id):
    """Show the documentation of one check (ids from `rocm-doctor checks`; a finding id like ID:subject works too)."""
    from rocm_doctor.engine.engine import did_you_mean
    from rocm_doctor.engine.registry import check_doc, load_registry

    registry = load_registry()
    check = registry.by_id(check_id.split(":", 1)[0])
    if check is None:
        hint = did_you_mean(check_id.split(":", 1)[0], registry.ids())
        raise DoctorUsageError(f"unknown check id: {check_id}{hint or '; rocm-doctor checks lists them'}")
    doc = check_doc(check)
    header = f"{check.id} — {check.title}  [severity {check.severity.value}; {', '.join(p.value for p in check.platforms)}]"
    if not sys.stdout.isatty():  # plain text: no need to load rich's Markdown renderer
        click.echo(f"{header}\n\n{doc or 'No documentation is available for this check.'}")
        return
    from rich.markdown import Markdown

    out = console()
    out.print(header)
    out.print()
    out.print(Markdown(doc) if doc else "No documentation is available for this check.")
