"""`rocm-doctor bench`: measure this GPU against what it should do, and say why it falls short."""

from __future__ import annotations

from typing import Any, Optional

import click

from rocm_doctor.cli.app import EXIT_CANNOT_RUN, DoctorUsageError, diagnosed, pass_app
from rocm_doctor.cli.options import DeviceChoice, fail_on_option, no_torch, python_option
from rocm_doctor.gpu.bench.plan import PRESETS, SECTION_ORDER, TITLES

FIGURES = (("median_tflops", "TFLOP/s"), ("tflops", "TFLOP/s"), ("median_gbs", "GB/s"), ("gbs", "GB/s"),
           ("us_per_launch", "us/launch"), ("tokens_per_s", "tok/s"), ("ms_per_step", "ms/step"))


def _describe(record: dict[str, Any]) -> str:
    """A short progress line for one child record."""
    parts = [str(record.get(k)) for k in ("target", "dtype", "op", "memory", "direction", "mode", "shape", "backend", "what")
             if record.get(k) is not None]
    if record.get("m"):
        parts.append(f"{record['m']}x{record['n']}x{record['k']}")
    for key, unit in FIGURES:
        if isinstance(record.get(key), (int, float)):
            parts.append(f"{record[key]:.4g} {unit}")
            break
    return " ".join(parts)


def run_with_bar(app, options, stage, total: int, show_progress: bool = True):
    """The request for `stage` alone through the pipeline, the app's progress bar on stderr when asked for and
    stderr is a terminal (the stage hands it every record of the child); a bad --python ends the command with
    one line."""
    with app.bar("starting the benchmark child (importing torch)", total, "sections",
                 enabled=show_progress) as bar:
        if bar is not None:
            stage.on_record = _bar_progress(bar)
        return diagnosed(options)


def _bar_progress(bar):
    """The bar names the section and figure the child is measuring, and advances per section."""

    def on_record(record: dict[str, Any]) -> None:
        kind, section = record.get("bench"), record.get("section")
        title = TITLES.get(section, section or "")
        if kind == "section_start":
            bar.describe(f"{title}")
        elif kind in ("section_end", "section_timeout"):
            bar.advance()
        elif kind == "device" and record.get("name"):
            bar.describe(f"measuring on {record['name']}")
        elif section and kind not in ("section_error",):
            bar.describe(f"{title}: {_describe(record)}")

    return on_record


def nothing_ran(results: dict[str, Any]) -> Optional[str]:
    states = [s.get("state") for s in (results.get("sections") or {}).values()]
    if states and all(s == "not-run" for s in states):
        return next(iter(results["sections"].values())).get("detail")
    return None


@click.command("bench")
@click.option("--quick", is_flag=True, help="Fewer shapes and smaller sizes (10–13 s on an H200, measured).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: raw results, lines with verdicts, findings.")
@python_option
@click.option("--device", type=DeviceChoice(), default="cuda", show_default=True,
              help="Device to measure; cuda is also the ROCm/HIP GPU; cpu measures the CPU, with sizes for a CPU.")
@click.option("--device-index", type=click.IntRange(min=0), default=0, show_default=True, help="Which GPU.")
@click.option("--section", "sections", multiple=True, type=click.Choice(SECTION_ORDER),
              help="Run only this section (repeatable).")
@click.option("--preset", type=click.Choice(PRESETS), default=None, hidden=True, help="Sizes: full, quick or tiny (tests).")
@click.option("--collectives", is_flag=True,
              help="Measure collectives across every local GPU instead (all-reduce, all-gather, broadcast; peer copies).")
@click.option("-v", "--verbose", is_flag=True, help="Show every line, including explanations of good figures.")
@fail_on_option
@pass_app
def command(app, quick, as_json, python, device, device_index, sections, preset, verbose, fail_on, collectives=False):
    """Measure matmul, memory, launch, attention and an LLM-shaped decoder against what this GPU should do."""
    from rocm_doctor.diagnose import LIVE_STATE, STAGES, Options
    from rocm_doctor.gpu.bench import plan as plans
    from rocm_doctor.gpu.bench.stage import BenchStage
    from rocm_doctor.report.bench_view import BenchResult

    preset = preset or ("quick" if quick else "full")
    app.use("json" if as_json else "human", verbose=verbose)
    if collectives:  # several GPUs (rocm_doctor.distributed): replaces the single-GPU sections
        bench_collectives(app, python, preset, device)
    stage = BenchStage(preset=preset, device=device, device_index=device_index, sections=sections)
    watched = () if device == "cpu" else (LIVE_STATE,)  # what else runs on the GPU explains what it lowered
    report, _facts = run_with_bar(app, Options(python=python, scope=STAGES, stages=[stage], areas=watched), stage,
                             len(plans.build(preset, tuple(sections), device=device)), show_progress=not as_json)
    shown = report.stages.get("bench") or {}
    results = shown.get("results") or {}
    why = nothing_ran(results) if "sections" in results else results.get("reason") or "the benchmark did not run"
    if as_json or not why:
        app.show(BenchResult(results, shown.get("analysis") or {}, report.findings, report.diagnosis))
    if why:
        raise DoctorUsageError(cannot_run(results, why, report.target.get("python"), device))
    app.exit(app.code_for(report.findings, fail_on))


def bench_collectives(app, python: Optional[str], preset: str, device: str) -> None:
    """The local collectives across every GPU, shown and judged: 2 when they could not run, else 1 for a warning
    or worse (--fail-on does not apply to them). Judged by the checks of the collectives' results and the other
    multi-GPU checks (the NCCL/RCCL variables of this environment)."""
    from rocm_doctor.diagnose import STAGES, Options
    from rocm_doctor.distributed.stage import CollectivesStage
    from rocm_doctor.report.collectives_view import CollectivesResult

    with app.status("collectives: starting one process per GPU", enabled=app.format != "json") as status:
        report, _facts = diagnosed(Options(python=python, scope=STAGES, stages=[CollectivesStage(device, preset)],
                                           areas=("multi-gpu",), watch=False, progress=status))
    results = report.stages.get("collectives") or {}
    app.show(CollectivesResult(report.target.get("python"), results, report.findings, report.diagnosis))
    if not results.get("ran"):
        if app.format != "json":
            app.error(f"the collectives could not run: {results.get('detail')}")
        app.exit(EXIT_CANNOT_RUN)
    app.exit(app.code_for(report.findings, "warn"))


def cannot_run(results: dict[str, Any], why: str, target: str, device: str) -> str:
    """The one line for a benchmark that measured nothing: no torch, no GPU (with the way to measure the CPU), or
    what stopped its child."""
    imported = (results.get("header") or {}).get("import") or {}
    if imported and not imported.get("ok", True) and "No module named 'torch'" in str(imported.get("error")):
        return no_torch(target)
    if (results.get("header") or {}).get("device", {}).get("error") and device != "cpu":
        return f"no GPU: {why}; --device cpu measures the CPU instead"
    return f"the benchmark could not run: {why}"
