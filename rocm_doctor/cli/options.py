"""Options shared by the commands that diagnose (check, snapshot, report, fix)."""

from __future__ import annotations

import math

import click


class Seconds(click.ParamType):
    """A timeout: a finite number of seconds, at least `minimum` (FloatRange lets `nan` and `inf` through, and a
    wait of nan seconds never ends)."""

    name = "seconds"

    def __init__(self, minimum: float) -> None:
        self.minimum = minimum

    def convert(self, value, param, ctx):
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds < self.minimum:
            self.fail(f"{value!r} is not a finite number of seconds of at least {self.minimum:g}", param, ctx)
        return seconds


class DeviceChoice(click.Choice):
    """cuda or cpu; torch names a ROCm GPU "cuda" too, so `rocm` (or `gpu`, `hip`) is answered with that."""

    ALIASES = ("rocm", "hip", "gpu", "amd", "nvidia")

    def __init__(self) -> None:
        super().__init__(["cuda", "cpu"])

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.lower() in self.ALIASES:
            self.fail(f"{value!r} is not a device name here: use --device cuda, which is every GPU torch sees "
                      "(a ROCm build of torch calls AMD GPUs cuda too)", param, ctx)
        return super().convert(value, param, ctx)


python_option = click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Interpreter whose torch to diagnose: a path, or a name looked up on PATH (python3). Default: the active "
         "virtual/conda environment's; else, where rocm-doctor's own environment holds no torch (pipx, uv tool, a "
         "venv of its own), the python3 on PATH; else rocm-doctor's own.",
)


def no_torch(interpreter: str) -> str:
    """The one line of a command that measures with torch (kernels, bench) when the interpreter has none."""
    return f"torch is not installed in {interpreter}; install it there, or name the interpreter that has it with --python"


torch_timeout_option = click.option(
    "--torch-timeout",
    type=Seconds(1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long the torch probe may take before it counts as hung.",
)
command_timeout_option = click.option(
    "--command-timeout",
    type=Seconds(0.5),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="How long each external tool (hipconfig, rocminfo, ...) may run before it is killed.",
)



def run_env_options(command):
    """--unit, --user-unit, --kernel: judge the environment a systemd service or a Jupyter kernel runs the model in,
    the same for check, report, fix and snapshot."""
    command = click.option("--kernel", metavar="NAME",
                           help="Judge the Jupyter kernel NAME instead of this shell: its kernel.json's interpreter "
                                "and env on top of the Jupyter server's environment.")(command)
    command = click.option("--user-unit", metavar="NAME",
                           help="The same as --unit for a systemd user unit (systemctl --user).")(command)
    return click.option("--unit", metavar="NAME",
                        help="Judge the systemd service NAME (ollama, a ComfyUI unit) instead of this shell: its "
                             "Environment= and EnvironmentFile= settings and the Python its ExecStart runs; a "
                             "service reads no ~/.bashrc.")(command)


def chosen_run_env(unit, user_unit, kernel, from_file) -> dict | None:
    """{kind, name, scope} of the service or kernel to judge, or None for this shell; a usage error for two."""
    from rocm_doctor.cli.app import DoctorUsageError

    given = [(flag, name) for flag, name in (("--unit", unit), ("--user-unit", user_unit), ("--kernel", kernel))
             if name is not None]
    if len(given) > 1:
        raise DoctorUsageError(f"{' and '.join(flag for flag, _ in given)}: give one of them")
    if not given:
        return None
    flag, name = given[0]
    if from_file is not None:
        raise DoctorUsageError(f"--from replays a snapshot, with the environment it recorded; {flag} applies only "
                               "to a live run")
    if not name.strip() or name.startswith("-") or any(c in name for c in "\0\n\r/"):
        raise DoctorUsageError(f"{flag} {name!r}: not a {'kernel' if flag == '--kernel' else 'unit'} name")
    return {"kind": "jupyter" if flag == "--kernel" else "systemd", "name": name.strip(),
            "scope": "user" if flag == "--user-unit" else "system"}


def target_args(python=None, unit=None, user_unit=None, kernel=None, from_file=None) -> list[str]:
    """The options that chose what was diagnosed, for a footer's next command to diagnose the same thing."""
    args = []
    for flag, value in (("--from", from_file), ("--python", python), ("--unit", unit), ("--user-unit", user_unit),
                        ("--kernel", kernel)):
        if value:
            args += [flag, str(value)]
    return args


def stage_options(command):
    """--no-gpu, --bench, --collectives: the GPU stages after the checks, the same for check, report and fix."""
    command = click.option("--collectives", is_flag=True,
                           help="Also run collectives across every local GPU (one process per GPU) and the "
                                "peer-access matrix.")(command)
    command = click.option("--bench", is_flag=True,
                           help="Also run the quick performance benchmark (`rocm-doctor bench --quick`).")(command)
    return click.option("--no-gpu", is_flag=True, help="Do not run GPU kernels (static checks only).")(command)


def chosen_stages(no_gpu: bool, bench: bool, collectives: bool) -> list:
    from rocm_doctor.stages import StageChoice, chosen

    return chosen(StageChoice(kernels=not no_gpu, bench=bench, collectives=collectives))


FAIL_ON = ("fail", "warn")


def fail_on_option(command):
    """--fail-on, the same for every command that judges: the lowest status that makes the exit code 1."""
    return click.option("--fail-on", type=click.Choice(FAIL_ON), default="fail", show_default=True,
                        help="Lowest finding status that makes the exit code 1 (warn: warnings too).")(command)


force_option = click.option("--force", is_flag=True, help="Replace an output file that already exists.")


def refuse_to_overwrite(paths, force: bool) -> None:
    """An output file that exists is kept unless --force says otherwise (checked before the work, so a long run
    does not end in a refusal); devices and pipes (/dev/stdout) are written through, never replaced."""
    from rocm_doctor import safefile
    from rocm_doctor.cli.app import DoctorUsageError

    for path in paths:
        if force or path is None:
            continue
        why = safefile.unsafe_device(path)
        if why:
            raise DoctorUsageError(f"refusing to write {path}: {why}; --force writes it anyway")
        if safefile.is_stream(path) or str(path).startswith(("/dev/", "/proc/")):
            continue  # /dev/stdout names whatever standard output is, a file it was redirected to too
        if path.is_symlink() or path.is_file():
            raise DoctorUsageError(f"{path} exists; --force replaces it")
