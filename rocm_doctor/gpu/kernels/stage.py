"""The confirm stage: run the operator suite on the GPU (plus library logs and the override A/B where they apply)
and turn the outcomes into facts, findings, and verdicts on the static findings.

`KernelStage` is the stage the pipeline runs for `check`, `report`, `fix` and `kernels` when torch sees a GPU (not
with --no-gpu); a replayed snapshot re-judges the result it carries.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from rocm_doctor.engine.pipeline import Sampler, Stage, taken
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import GPU_KERNELS, GPU_TARGETS, TORCH_AVAILABLE, TORCH_DEVICES, TORCH_INSTALLED
from rocm_doctor.gpu.kernels import ab, liblogs
from rocm_doctor.gpu.kernels.harness import BackgroundSuite, SuiteOptions, failed, run_suite
from rocm_doctor.gpu.kernels.signatures import analyse
from rocm_doctor.interpret import stage_results
from rocm_doctor.parsers.gfx import base_gfx

FACT_KEY = GPU_KERNELS
GPU_NODES = tuple(node for _, node in liblogs.VENDOR_NODES) + ("/dev/dxg",)  # NVIDIA, ROCm, WSL: a GPU driver is there


@dataclass
class ConfirmOptions:
    python: Optional[str] = None  # default: the target interpreter in the facts, else this one
    device: str = "cuda"
    only: Sequence[str] = ()  # categories
    profile: bool = True
    library_logs: str = "always"  # "needed": only where they can show a problem (logs_not_needed); "never"
    override_ab: bool = True
    case_timeout_s: float = 60.0
    startup_timeout_s: float = 120.0
    env: Optional[Mapping[str, str]] = None
    extra_modules: Sequence[str] = field(default_factory=tuple)
    platform_os: Optional[str] = None  # default: the facts' platform


def gpu_gfx(facts, suite: Optional[dict] = None) -> Optional[str]:
    """The first GPU's real gfx target: from the interpreted GPU targets (an override does not change it), else
    from what torch reported (which, under an override, is the override's target)."""
    for target in (facts.get(GPU_TARGETS) or []) if facts is not None else []:
        if target.get("real_gfx") and not target.get("integrated"):
            return target["real_gfx"]
    devices = []
    if suite and suite.get("hello"):
        devices = [{"gcnArchName": d.get("arch")} for d in suite["hello"].get("devices") or []]
    if not devices and facts is not None:
        devices = facts.get(TORCH_DEVICES) or []
    for device in devices:
        gfx = base_gfx(str(device.get("gcnArchName") or ""))
        if gfx:
            return gfx
    return None


def recommended_for(facts, gfx: Optional[str]) -> Optional[str]:
    """The override recommended for `gfx`: as the interpreted GPU targets computed it, else (a stage-only command
    observes no GPU targets) looked up for the gfx torch reported."""
    for target in (facts.get(GPU_TARGETS) or []) if facts is not None and gfx else []:
        if target.get("real_gfx") == gfx:
            return target.get("recommended_override")
    return ab.recommended_override(gfx)


def logs_not_needed(when: str, vendor: Optional[str], suite: dict) -> Optional[str]:
    """Why the library-log child does not run (None: it runs). "needed" runs it on AMD, where rocBLAS, hipBLASLt
    and MIOpen log fallbacks and missing kernels even when every case passes, and on NVIDIA only when a case
    failed: cuBLAS and cuDNN log nothing that a passing suite would report, and the child costs a torch import."""
    if vendor not in ("amd", "nvidia"):
        return "needs an AMD or NVIDIA GPU"
    if suite.get("fatal"):
        return "the suite could not start"
    if when == "never":
        return "turned off"
    if when == "needed" and vendor == "nvidia" and not failed(suite.get("results") or []):
        return ("every case passed: on NVIDIA the library logs are captured when a case fails "
                "(rocm-doctor kernels --logs captures them always)")
    return None


def start_logs(options: ConfirmOptions, python: str, env: Mapping[str, str],
               timeout: float) -> Optional[liblogs.Early]:
    """The library-log child started beside the suite's when its log is wanted whatever the outcomes ("always", or
    "needed" on AMD) and the machine's device node names the vendor (whose logging variables it needs); it waits
    for the suite before it touches the GPU."""
    vendor = liblogs.vendor_of_nodes()
    wanted = options.library_logs == "always" or (options.library_logs == "needed" and vendor == "amd")
    if not wanted or options.device == "cpu" or vendor is None:
        return None
    suite_limit = options.startup_timeout_s + options.case_timeout_s * 100
    return liblogs.Early(python, vendor, env, options.device, timeout + suite_limit)


def suite_options(options: ConfirmOptions, env: Mapping[str, str]) -> SuiteOptions:
    return SuiteOptions(device=options.device, only=tuple(options.only), extra_modules=tuple(options.extra_modules),
                        profile=options.profile, case_timeout_s=options.case_timeout_s,
                        startup_timeout_s=options.startup_timeout_s, env=env)


def confirm(facts, options: Optional[ConfirmOptions] = None, early: Optional[BackgroundSuite] = None) -> dict[str, Any]:
    """Run the stage; returns the dict stored in report.stages["kernels"] and the fact gpu.kernels. `early` is the
    suite already started before the probes finished; it is used when its interpreter and environment are these."""
    options = options or ConfirmOptions()
    started = time.monotonic()
    python = options.python or target_python(facts)
    env = dict(options.env) if options.env is not None else (dict(facts.env) if facts is not None and facts.env else dict(os.environ))
    logs_timeout = options.startup_timeout_s + 4 * options.case_timeout_s
    early_logs = start_logs(options, python, env, logs_timeout)
    try:
        if early is not None and (early.python, early.env) == (python, env):
            suite = early.result()
        else:
            if early is not None:
                early.stop()
            suite = run_suite(python, suite_options(options, env))
        hello = suite.get("hello") or {}
        vendor = hello.get("vendor")
        stage: dict[str, Any] = {"ran": True, "python": python, "device": options.device, "vendor": vendor,
                                 "suite": suite}
        why_not = logs_not_needed(options.library_logs, vendor, suite)
        if why_not:
            stage["library_logs"] = {"ran": False, "reason": why_not}
        elif early_logs is not None and early_logs.vendor == vendor:
            early_logs, started_logs = None, early_logs
            stage["library_logs"] = started_logs.go()
        else:
            stage["library_logs"] = liblogs.capture(python, vendor, env=env, device=options.device,
                                                    timeout=logs_timeout)
    finally:
        if early_logs is not None:
            early_logs.stop()

    platform_os = options.platform_os or (facts.os if facts is not None else "linux")
    gfx = gpu_gfx(facts, suite)
    recommended = recommended_for(facts, gfx) if vendor == "amd" else None
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


class KernelStage(Stage):
    """The confirm stage in the pipeline: its result is the `gpu.kernels` fact, which checks/gpu_confirm.py judges
    (and from which it confirms or refutes static findings)."""

    name = "kernels"
    probe_key = "kernels"
    provides = (FACT_KEY,)

    def __init__(self, options: Optional[ConfirmOptions] = None) -> None:
        self.options = options or ConfirmOptions(library_logs="needed")
        self._early: Optional[BackgroundSuite] = None
        self._before: Optional[dict] = None

    def start_early(self, python: str, env: dict[str, str]) -> None:
        """On a machine with a GPU device node, start the suite's child now: it imports torch while the
        probes run, which takes seconds off `check`, and holds its first case until they end. Without one (no GPU,
        or not Linux) nothing starts early. Only the one child: on one GPU, several processes computing at once
        slow each other down."""
        if self.options.device == "cpu" or self.options.python not in (None, python) or \
                not any(os.path.exists(node) for node in GPU_NODES):
            return
        self._early = BackgroundSuite(python, suite_options(self.options, dict(env)), hold=True)

    def probes_done(self, sample: Sampler = None) -> None:
        if self._early is not None:
            if sample is not None:  # on an H200 the two GPU queries beside the first cases slowed them 0.2 s
                self._before = taken(sample, "before")
            self._early.release()

    def sampled_before(self) -> Optional[dict]:
        before, self._before = self._before, None
        return before

    def discard_early(self) -> None:
        if self._early is not None:
            self._early.stop()
            self._early = None

    def skip_reason(self, facts) -> Optional[str]:
        if self.options.device != "cpu" and facts.get(TORCH_INSTALLED) is False:
            return "torch is not installed in the target environment (see torch-not-installed)"
        if self.options.device != "cpu" and facts.get(TORCH_AVAILABLE) is not True:
            return "torch does not see a GPU (torch.cuda.is_available() is not True)"
        return None

    def run(self, facts, progress=None) -> dict[str, Any]:
        if progress:
            progress("GPU kernels: running the operator suite in child processes")
        early, self._early = self._early, None
        return confirm(facts, self.options, early)

    def interpret(self, observations, facts) -> None:
        stage_results.interpret(observations, facts)

