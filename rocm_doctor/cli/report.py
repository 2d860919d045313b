"""`rocm-doctor report`: one redacted bundle (findings, facts, raw snapshot, stages) to attach to a support ticket."""

from __future__ import annotations

from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorUsageError
from rocm_doctor.cli.options import (chosen_stages, command_timeout_option, python_option, stage_options,
                                     torch_timeout_option)


@click.command("report")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="File to write (default: stdout). With FILE.md, FILE.json is written beside it.")
@click.option("--format", "fmt", type=click.Choice(["json", "markdown"]),
              help="Output format (default: from the file's suffix; markdown on stdout).")
@click.option("--no-redact", is_flag=True, help="Keep user names, hosts, addresses, serials and secrets (private use only).")
@click.option("--show-redactions", is_flag=True, help="List on stderr what was replaced and where (never the values).")
@python_option
@click.option("--from", "from_file", type=click.Path(path_type=Path), help="Build the report from a snapshot or report file.")
@click.option("--online", is_flag=True, help="Include the package-index connectivity check (network).")
@stage_options
@torch_timeout_option
@command_timeout_option
def command(output, fmt, no_redact, show_redactions, python, from_file, online, torch_timeout, command_timeout,
            no_gpu=False, bench=False, collectives=False):
    """Write a support bundle for a GitHub issue: Markdown to paste, JSON to attach (replayable with check --from)."""
    from rocm_doctor.diagnose import Options, diagnose
    from rocm_doctor.facts.snapshot import SnapshotError
    from rocm_doctor.probes._target import TargetError
    from rocm_doctor.report import bundle
    from rocm_doctor.report.redact import local_identities

    if from_file is not None and python:
        raise DoctorUsageError("--from replays a snapshot; --python applies only to a live run")
    fmt = fmt or ("json" if output is not None and output.suffix.lower() == ".json" else "markdown")
    options = Options(python=python, from_file=from_file, torch_timeout_s=torch_timeout,
                      command_timeout_s=command_timeout, online=online,
                      stages=chosen_stages(no_gpu, bench, collectives))
    try:
        report, facts = diagnose(options)
    except (SnapshotError, TargetError) as exc:
        raise DoctorUsageError(str(exc)) from None

    data = bundle.build(report, facts)
    redactions = []
    if not no_redact:
        data, redactions = bundle.redact_bundle(data, local_identities())
    written = _write(data, output, fmt)
    if show_redactions:
        click.echo(f"{len(redactions)} place(s) redacted:" if redactions else "nothing was redacted", err=True)
        for item in redactions:
            click.echo(f"  {item.path}: {', '.join(item.kinds)}" + (f" (x{item.count})" if item.count > 1 else ""), err=True)
    if written:
        note = "not redacted" if no_redact else f"redacted ({len(redactions)} places; --show-redactions lists them)"
        click.echo(f"report written to {' and '.join(map(str, written))}, {note}", err=True)


def _write(data: dict, output: Path | None, fmt: str) -> list[Path]:
    """Markdown gets its JSON beside it, except through a link or on a device or pipe (`-o /dev/stdout`, which
    would put the JSON at /dev/stdout.json): those get the Markdown only."""
    from rocm_doctor import safefile
    from rocm_doctor.report import bundle, markdown

    if output is None:
        click.echo(bundle.to_json(data) if fmt == "json" else markdown.render(data), nl=fmt == "json")
        return []
    try:
        if fmt == "json":
            safefile.write(output, bundle.to_json(data) + "\n")
            return [output]
        if safefile.is_stream(output) or output.is_symlink():
            safefile.write(output, markdown.render(data))
            return [output]
        json_path = output.with_suffix(".json") if output.suffix.lower() != ".json" else output.with_name(output.name + ".full.json")
        safefile.write(json_path, bundle.to_json(data) + "\n")
        safefile.write(output, markdown.render(data, json_name=json_path.name))
        return [output, json_path]
    except safefile.WriteError as exc:
        raise DoctorUsageError(str(exc)) from None
