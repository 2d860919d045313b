"""`rocm-doctor explain ID`: what a check looks at, why it matters, how to fix it, references."""

from __future__ import annotations

import click

from rocm_doctor.cli.app import DoctorUsageError, console


@click.command("explain")
@click.argument("check_id")
def command(check_id):
    """Show the documentation of one check (ids from `rocm-doctor checks`; a finding id like ID:subject works too)."""
    from rocm_doctor.engine.registry import check_doc, load_registry

    registry = load_registry()
    check = registry.by_id(check_id.split(":", 1)[0])
    if check is None:
        raise DoctorUsageError(f"unknown check id: {check_id} (see `rocm-doctor checks`)")
    doc = check_doc(check)
    out = console()
    out.print(f"{check.id} — {check.title}  [severity {check.severity.value}; {', '.join(p.value for p in check.platforms)}]")
    out.print()
    if doc is None:
        out.print("No documentation is available for this check.")
        return
    from rich.markdown import Markdown

    out.print(Markdown(doc) if out.is_terminal else doc)
