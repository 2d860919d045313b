"""Runs the runtime child in the target interpreter and environment: the GPU driver's and runtimes' own status
codes, and the limits the target's processes run under. The doctor's own process never loads a GPU runtime."""

from __future__ import annotations

from pathlib import Path

from rocm_doctor.engine.child import child_env
from rocm_doctor.facts.keys import OWN_LIMITS_KEY, RUNTIME_PROBE_KEY
from rocm_doctor.probes._base import Recorder
from rocm_doctor.probes.limits_reader import read_limits

CHILD = Path(__file__).with_name("_runtime_child.py")
TIMEOUT_S = 30.0  # cuInit on a healthy GPU returns in well under a second; a driver that hangs is a finding


def collect(recorder: Recorder) -> None:
    """The child's answers, and the doctor's own limits: the target's processes inherit them, and they are what is
    left to read when a limit (too few descriptors, too little address space) keeps the child from starting."""
    recorder.put(OWN_LIMITS_KEY, read_limits())
    context = recorder.context
    recorder.target_command(RUNTIME_PROBE_KEY, [context.python, str(CHILD)],
                            timeout=min(TIMEOUT_S, context.torch_timeout_s), adapt=child_env)
