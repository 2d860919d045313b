"""The layer under ROCm that the platform probe does not keep: the whole os-release file, the C library, and
the marks a container leaves (/.dockerenv, /run/.containerenv, the cgroup of PID 1)."""

from __future__ import annotations

from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux", "wsl")
OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
CONTAINER_FILES = ("/.dockerenv", "/run/.containerenv", "/proc/1/cgroup")


def collect(recorder: Recorder) -> None:
    for path in OS_RELEASE:
        if recorder.read_file(path, cap=64_000).exists:
            break
    recorder.command("ldd-version", ["ldd", "--version"])
    for path in CONTAINER_FILES:
        recorder.read_file(path, cap=64_000)
