"""Platform checks: is this an OS and Python that PyTorch GPU builds exist for, and is this WSL."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import (PLATFORM_MACHINE, PLATFORM_OS, PLATFORM_RELEASE, PLATFORM_SYSTEM, PYTHON_TARGET,
                                    PYTHON_TARGET_VERSION)

# PyTorch 2.6+ wheels need Python 3.9+; ROCm wheels are published for 3.9-3.13 (data/ keeps per-release detail).
OLDEST_PYTHON = Version("3.9")


class SupportedPlatform(Check):
    id = "platform-supported"
    title = "The operating system for PyTorch on an AMD or NVIDIA GPU"
    area = "platform"
    severity = Severity.HIGH
    requires = (PLATFORM_OS,)

    def run(self, facts):
        os_name = facts[PLATFORM_OS]
        machine = (facts.get(PLATFORM_MACHINE) or "").lower()
        described = f"{facts.get(PLATFORM_SYSTEM, os_name)} {facts.get(PLATFORM_RELEASE, '')} ({machine or 'unknown CPU'})".strip()
        if os_name == "macos":
            return self.fail(
                f"{described}: macOS has no ROCm or CUDA; PyTorch uses the MPS backend there.",
                remediation=["Use a Linux or Windows machine with a supported GPU, or torch's MPS device on Apple silicon."],
            )
        if machine and machine not in ("x86_64", "amd64"):
            return self.warn(
                f"{described}: ROCm and the PyTorch ROCm wheels are built for x86_64 only.",
                remediation=["Use an x86_64 machine for AMD GPUs; on aarch64 only NVIDIA CUDA builds of torch exist."],
            )
        return self.ok(f"{described}")


class TargetPython(Check):
    id = "python-version"
    title = "PyTorch GPU wheels for this Python version"
    area = "platform"
    severity = Severity.HIGH
    requires = (PYTHON_TARGET,)

    def run(self, facts):
        target = facts[PYTHON_TARGET]
        version_text = facts.get(PYTHON_TARGET_VERSION)
        where = str(target.get("python"))  # why it was chosen is in the evidence (it has parentheses of its own)
        chosen = [f"interpreter: {where}"] + ([f"chosen as: {target['reason']}"] if target.get("reason") else [])
        if not version_text:
            return self.skip(f"the version of {where} is unknown: {facts.why_missing(PYTHON_TARGET_VERSION)}",
                             evidence=chosen)
        try:
            version = Version(version_text)
        except InvalidVersion:
            return self.warn(f"cannot read the Python version {version_text!r} of {where}", evidence=chosen)
        if version < OLDEST_PYTHON:
            return self.fail(
                f"Python {version} at {where} is older than any current PyTorch wheel supports.",
                remediation=["Create a new environment with Python 3.10-3.12 and install torch there."],
                evidence=chosen,
            )
        return self.ok(f"Python {version} at {where}", evidence=chosen)


class WslDetected(Check):
    id = "wsl-detected"
    title = "Running under WSL2"
    area = "platform"
    severity = Severity.LOW
    platforms = (Platform.WSL,)
    requires = (PLATFORM_OS,)
    docs = ("https://rocm.docs.amd.com/projects/radeon/en/latest/docs/compatibility/wsl/wsl_compatibility.html",)

    def run(self, facts):
        return self.info(
            f"WSL2 detected (kernel {facts.get(PLATFORM_RELEASE, 'unknown')}): the GPU is reached through /dev/dxg "
            "and the Windows driver, not amdgpu; only the WSL-specific ROCm releases and cards in AMD's WSL list work.",
        )
