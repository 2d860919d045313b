"""The confirm stage: run the operator suite on the GPU (plus library logs and the override A/B where they apply)
and turn the outcomes into facts, findings, and verdicts on the static findings.

`rocm-doctor check` calls `run_in_check` after the static checks when torch sees a GPU (not with --no-gpu, not on
a replayed snapshot); `rocm-doctor kernels` calls `confirm` directly.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from rocm_doctor.facts.facts import target_python
from rocm_doctor.gpu.kernels import ab, liblogs
from rocm_doctor.gpu.kernels.harness import SuiteOptions, run_suite
from rocm_doctor.gpu.kernels.verdicts import analyse, apply_kernel_evidence
from rocm_doctor.parsers.gfx import base_gfx

FACT_KEY = "gpu.kernels"
CHECK_MODULE = "rocm_doctor.checks.gpu_confirm"


@dataclass
class ConfirmOptions:
    python: Optional[str] = None  # default: the target interpreter in the facts, else this one
    device: str = "cuda"
    only: Sequence[str] = ()  # categories
    profile: bool = True
    library_logs: bool = True
    override_ab: bool = True
    case_timeout_s: float = 60.0
    startup_timeout_s: float = 120.0
    env: Optional[Mapping[str, str]] = None
    extra_modules: Sequence[str] = field(default_factory=tuple)
    platform_os: Optional[str] = None  # default: the facts' platform


def gpu_gfx(facts, suite: Optional[dict] = None) -> Optional[str]:
    """The first GPU's gfx target (AMD), without feature flags."""
    devices = []
    if suite and suite.get("hello"):
        devices = [{"gcnArchName": d.get("arch")} for d in suite["hello"].get("devices") or []]
    if not devices and facts is not None:
        devices = facts.get("torch.devices") or []
    for device in devices:
        gfx = base_gfx(str(device.get("gcnArchName") or ""))
        if gfx:
            return gfx
    return None


def confirm(facts, options: Optional[ConfirmOptions] = None) -> dict[str, Any]:
    """Run the stage; returns the dict stored in report.stages["kernels"] and the fact gpu.kernels."""
    options = options or ConfirmOptions()
    started = time.monotonic()
    python = options.python or target_python(facts)
    env = dict(options.env) if options.env is not None else (dict(facts.env) if facts is not None and facts.env else dict(os.environ))
    suite = run_suite(python, SuiteOptions(
        device=options.device,
        only=tuple(options.only),
        extra_modules=tuple(options.extra_modules),
        profile=options.profile,
        case_timeout_s=options.case_timeout_s,
        startup_timeout_s=options.startup_timeout_s,
        env=env,
    ))
    hello = suite.get("hello") or {}
    vendor = hello.get("vendor")
    stage: dict[str, Any] = {"ran": True, "python": python, "device": options.device, "vendor": vendor, "suite": suite}

    if options.library_logs and vendor in ("amd", "nvidia") and not suite.get("fatal"):
        stage["library_logs"] = liblogs.capture(python, vendor, env=env, device=options.device,
                                                timeout=options.startup_timeout_s + 4 * options.case_timeout_s)
    else:
        stage["library_logs"] = {"ran": False, "reason": "needs an AMD or NVIDIA GPU" if vendor not in ("amd", "nvidia")
                                 else ("turned off" if not options.library_logs else "the suite could not start")}

    platform_os = options.platform_os or (facts.os if facts is not None else "linux")
    gfx = gpu_gfx(facts, suite)
    recommended = ab.recommended_override(gfx) if vendor == "amd" else None
    run_it, why = ab.should_run(vendor, platform_os, env, recommended)
    if options.override_ab and run_it:
        stage["override_ab"] = ab.run_ab(python, env=env, recommended=recommended,
                                         case_timeout_s=options.case_timeout_s,
                                         startup_timeout_s=options.startup_timeout_s)
        stage["override_ab"].update(gfx=gfx, recommended=recommended)
    else:
        stage["override_ab"] = {"ran": False, "reason": why or "turned off"}

    stage["analysis"] = analyse(suite, (stage["library_logs"] or {}).get("log") or "")
    stage["seconds"] = round(time.monotonic() - started, 3)
    return stage


def not_run(reason: str) -> dict[str, Any]:
    return {"ran": False, "reason": reason}


def kernel_checks():
    from rocm_doctor.engine.registry import load_registry

    return [c for c in load_registry(include_plugins=False).checks if c.__module__ == CHECK_MODULE]


def judge(findings: list, facts, stage: dict) -> list:
    """Re-run the kernel checks with the stage as a fact, replace their placeholders, apply the verdicts."""
    from rocm_doctor.engine.engine import run_one, sort_findings

    facts.set(FACT_KEY, stage)
    checks = kernel_checks()
    ids = {c.id for c in checks}
    kept = [f for f in findings if f.check not in ids]
    for check in checks:
        kept.extend(run_one(check, facts))
    return sort_findings(apply_kernel_evidence(kept, stage))


def run_in_check(report, facts, python: Optional[str] = None, only: Sequence[str] = (),
                 skip: Sequence[str] = (), options: Optional[ConfirmOptions] = None) -> None:
    """What `rocm-doctor check` does after the static checks. Mutates report.findings and report.stages."""
    try:
        ids = {c.id for c in kernel_checks()}
    except Exception:
        ids = set()
    if only and not ids & set(only):
        return
    if facts.get("torch.available") is not True:
        report.stages["kernels"] = not_run("torch does not see a GPU (torch.cuda.is_available() is not True)")
        return
    options = options or ConfirmOptions()
    if python and not options.python:
        options.python = python
    try:
        stage = confirm(facts, options)
    except Exception as exc:  # the stage must never take the report down
        report.stages["kernels"] = not_run(f"the confirm stage failed: {type(exc).__name__}: {exc}")
        return
    report.stages["kernels"] = stage
    findings = judge(report.findings, facts, stage)
    report.findings = [f for f in findings if not (f.check in ids and f.check in set(skip))]
