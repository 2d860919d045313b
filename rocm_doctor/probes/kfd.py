"""Reads the KFD topology from sysfs: the kernel's own list of compute nodes, untouched by HSA overrides."""

from __future__ import annotations

from rocm_doctor.facts.keys import KFD_NODES_DIR as NODES_DIR, NODE_FILES
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux", "wsl")


def collect(recorder: Recorder) -> None:
    listing = recorder.list_dir(NODES_DIR)
    for entry in listing.entries or []:
        if entry.isdigit():
            for name in NODE_FILES:
                recorder.read_file(f"{NODES_DIR}/{entry}/{name}")
