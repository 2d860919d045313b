"""Probes: the only code that touches the machine.

`collect` records the platform and environment, then runs every probe module of this package concurrently. A
probe module defines `collect(recorder)`; it may set `PLATFORMS` (a tuple of platform names) to run only there.
Every command goes through the runner with a timeout, and the tools' commands share one deadline (the command
timeout, from the moment the probes start; a probe runs its independent commands side by side), so tools that all
hang cost one timeout, not one each. The slowest
probe (the torch child's `import torch`, seconds) starts before the others are even imported, and while the
probes wait on their commands the caller's `meanwhile` runs in this thread.
"""

from __future__ import annotations

import pkgutil
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator, Optional

from rocm_doctor.engine.modules import import_public_modules
from rocm_doctor.facts.observations import Observations
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.probes._platform import describe_platform, detect_os
from rocm_doctor.probes import run_env
from rocm_doctor.probes._target import TargetError, choose_python, environment_of

# What other packages use; the underscored modules behind it are this package's own.
__all__ = ["ProbeContext", "Recorder", "TargetError", "choose_python", "collect", "detect_os"]
SLOWEST = ("torch_probe",)
DEADLINE_GRACE_S = 1.0  # the probes' own start (threads, imports) before their first commands, past the timeout


def probe_modules(platform_os: str, failures: dict[str, str]) -> Iterator:
    """The probe modules for this platform, the slowest first, each as soon as it is imported; one that cannot be
    imported is noted in `failures`."""
    return (module for module in import_public_modules(__name__, __path__, failures, first=SLOWEST)
            if hasattr(module, "collect") and platform_os in getattr(module, "PLATFORMS", (platform_os,)))


def collect(context: ProbeContext, meanwhile: Optional[Callable[[], None]] = None) -> Observations:
    observations = Observations()
    observations.platform = describe_platform()
    observations.env = dict(context.env)
    recorder = Recorder(observations, context)
    if context.run_target:  # first: the service's or kernel's interpreter and environment decide the torch probe's
        try:
            run_env.observe(recorder)
        except Exception:
            observations.add_probe_error("run_env", traceback.format_exc(limit=6))
    observations.target = {"python": context.python, "reason": context.python_reason,
                           **environment_of(context.python)}
    context.deadline = time.monotonic() + context.command_timeout_s + DEADLINE_GRACE_S
    with ThreadPoolExecutor(max_workers=max(4, len(list(pkgutil.iter_modules(__path__))))) as pool:
        futures = {pool.submit(module.collect, recorder): module
                   for module in probe_modules(context.platform_os, observations.probe_errors)}
        if meanwhile is not None:
            meanwhile()
        for future, module in futures.items():
            try:
                future.result()
            except Exception:
                observations.add_probe_error(module.__name__.rsplit(".", 1)[-1], traceback.format_exc(limit=6))
    return observations
