"""Shared reading for the checks of the layer under ROCm (no checks here): the distribution family that decides
which package tool a step uses, whether amdgpu is loaded, and the findings a broken driver layer explains."""

from __future__ import annotations

from rocm_doctor.checks.amd_access import amd_present  # noqa: F401 (shared)
from rocm_doctor.facts.keys import (KFD_NODES, LINUX_AMDGPU_MODULE, OS_CONTAINER, OS_KERNEL, OS_RELEASE_FACT,
                                    ROCMINFO_STATUS)

_DEBIAN = {"debian", "ubuntu"}
_REDHAT = {"rhel", "fedora", "centos", "rocky", "almalinux", "ol"}


def family(facts) -> str | None:
    """"debian" (apt), "redhat" (dnf), "suse" (zypper), "arch" (pacman) or None, from os-release ID and ID_LIKE."""
    release = facts.get(OS_RELEASE_FACT) or {}
    names = {release.get("id") or ""} | set(release.get("id_like") or [])
    for name, members in (("debian", _DEBIAN), ("redhat", _REDHAT), ("suse", {"suse", "sles", "opensuse"}),
                          ("arch", {"arch"})):
        if names & members or any(n.startswith(tuple(members)) for n in names if n):
            return name
    return None


def is_ubuntu(facts) -> bool:
    release = facts.get(OS_RELEASE_FACT) or {}
    return release.get("id") == "ubuntu" or "ubuntu" in (release.get("id_like") or [])


def amdgpu_loaded(facts) -> bool | None:
    """True/False from /sys/module/amdgpu (or a working KFD); None when neither was read."""
    module = facts.get(LINUX_AMDGPU_MODULE) or {}
    status = facts.get(ROCMINFO_STATUS) or {}
    if status.get("state") == "ok" or facts.get(KFD_NODES):
        return True
    return module.get("loaded") if module else None


def in_container(facts) -> bool:
    return bool((facts.get(OS_CONTAINER) or {}).get("in_container"))


def running_kernel(facts) -> str | None:
    return (facts.get(OS_KERNEL) or {}).get("release")


def initramfs_step_argv(facts) -> list[str]:
    """The command that rebuilds the initramfs, where modprobe.d and firmware are read at early boot."""
    return {"redhat": ["sudo", "dracut", "--force"], "arch": ["sudo", "mkinitcpio", "-P"],
            "suse": ["sudo", "dracut", "--force"]}.get(family(facts) or "", ["sudo", "update-initramfs", "-u"])
