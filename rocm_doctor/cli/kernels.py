"""`rocm-doctor kernels`: run the GPU operator suite alone (the confirm stage of `check`) and report the outcomes."""

from __future__ import annotations

from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorUsageError, diagnosed, pass_app
from rocm_doctor.cli.options import (DeviceChoice, Seconds, fail_on_option, force_option, no_torch,
                                     python_option, refuse_to_overwrite)

CATEGORIES = ("memory", "elementwise", "reduction", "matmul", "linear", "conv", "norm", "pooling", "softmax",
              "embedding", "index", "sort", "fft", "rng", "sdpa", "autocast", "jit", "streams", "devices")


@click.command("kernels")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: the stage results and the findings.")
@click.option("--only", multiple=True, metavar="CATEGORY",
              help=f"Run only this category (repeatable): {', '.join(CATEGORIES)}.")
@python_option
@click.option("--device", type=DeviceChoice(), default="cuda", show_default=True,
              help="cuda = the GPU (also ROCm); cpu exercises the harness without a GPU.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the JSON result to this file.")
@force_option
@click.option("--case-timeout", type=Seconds(1), default=60.0, show_default=True, metavar="SECONDS",
              help="A case that runs longer counts as hung.")
@click.option("--no-profile", is_flag=True, help="Do not run library attribution (torch.profiler).")
@click.option("--no-logs", is_flag=True, help="Do not run the child with the math libraries' logging on.")
@click.option("--logs", is_flag=True, help="Capture the math libraries' logs also when every case passed (on NVIDIA "
              "they are captured only for a failure).")
@click.option("--no-ab", is_flag=True, help="Do not run the HSA_OVERRIDE_GFX_VERSION A/B (AMD).")
@click.option("-v", "--verbose", is_flag=True, help="List every case, its kernels and the library log summary.")
@fail_on_option
@pass_app
def command(app, as_json, only, python, device, output, force, case_timeout, no_profile, no_logs, logs, no_ab, verbose,
            fail_on):
    """Run short operator kernels in child processes and compare them with a float64 CPU reference."""
    from rocm_doctor.diagnose import STAGES, Options
    from rocm_doctor.engine.engine import did_you_mean
    from rocm_doctor.gpu.kernels.stage import ConfirmOptions, KernelStage
    from rocm_doctor.report.format import Json
    from rocm_doctor.report.kernels_view import KernelsResult

    unknown = [c for c in only if c not in CATEGORIES]
    if unknown:
        hints = "".join(did_you_mean(c, CATEGORIES) for c in unknown)
        raise DoctorUsageError(f"unknown category: {', '.join(unknown)}{hints or ' (choose from ' + ', '.join(CATEGORIES) + ')'}")
    refuse_to_overwrite([output], force)
    stage = KernelStage(ConfirmOptions(
        device=device, only=tuple(only), profile=not no_profile,
        library_logs="never" if no_logs or device == "cpu" else "always" if logs else "needed",
        override_ab=not no_ab and device != "cpu",
        case_timeout_s=case_timeout,
    ))
    where = "the CPU" if device == "cpu" else "the GPU"
    with app.status(f"running the operator kernels on {where} in child processes (each imports torch first)",
                    enabled=not as_json):
        report, _facts = diagnosed(Options(python=python, scope=STAGES, stages=[stage], watch=False))
    interpreter = report.target.get("python")
    result = KernelsResult(report.stages["kernels"], report.findings, report.diagnosis, output)
    if output is not None:
        from rocm_doctor import safefile

        try:
            safefile.write(output, Json.text(result))
        except safefile.WriteError as exc:
            raise DoctorUsageError(str(exc)) from None
    cannot = cannot_run(result.stage, interpreter, device)
    app.use("json" if as_json else "human", verbose=verbose)
    if as_json or not cannot:
        app.show(result)
    if cannot:
        raise DoctorUsageError(cannot)
    app.exit(app.code_for(report.findings, fail_on))


def cannot_run(stage: dict, interpreter: str, device: str) -> str:
    """Why the suite could not do its job at all, in one line: no torch in the interpreter, or no GPU for it (a torch
    that is there but fails to import or to start the GPU is a finding, not this)."""
    fatal = (stage.get("suite") or {}).get("fatal") or {}
    error = str(fatal.get("error") or "")
    if fatal.get("stage") == "import" and "No module named 'torch'" in error:
        return no_torch(interpreter)
    if fatal.get("stage") == "device" and device != "cpu":
        return f"no GPU: {error}; --device cpu runs the kernels on the CPU instead"
    return ""
