"""The package repositories that decide which ROCm release the next install or upgrade brings (apt, yum, zypper
files), and the ROCm folders already under /opt."""

from __future__ import annotations

from rocm_doctor.facts.keys import OPT_DIR, REPO_DIRS
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux", "wsl")
MAX_FILES = 64


def collect(recorder: Recorder) -> None:
    for folder, suffixes in REPO_DIRS:
        listing = recorder.list_dir(folder)
        for name in [e for e in listing.entries or [] if e.endswith(suffixes)][:MAX_FILES]:
            recorder.read_file(f"{folder}/{name}", cap=128_000)
    recorder.list_dir(OPT_DIR)
