"""`rocm-doctor report`: one redacted bundle (findings, facts, raw snapshot, stages) to attach to a support ticket."""

from __future__ import annotations

from pathlib import Path

import click

from rocm_doctor.cli.app import EXIT_OK, DoctorUsageError, diagnosed, pass_app
from rocm_doctor.cli.options import (FAIL_ON, chosen_run_env, chosen_stages, command_timeout_option, force_option, python_option, refuse_to_overwrite, run_env_options, stage_options,
                                     torch_timeout_option)

FORMATS = ("markdown", "json", "both")


@click.command("report")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="File to write (default: stdout); only this file is written, in the one format asked for.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="markdown (to paste), json (to attach; replays with check --from) or both: FILE and FILE's name "
                   "with the other suffix (.md / .json). Default: json for a FILE ending in .json, else markdown.")
@force_option
@click.option("--fail-on", type=click.Choice(FAIL_ON + ("never",)), default="never", show_default=True,
              help="Lowest finding status that makes the exit code 1; never: 0 whenever the report was written.")
@click.option("--no-redact", is_flag=True, help="Keep user names, hosts, addresses, serials and secrets (private use only).")
@click.option("--show-redactions", is_flag=True, help="List on stderr what was replaced and where (never the values).")
@python_option
@click.option("--from", "from_file", type=click.Path(path_type=Path), help="Build the report from a snapshot or report file.")
@click.option("--online", is_flag=True, help="Include the package-index connectivity check (network).")
@run_env_options
@stage_options
@torch_timeout_option
@command_timeout_option
@pass_app
def command(app, output, fmt, force, fail_on, no_redact, show_redactions, python, from_file, online, torch_timeout,
            command_timeout, no_gpu=False, bench=False, collectives=False, unit=None, user_unit=None, kernel=None):
    """Write a support bundle for a GitHub issue: Markdown to paste, JSON to attach (replayable with check --from)."""
    from rocm_doctor.diagnose import Options
    from rocm_doctor.report import bundle
    from rocm_doctor.report.redact import local_identities

    if from_file is not None and python:
        raise DoctorUsageError("--from replays a snapshot; --python applies only to a live run")
    fmt = fmt or ("json" if output is not None and output.suffix.lower() == ".json" else "markdown")
    targets = _targets(output, fmt)
    refuse_to_overwrite(targets.values(), force)
    options = Options(python=python, from_file=from_file, torch_timeout_s=torch_timeout,
                      command_timeout_s=command_timeout, online=online,
                      stages=chosen_stages(no_gpu, bench, collectives),
                      run_target=chosen_run_env(unit, user_unit, kernel, from_file))
    report, facts = diagnosed(options)

    data = bundle.build(report, facts)
    redactions = []
    if not no_redact:
        data, redactions = bundle.redact_bundle(data, local_identities())
    written = _write(app, data, targets)
    if show_redactions:
        app.say(f"{len(redactions)} place(s) redacted:" if redactions else "nothing was redacted")
        for item in redactions:
            app.say(f"  {item.path}: {', '.join(item.kinds)}" + (f" (x{item.count})" if item.count > 1 else ""))
    if written:
        note = "not redacted" if no_redact else f"redacted ({len(redactions)} places; --show-redactions lists them)"
        app.say(f"report written to {' and '.join(map(str, written))}, {note}")
    app.exit(EXIT_OK if fail_on == "never" else app.code_for(report.findings, fail_on))


def _targets(output: Path | None, fmt: str) -> dict[str, Path | None]:
    """format -> the file it goes to (None: stdout). `both` pairs FILE with its name under the other suffix."""
    if fmt != "both":
        return {fmt: output}
    if output is None:
        raise DoctorUsageError("--format both writes two files: give -o FILE")
    if output.suffix.lower() == ".json":
        return {"markdown": output.with_suffix(".md"), "json": output}
    return {"markdown": output, "json": output.with_suffix(".json")}


def _write(app, data: dict, targets: dict[str, Path | None]) -> list[Path]:
    """Each format to its file, or to standard output; the JSON ends with a newline, the Markdown has its own."""
    from rocm_doctor import safefile
    from rocm_doctor.report.format import FORMATS
    from rocm_doctor.report.results import BundleResult

    json_path = targets.get("json")
    result = BundleResult(data, json_name=json_path.name if json_path and "markdown" in targets else None)
    written = []
    for fmt, path in targets.items():
        text = FORMATS[fmt].text(result)
        text += "" if text.endswith("\n") else "\n"
        if path is None:
            app.write(text, nl=False)
            continue
        try:
            safefile.write(path, text)
        except safefile.WriteError as exc:
            raise DoctorUsageError(str(exc)) from None
        written.append(path)
    return written
