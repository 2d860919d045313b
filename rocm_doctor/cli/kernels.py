"""`rocm-doctor kernels`: run the GPU operator suite alone (the confirm stage of `check`) and report the outcomes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorUsageError, console
from rocm_doctor.cli.options import (DeviceChoice, Seconds, exit_for, fail_on_option, force_option, python_option,
                                     refuse_to_overwrite)

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
@click.option("--no-ab", is_flag=True, help="Do not run the HSA_OVERRIDE_GFX_VERSION A/B (AMD).")
@click.option("-v", "--verbose", is_flag=True, help="List every case, its kernels and the library log summary.")
@fail_on_option
def command(as_json, only, python, device, output, force, case_timeout, no_profile, no_logs, no_ab, verbose, fail_on):
    """Run short operator kernels in child processes and compare them with a float64 CPU reference."""
    from rocm_doctor.engine.engine import did_you_mean
    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.gpu.kernels.stage import ConfirmOptions, confirm, judge
    from rocm_doctor.probes import TargetError, choose_python, detect_os

    unknown = [c for c in only if c not in CATEGORIES]
    if unknown:
        hints = "".join(did_you_mean(c, CATEGORIES) for c in unknown)
        raise DoctorUsageError(f"unknown category: {', '.join(unknown)}{hints or ' (choose from ' + ', '.join(CATEGORIES) + ')'}")
    refuse_to_overwrite([output], force)
    env = dict(os.environ)
    try:
        interpreter, reason = choose_python(python, env)
    except TargetError as exc:
        raise DoctorUsageError(str(exc)) from None
    platform_os = detect_os()
    observations = Observations(env=env, target={"python": interpreter, "reason": reason})
    facts = Facts(observations)
    facts.set("platform.os", platform_os)
    facts.set("python.target", {"python": interpreter, "reason": reason})
    options = ConfirmOptions(
        python=interpreter, device=device, only=tuple(only), profile=not no_profile,
        library_logs="never" if no_logs or device == "cpu" else "always", override_ab=not no_ab and device != "cpu",
        case_timeout_s=case_timeout, env=env, platform_os=platform_os,
    )
    from rocm_doctor.cli.progress import stage_progress

    where = "the CPU" if device == "cpu" else "the GPU"
    with stage_progress(enabled=not as_json, first=f"running the operator kernels on {where} in child processes of "
                                                    f"{interpreter} (each imports torch first)"):
        stage = confirm(facts, options)
    findings = [f for f in judge([], facts, stage)]
    from rocm_doctor.engine import diagnosis, relations
    from rocm_doctor.engine.registry import load_registry
    from rocm_doctor.report.envelope import envelope

    relations.link(findings, load_registry(include_plugins=False).checks, facts)  # a crash explains the failures
    document = envelope("kernels", stage=stage, diagnosis=diagnosis.build(findings).to_dict(),
                        findings=[f.to_dict() for f in findings])
    if output is not None:
        from rocm_doctor import safefile

        try:
            safefile.write(output, json.dumps(document, indent=2, default=str))
        except safefile.WriteError as exc:
            raise DoctorUsageError(str(exc)) from None
    cannot = cannot_run(stage, interpreter, device)
    if as_json:
        click.echo(json.dumps(document, indent=2, default=str))
    elif not cannot:
        render(stage, findings, verbose=verbose, output=output)
    if cannot:
        raise DoctorUsageError(cannot)
    raise SystemExit(exit_for(findings, fail_on))


def cannot_run(stage: dict, interpreter: str, device: str) -> str:
    """Why the suite could not do its job at all, in one line: no torch in the interpreter, or no GPU for it (a torch
    that is there but fails to import or to start the GPU is a finding, not this)."""
    fatal = (stage.get("suite") or {}).get("fatal") or {}
    error = str(fatal.get("error") or "")
    if fatal.get("stage") == "import" and "No module named 'torch'" in error:
        return f"torch is not installed in {interpreter}; install it there, or name the interpreter that has it with --python"
    if fatal.get("stage") == "device" and device != "cpu":
        return f"no GPU: {error}; --device cpu runs the kernels on the CPU instead"
    return ""


def render(stage, findings, verbose=False, output=None) -> None:
    from rich.markup import escape

    from rocm_doctor.gpu.kernels.attribution import short_label

    out = console()
    suite = stage.get("suite") or {}
    hello = suite.get("hello") or {}
    devices = ", ".join(f"{d.get('index')}: {d.get('name')} ({d.get('arch')})" for d in hello.get("devices") or [])
    if hello:
        build = 'HIP ' + str(hello['hip']) if hello.get('hip') else 'CUDA ' + str(hello['cuda']) if hello.get('cuda') else 'CPU'
        about_torch = f"torch {escape(str(hello.get('torch')))} ({build})"
    else:  # the child stopped before it said which torch it has
        about_torch = "torch not reported"
    out.print(f"Kernels in {escape(str(stage.get('python')))} — {about_torch}, "
              f"device {escape(str(suite.get('device')))}" + (f" [{escape(devices)}]" if devices else ""))
    if suite.get("fatal"):
        fatal = suite["fatal"]
        out.print(f"[FAIL] the suite could not run ({fatal.get('stage')}): {escape(str(fatal.get('error')))}")
        for line in fatal.get("stderr_tail") or []:
            out.print(f"       {escape(line)}")
    counts = suite.get("counts") or {}
    out.print("Outcomes: " + (", ".join(f"{v} {k}" for k, v in counts.items() if v) or "no case ran")
              + f" — {suite.get('seconds', 0):.1f} s in {len(suite.get('children') or [])} child process(es)")
    out.print()
    for category, row in (suite.get("by_category") or {}).items():
        out.print(f"  {category:<12} " + ", ".join(f"{v} {k}" for k, v in sorted(row.items())))
    out.print()
    for record in suite.get("results") or []:
        outcome = record.get("outcome")
        if outcome == "ok" and not verbose:
            continue
        detail = {
            "ok": f"rel err {record.get('rel_err_text')} (tol {record.get('tol')})",
            "wrong": f"rel err {record.get('rel_err_text')} > tol {record.get('tol')}",
            "error": record.get("error"),
            "crashed": record.get("detail"),
            "hung": record.get("detail"),
            "unavailable": record.get("reason"),
            "not-run": record.get("reason"),
        }.get(outcome, "")
        label = short_label(record.get("attribution"))
        line = f"  {outcome:<11} {record.get('case'):<36} {str(detail or '').splitlines()[0] if detail else ''}"
        if label:
            line += f"  [{label}]"
        out.print(escape(line[:400]))
    attributed = [r for r in suite.get("results") or [] if short_label(r.get("attribution"))]
    if attributed:
        out.print()
        out.print("Libraries (from device kernel names):")
        for record in attributed:
            kernels = [k["name"] for k in record["attribution"]["kernels"]][:3 if verbose else 1]
            out.print(escape(f"  {record['case']:<36} {short_label(record['attribution']) or '?':<32} "
                             f"{'; '.join(k[:80] for k in kernels)}"))
    logs = stage.get("library_logs") or {}
    if logs.get("ran"):
        out.print()
        out.print(escape(f"Library log ({logs.get('bytes', 0)} bytes, {', '.join(f'{k}: {v} lines' for k, v in (logs.get('lines_by_library') or {}).items()) or 'no library lines'})"))
    ab = stage.get("override_ab") or {}
    if ab.get("variants"):
        out.print()
        out.print("HSA_OVERRIDE_GFX_VERSION A/B:")
        for row in ab["variants"]:
            out.print(escape(f"  {row['label']:<12} {str(row['value']):<10} {'works' if row['works'] else 'fails'}"))
        if ab.get("advice"):
            out.print(escape(f"  → {ab['advice']}"))
    out.print()
    from rocm_doctor.report.human import PLAIN_MARKERS

    for finding in findings:
        out.print(escape(f"{PLAIN_MARKERS[finding.status]} {finding.title}: {finding.message}"))
        if verbose or finding.status.rank >= 3:
            for line in finding.evidence[:8]:
                out.print(escape(f"         {line}"))
    if output is not None:
        out.print(f"\nJSON written to {escape(str(output))}")
