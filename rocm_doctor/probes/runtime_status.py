"""Runs the runtime child in the target interpreter and environment: the GPU driver's and runtimes' own status
codes, and the limits the target's processes run under. The doctor's own process never loads a GPU runtime."""

from __future__ import annotations

from pathlib import Path

from rocm_doctor.engine.child import child_env
from rocm_doctor.probes._base import Recorder

CHILD = Path(__file__).with_name("_runtime_child.py")
COMMAND_KEY = "runtime-probe"
TIMEOUT_S = 30.0  # cuInit on a healthy GPU returns in well under a second; a driver that hangs is a finding


def collect(recorder: Recorder) -> None:
    context = recorder.context
    recorder.target_command(COMMAND_KEY, [context.python, str(CHILD)],
                            timeout=min(TIMEOUT_S, context.torch_timeout_s), adapt=child_env)
