"""`rocm-doctor snapshot`: record this machine's raw observations for replay with `check --from`."""

from __future__ import annotations

from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorUsageError, pass_app
from rocm_doctor.cli.options import (chosen_run_env, command_timeout_option, force_option, python_option,
                                     refuse_to_overwrite, run_env_options, torch_timeout_option)


@click.command("snapshot")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="File to write (default: stdout).")
@force_option
@python_option
@run_env_options
@torch_timeout_option
@command_timeout_option
@pass_app
def command(app, output, force, python, torch_timeout, command_timeout, unit=None, user_unit=None, kernel=None):
    """Write the raw observations (commands, files, env, torch probe) as a versioned JSON snapshot."""
    from rocm_doctor import safefile
    from rocm_doctor.diagnose import Options, observe
    from rocm_doctor.probes import TargetError
    from rocm_doctor.report.format import Json
    from rocm_doctor.report.results import SnapshotResult

    refuse_to_overwrite([output], force)
    run_target = chosen_run_env(unit, user_unit, kernel, None)
    try:
        observations = observe(Options(python=python, torch_timeout_s=torch_timeout,
                      command_timeout_s=command_timeout, run_target=run_target))
    except TargetError as exc:
        raise DoctorUsageError(str(exc)) from None
    result = SnapshotResult(observations)
    if output is None:
        app.show(result, "json")
        return
    try:
        safefile.write(output, Json.text(result))
    except safefile.WriteError as exc:
        raise DoctorUsageError(str(exc)) from None
    app.say(f"snapshot written to {output}")
