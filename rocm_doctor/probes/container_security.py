"""What a security module lets this process do with the GPU, read without root: the SELinux mode and this
process's label, its AppArmor profile, its seccomp mode and no_new_privs, and whether /dev/kfd, once opened, may
also be mapped. ROCm maps /dev/kfd; a container policy can allow the open and refuse the mapping (SELinux's `map`
permission), so an open that works is not yet the answer."""

from __future__ import annotations

import errno
import mmap
import os

from rocm_doctor.facts.keys import APPARMOR_LABEL, DEVICE_MAP_KEY, PROC_STATUS, SECURITY_LABEL, SELINUX_ENFORCE
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux",)
MAPPED = ("/dev/kfd",)


def _errno(exc: OSError) -> dict:
    return {"errno": errno.errorcode.get(exc.errno or 0, str(exc.errno)), "error": exc.strerror}


def map_attempt(path: str) -> dict:
    """Open read-write, then map one page at offset 0. The security module judges a mapping before the driver sees
    it; past it, amdkfd refuses offset 0 itself (no GPU has id 0, ENODEV), so any errno but EACCES/EPERM means the
    mapping was let through. Nothing is mapped either way."""
    info: dict = {"path": path}
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return dict(info, exists=False)
    except OSError as exc:
        return dict(info, exists=True, opened=False, **_errno(exc))
    info.update(exists=True, opened=True)
    try:
        mapping = mmap.mmap(fd, mmap.PAGESIZE, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    except OSError as exc:
        info.update(mapped=False, **_errno(exc))
    except ValueError as exc:  # a regular file in the node's place: Python refuses before the kernel is asked
        info.update(mapped=None, error=str(exc))
    else:
        mapping.close()
        info["mapped"] = True
    finally:
        os.close(fd)
    return info


def collect(recorder: Recorder) -> None:
    for path in (SELINUX_ENFORCE, SECURITY_LABEL, APPARMOR_LABEL, PROC_STATUS):
        recorder.read_file(path, cap=64_000)
    recorder.put(DEVICE_MAP_KEY, {path: map_attempt(path) for path in MAPPED})
