"""The layer under ROCm that the platform probe does not keep: the whole os-release file, the C library, the
marks a container leaves (/.dockerenv, /run/.containerenv, the cgroup of PID 1) and the size of /dev/shm, which
DataLoader workers share tensors through."""

from __future__ import annotations

import os

from rocm_doctor.facts.keys import CONTAINER_FILES, LDD_KEY, OS_RELEASE, SHM_KEY
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux", "wsl")


def _shm_size() -> dict:
    try:
        found = os.statvfs("/dev/shm")
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc.strerror or exc}"}
    return {"total_bytes": found.f_frsize * found.f_blocks}


def collect(recorder: Recorder) -> None:
    for path in OS_RELEASE:
        if recorder.read_file(path, cap=64_000).exists:
            break
    recorder.command(LDD_KEY, ["ldd", "--version"])
    for path in CONTAINER_FILES:
        recorder.read_file(path, cap=64_000)
    recorder.put(SHM_KEY, _shm_size())
