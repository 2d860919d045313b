"""The ROCm and amdgpu packages the package manager holds (dpkg or rpm, by ROCm package names), where /opt/rocm and
its alternatives entry point (`ls -ld`), and the firmware versions rocm-smi and amd-smi read from the GPUs."""

from __future__ import annotations

from rocm_doctor.facts.keys import (AMD_SMI_FIRMWARE_KEY, DPKG_PACKAGES_KEY, FIRMWARE_KEY, LINK_PATHS, LS_OPT_ROCM_KEY,
                                    RPM_PACKAGES_KEY)
from rocm_doctor.probes._base import Recorder
from rocm_doctor.probes.amd_tools import resolve

PLATFORMS = ("linux", "wsl")
# Package-name patterns: AMD's ROCm and driver packages, the distributions' own ROCm builds (libhsa-runtime64-1,
# librocblas0, ...), and the firmware packages amdgpu loads from.
PATTERNS = ("rocm*", "hip*", "rocblas*", "rocsolver*", "rocfft*", "rocrand*", "rocsparse*", "rocprim*", "rocthrust*",
            "rocalution*", "rocwmma*", "rocminfo*", "rocprofiler*", "roctracer*", "rccl*", "miopen*", "migraphx*",
            "hsa*", "hsakmt*", "comgr*", "amd-smi*", "amdgpu*", "openmp-extras*", "composablekernel*", "libhsa*",
            "libhsakmt*", "libamdhip*", "librocm*", "librocblas*", "librocsolver*", "librocfft*", "librocrand*",
            "librocsparse*", "libroctx*", "libhip*", "librccl*", "libmiopen*", "libamd-comgr*", "linux-firmware*",
            "firmware-amd-graphics", "amd-gpu-firmware", "kernel-firmware-amdgpu")
DPKG_FORMAT = "${Package} ${Version} ${db:Status-Abbrev}\n"
RPM_FORMAT = "%{NAME} %{VERSION}-%{RELEASE}\n"
COMMANDS = {
    DPKG_PACKAGES_KEY: ["dpkg-query", "-W", "-f", DPKG_FORMAT, *PATTERNS],
    RPM_PACKAGES_KEY: ["rpm", "-qa", "--qf", RPM_FORMAT, *PATTERNS],
    LS_OPT_ROCM_KEY: ["ls", "-ld", *LINK_PATHS],
}


def _failed(shown) -> bool:
    """rocm-smi is absent (amd-smi replaces it in newer ROCm) or failed: amd-smi is asked instead."""
    return bool(shown.error or shown.timed_out or shown.returncode != 0 or not (shown.stdout or "").strip())


def _firmware(recorder: Recorder) -> None:
    env = recorder.context.env
    recorder.with_fallback(
        lambda: recorder.command(FIRMWARE_KEY, [resolve("rocm-smi", env) or "rocm-smi", "--showfwinfo"], env=dict(env)),
        _failed, AMD_SMI_FIRMWARE_KEY, [resolve("amd-smi", env) or "amd-smi", "firmware"], env=dict(env))


def collect(recorder: Recorder) -> None:
    calls = [lambda key=key, argv=argv: recorder.command(key, argv) for key, argv in COMMANDS.items()]
    if recorder.context.platform_os == "linux":  # WSL has no amdgpu: rocm-smi reads nothing there
        calls.append(lambda: _firmware(recorder))
    recorder.side_by_side(*calls)
