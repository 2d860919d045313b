"""Runs the torch child in the target interpreter (the doctor's own process never imports torch), and asks the
gcc on the target environment's PATH for its version: torch.compile on the CPU and C++ extensions build with it."""

from __future__ import annotations

from pathlib import Path

from rocm_doctor.engine.child import child_env
from rocm_doctor.facts.keys import GCC_KEY, TORCH_PROBE_KEY as COMMAND_KEY
from rocm_doctor.probes._base import Recorder

CHILD = Path(__file__).with_name("_torch_child.py")


def collect(recorder: Recorder) -> None:
    context = recorder.context
    recorder.side_by_side(  # gcc (the one the target environment would run) answers while torch imports
        lambda: recorder.target_command(COMMAND_KEY, [context.python, str(CHILD)], timeout=context.torch_timeout_s,
                                        adapt=child_env),
        lambda: recorder.target_command(GCC_KEY, ["gcc", "--version"]))
