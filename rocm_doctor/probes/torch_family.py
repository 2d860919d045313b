"""Runs the torch-family child in the target interpreter: the installed torch, torchvision, torchaudio and Triton
packages from their metadata, then, where the metadata disagree, whether torchvision and torchaudio import. The
doctor's own process imports none of them."""

from __future__ import annotations

from pathlib import Path

from rocm_doctor.engine.child import child_env
from rocm_doctor.facts.keys import TORCH_FAMILY_KEY as COMMAND_KEY
from rocm_doctor.probes._base import Recorder

CHILD = Path(__file__).with_name("_family_child.py")


def collect(recorder: Recorder) -> None:
    context = recorder.context
    recorder.target_command(COMMAND_KEY, [context.python, str(CHILD)], timeout=context.torch_timeout_s,
                            adapt=child_env)
