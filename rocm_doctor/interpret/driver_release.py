"""linux.amdgpu_driver: which amdgpu kernel driver runs or would load — AMD's DKMS build (its module version and,
from the amdgpu-dkms package, its exact release) or the distribution kernel's own (inbox) one — read once from
/sys/module/amdgpu, modinfo, dkms status and the package list, which other interpreters own."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (AMDGPU_VERSION_FILE, LINUX_AMDGPU_DRIVER, LINUX_AMDGPU_MODINFO, LINUX_AMDGPU_MODULE,
                                    LINUX_DKMS_AMDGPU, OS_KERNEL, ROCM_PACKAGES)
from rocm_doctor.facts.observations import Observations

REQUIRES = (LINUX_AMDGPU_MODULE, LINUX_AMDGPU_MODINFO, LINUX_DKMS_AMDGPU, ROCM_PACKAGES, OS_KERNEL)
DRIVER_PACKAGES = ("amdgpu-dkms", "rock-dkms")


def _package(facts: Facts) -> dict | None:
    rows = (facts.get(ROCM_PACKAGES) or {}).get("rows") or []
    return next((r for r in rows if r["name"] in DRIVER_PACKAGES and r["status"] != "rc"), None)


def _module_version(facts: Facts, kernel: str | None) -> tuple[str | None, str]:
    """The DKMS module version and where it was read: the loaded module, the file modprobe picks, dkms status."""
    module = facts.get(LINUX_AMDGPU_MODULE) or {}
    if module.get("loaded") and module.get("version"):
        return module["version"], AMDGPU_VERSION_FILE
    modinfo = facts.get(LINUX_AMDGPU_MODINFO) or {}
    if modinfo.get("origin") == "dkms" and modinfo.get("version"):
        return modinfo["version"], f"modinfo amdgpu ({modinfo.get('filename')})"
    for row in facts.get(LINUX_DKMS_AMDGPU) or []:
        if row["state"] == "installed" and row.get("kernel") == kernel:
            return row["version"].split("-", 1)[0], f"dkms status: amdgpu/{row['version']}, {row['kernel']}"
    return None, ""


def _kind(facts: Facts, version: str | None, kernel: str | None) -> str | None:
    """dkms, inbox, or None when nothing says which."""
    if version:
        return "dkms"
    modinfo = facts.get(LINUX_AMDGPU_MODINFO) or {}
    if modinfo.get("origin") in ("dkms", "inbox"):
        return modinfo["origin"]
    module = facts.get(LINUX_AMDGPU_MODULE) or {}
    dkms = facts.get(LINUX_DKMS_AMDGPU)
    if module.get("loaded") and dkms is not None and not any(
            r["state"] == "installed" and r.get("kernel") == kernel for r in dkms):
        return "inbox"  # loaded, no version file (the kernel's own amdgpu has none), no DKMS build for this kernel
    return None


def interpret(observations: Observations, facts: Facts) -> None:
    if facts.os != "linux":
        facts.set_missing(LINUX_AMDGPU_DRIVER, f"not collected on {facts.os}")
        return
    inputs = (LINUX_AMDGPU_MODULE, LINUX_AMDGPU_MODINFO, LINUX_DKMS_AMDGPU, ROCM_PACKAGES)
    if all(facts.get(key) is None for key in inputs):
        facts.set_missing(LINUX_AMDGPU_DRIVER, "neither the loaded module, modinfo, dkms status nor the package "
                                                 "list was read")
        return
    kernel = (facts.get(OS_KERNEL) or {}).get("release")
    version, where = _module_version(facts, kernel)
    package = _package(facts)
    module = facts.get(LINUX_AMDGPU_MODULE) or {}
    facts.set(LINUX_AMDGPU_DRIVER, {
        "kind": _kind(facts, version, kernel), "module_version": version, "module_source": where,
        "package": package["name"] if package else None, "package_version": package["version"] if package else None,
        "package_release": package["release"] if package else None, "package_status": package["status"] if package
        else None, "kernel": kernel, "loaded": module.get("loaded")})
