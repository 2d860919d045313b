"""rocm.packages (the ROCm, amdgpu and firmware packages installed, each with the release it was built for and
whether AMD or the distribution built it), rocm.opt_link (where /opt/rocm and /etc/alternatives/rocm point) and
gpu.firmware (the firmware versions rocm-smi, else amd-smi, read per GPU), from the rocm_packages probe."""

from __future__ import annotations

import re

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.ls_long import missing_paths, parse_ls_long
from rocm_doctor.parsers.packages import amd_release, parse_dpkg, parse_rpm, versioned_release
from rocm_doctor.parsers.smi_firmware import parse_amd_smi_firmware, parse_showfwinfo
from rocm_doctor.facts.keys import (AMD_SMI_FIRMWARE_KEY, DPKG_PACKAGES_KEY, FIRMWARE_KEY, GPU_FIRMWARE, LINK_PATHS,
                                    LS_OPT_ROCM_KEY, ROCM_OPT_LINK, ROCM_PACKAGES, RPM_PACKAGES_KEY)

FIRMWARE_PACKAGES = ("linux-firmware", "firmware-amd-graphics", "amd-gpu-firmware", "kernel-firmware-amdgpu")
_ROCM_NAME = re.compile(r"^(?:lib)?(?:rocm|hip|roc(?:blas|solver|fft|rand|sparse|prim|thrust|alution|wmma|minfo|"
                        r"profiler|tracer|tx)|rccl|miopen|migraphx|hsa|hsakmt|amd-comgr|comgr|amdhip|amd-smi|"
                        r"openmp-extras|composablekernel)")
NOT_INSTALLED = ("un", "pn")


def _kind(name: str) -> str | None:
    if name.startswith(FIRMWARE_PACKAGES):
        return "firmware"
    if "amdgpu" in name or name.startswith("rock-dkms"):
        return "driver"
    return "rocm" if _ROCM_NAME.match(name) else None


def _classify(row: dict) -> dict | None:
    kind = _kind(row["name"])
    if kind is None or row["status"] in NOT_INSTALLED:
        return None
    release = amd_release(row.get("version"))
    versioned = versioned_release(row["name"])
    built_by = "amd" if release or versioned or kind == "driver" else ("distribution" if kind == "rocm" else None)
    return dict(row, kind=kind, release=release, versioned=versioned, built_by=built_by)


def _packages(observations: Observations):
    for key, manager, parse in ((DPKG_PACKAGES_KEY, "dpkg", parse_dpkg), (RPM_PACKAGES_KEY, "rpm", parse_rpm)):
        result = observations.command(key)
        if result is None or result.error or result.timed_out:
            continue
        rows = [r for r in (_classify(row) for row in parse(result.stdout or "")) if r]
        if rows or result.returncode in (0, 1):  # dpkg-query exits 1 when a pattern matched nothing
            return {"manager": manager, "rows": rows}, ""
    found = [observations.command(k) for k in (DPKG_PACKAGES_KEY, RPM_PACKAGES_KEY)]
    if all(r is None for r in found):
        return None, "the package lists were not read (an older snapshot)"
    return None, "; ".join(r.describe() for r in found if r is not None) or "neither dpkg nor rpm answered"


def _opt_link(observations: Observations):
    result = observations.command(LS_OPT_ROCM_KEY)
    if result is None:
        return None, "/opt/rocm was not looked at (an older snapshot)"
    if result.error or result.timed_out:
        return None, result.describe()
    listed = {entry["name"].rstrip("/"): entry for entry in parse_ls_long(result.stdout or "")}
    entries = {path: listed.get(path) for path in LINK_PATHS}
    return {"entries": entries, "missing": missing_paths(result.stderr or ""),
            "lines": [line for line in (result.stdout or "").splitlines() if line.strip()]}, ""


FIRMWARE_SOURCES = ((FIRMWARE_KEY, "rocm-smi --showfwinfo", parse_showfwinfo),
                    (AMD_SMI_FIRMWARE_KEY, "amd-smi firmware", parse_amd_smi_firmware))


def _firmware(observations: Observations):
    """rocm-smi's versions first (the names the known-bad table uses), else amd-smi's, where rocm-smi is gone."""
    why = []
    for key, tool, parse in FIRMWARE_SOURCES:
        result = observations.command(key)
        if result is None:
            why.append(f"{tool} was not run")
            continue
        if result.error or result.timed_out:
            why.append(f"{tool}: {result.describe()}")
            continue
        gpus = parse(result.stdout or "")
        if gpus:
            return [dict(gpu, index=index, source=tool) for index, gpu in gpus.items()], ""
        why.append(f"{tool} printed no firmware versions ({result.describe()})")
    return None, "; ".join(why)


FACTS = ((ROCM_PACKAGES, _packages), (ROCM_OPT_LINK, _opt_link), (GPU_FIRMWARE, _firmware))


def interpret(observations: Observations, facts: Facts) -> None:
    facts.set_read(FACTS, observations, ("linux", "wsl"))
