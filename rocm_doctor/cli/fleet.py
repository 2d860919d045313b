"""`rocm-doctor fleet diff REPORT.json ...`: compare node reports offline (what differs; the odd node)."""

from __future__ import annotations

from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorGroup, EXIT_OK, EXIT_PROBLEMS, DoctorUsageError, pass_app
from rocm_doctor.cli.options import force_option, refuse_to_overwrite


@click.group("fleet", cls=DoctorGroup)
def command():
    """Fleet reports over many nodes (launch with `torchrun ... -m rocm_doctor.distributed`; `python -m
    rocm_doctor.distributed --help` lists its options)."""


@command.command("diff")
@click.argument("reports", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the fleet report as JSON instead of the table.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Also write the fleet report (JSON).")
@force_option
@pass_app
def diff_command(app, reports, as_json, output, force):
    """Compare node reports (from the fleet worker), fleet reports, or `rocm-doctor check --json` reports."""
    from rocm_doctor import inputfile
    from rocm_doctor.distributed.fleet import diff, expand
    from rocm_doctor.parsers import json_text
    from rocm_doctor.report.fleet_view import FleetResult
    from rocm_doctor.report.format import Json

    refuse_to_overwrite([output], force)
    loaded = []
    for path in reports:
        try:
            raw = inputfile.read(path)
        except inputfile.InputError as exc:
            raise DoctorUsageError(str(exc)) from None
        try:
            value = json_text.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise DoctorUsageError(f"{path}: not a JSON report ({exc})") from None
        if isinstance(value, dict) and "findings" in value and "kind" not in value:
            value = dict(value, _name=path.stem)
        try:  # each file alone first, so a malformed one is named (never a traceback)
            if not expand([value]):
                app.warn(f"{path} is not a node, fleet or check report; ignored")
                continue
            diff([value])
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            raise DoctorUsageError(f"{path}: malformed report ({type(exc).__name__}: {exc})") from None
        loaded.append(value)
    try:
        fleet = diff(loaded)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise DoctorUsageError(f"the reports could not be compared ({type(exc).__name__}: {exc})") from None
    if not fleet["nodes"]:
        raise DoctorUsageError("none of the files is a node, fleet or check report")
    result = FleetResult(fleet)
    if output:
        from rocm_doctor import safefile

        try:
            safefile.write(output, Json.text(result))
        except safefile.WriteError as exc:
            raise DoctorUsageError(str(exc)) from None
    app.use("json" if as_json else "human")
    app.show(result)
    app.exit(EXIT_PROBLEMS if fleet["differences"] or fleet["finding_differences"] else EXIT_OK)
