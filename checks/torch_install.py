"""Checks on the installed torch: present, the right build for the GPU, able to reach it, and the probe itself."""

from __future__ import annotations

from rocm_doctor.checks.runtime_status import refusals
from rocm_doctor.engine.diagnosis import no_gpu_seen
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.remedy import alternative
from rocm_doctor.facts.facts import target_python
from rocm_doctor.engine.installs import install_into
from rocm_doctor.facts.keys import (GPU_INVENTORY, GPU_PCI, PYTHON_TARGET, RUNTIME_STATUS, TORCH_AVAILABLE,
                                    TORCH_AVAILABLE_ERROR, TORCH_CUDA_VERSION, TORCH_DEVICES, TORCH_DEVICE_COUNT,
                                    TORCH_FILE, TORCH_FLAVOUR, TORCH_HIP, TORCH_IMPORT_ERROR, TORCH_INSTALLED,
                                    TORCH_PROBE, TORCH_VERSION, TORCH_WARNINGS, WINDOWS_HIPINFO)
from rocm_doctor.knowledge import currency
from rocm_doctor.knowledge.wheels import amd_torch_index, cpu_index, cuda_index

from rocm_doctor.checks.amd_runtime import hardware_lines
from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_GPU_WORK


FLAVOUR_NAMES = {"rocm": "ROCm", "cuda": "CUDA", "cpu": "CPU"}


def flavour_name(flavour) -> str:
    """How a torch build flavour is written in messages: ROCm, CUDA, CPU."""
    return FLAVOUR_NAMES.get(str(flavour), str(flavour).upper())


def _gpu_vendors(facts) -> set[str]:
    return {g.get("vendor") for g in facts.get(GPU_PCI) or [] if isinstance(g, dict)}


def _pip_fix(facts, python: str, index_url: str, reinstall: bool = True, packages=("torch",),
             note: str = "install the torch build for this machine's GPU into the target interpreter") -> list:
    """The machine-applicable form of the pip advice (applied only with `fix --allow-install`)."""
    return [install_into(facts.get(PYTHON_TARGET), python, list(packages), index_url,
                         extra_args=["--force-reinstall"] if reinstall else [], note=note)]


def _amd_gfx(facts) -> str | None:
    """The gfx target of the first discrete AMD GPU (else the first one) in the inventory, if any source knew it."""
    gpus = [g for g in facts.get(GPU_INVENTORY) or [] if isinstance(g, dict) and g.get("gfx")]
    discrete = [g for g in gpus if g.get("igpu") is not True]
    return (discrete or gpus or [{}])[0].get("gfx")


def _amd_index(facts) -> tuple[str, str, list[str]]:
    return amd_torch_index(_amd_gfx(facts), facts.os)


def _amd_source(facts) -> str:
    """Where an AMD torch comes from when no install step can be planned (the index needs a device extra)."""
    index, why, _ = _amd_index(facts)
    return f"{why}: {index}"


def _amd_plan_is_direct(facts) -> bool:
    """A plain `pip install torch --index-url` is right on Linux, or where the GPU family's own index is known;
    AMD's multi-arch index needs the family extra, so without a gfx target the command stays advice."""
    return facts.os == "linux" or _amd_gfx(facts) is not None


class TorchProbeHealthy(Check):
    id = "torch-probe-crashed"
    title = "Completion of the torch probe"
    explains = TORCH_GPU_WORK
    area = "torch"
    severity = Severity.CRITICAL
    requires = (TORCH_PROBE,)

    def run(self, facts):
        probe = facts[TORCH_PROBE]
        state = probe["state"]
        evidence = [f"command: {' '.join(probe['argv'])}", f"exit code: {probe['returncode']}"]
        tail = [line for line in probe.get("stderr_tail", "").splitlines() if line.strip()][-12:]
        evidence += [f"stderr: {line}" for line in tail]
        if state == "ok":
            return self.ok(f"torch probe completed in {probe['duration_s']:.1f} s")
        if state == "not-run":
            return self.fail(f"the target interpreter could not be started: {probe['detail']}", evidence=evidence,
                             remediation=["Pass the interpreter of the environment you use with --python PATH."])
        if state == "hung":
            return self.fail(
                f"torch hung in the target interpreter: {probe['detail']}. What it waited on could not be told from "
                "the probe: the runtime's last call and the kernel log say whether it was the device.",
                evidence=evidence,
                remediation=[
                    "Re-run with AMD_LOG_LEVEL=4 (AMD) or CUDA_LOG_LEVEL/NCCL_DEBUG=INFO (NVIDIA) set to see the last runtime call.",
                    "If HSA_OVERRIDE_GFX_VERSION is set, unset it and retry; look for amdgpu or nvidia errors in the "
                    "kernel log (dmesg).",
                ],
            )
        return self.fail(
            f"torch crashed the target interpreter: {probe['detail']}.",
            evidence=evidence,
            remediation=[
                "Look at the last stderr lines above: an 'hipErrorNoBinaryForGpu' or 'invalid device function' means the "
                "torch build has no code for this GPU; a crash in import without such a line does not say which "
                "library failed.",
                "Import torch by hand in that environment to see which: the last library the traceback or the "
                "loader names is the one to check against torch's build.",
            ],
        )


class TorchInstalled(Check):
    id = "torch-not-installed"
    title = "PyTorch in the target environment"
    explains = ("torch-*", "gfx-not-in-torch-arch-list", "hip-runtime-mismatch", *GPU_WORK)
    area = "torch"
    severity = Severity.CRITICAL
    requires = (TORCH_INSTALLED,)

    def run(self, facts):
        python = target_python(facts, "python")
        no_gpu = no_gpu_seen(facts)
        evidence = [f"no GPU found: {no_gpu}"] if no_gpu else []
        if facts[TORCH_INSTALLED] and facts.has(TORCH_IMPORT_ERROR):
            fix, alternatives = self._plan(facts, python, reinstall=True, no_gpu=no_gpu)
            return self.fail(
                f"torch is installed in {python} but fails to import: {facts[TORCH_IMPORT_ERROR]}",
                evidence=[facts[TORCH_IMPORT_ERROR], *evidence],
                remediation=[] if fix else [f"Reinstall torch in that environment from {_amd_source(facts)}."],
                fix=fix, alternatives=alternatives,
            )
        if not facts[TORCH_INSTALLED]:
            fix, alternatives = self._plan(facts, python, reinstall=False, no_gpu=no_gpu)
            reason = (facts.get(PYTHON_TARGET) or {}).get("reason")
            return self.fail(
                f"torch is not installed in {python}" + (f", {reason}." if reason else "."),
                evidence=evidence,
                remediation=[] if fix else [f"Install torch in that environment from {_amd_source(facts)}."],
                fix=fix, alternatives=alternatives,
            )
        return self.ok(f"torch {facts.get(TORCH_VERSION)} at {facts.get(TORCH_FILE)}")

    @classmethod
    def _plan(cls, facts, python: str, reinstall: bool, no_gpu: str | None) -> tuple[list, list]:
        """(steps, alternatives). Where no GPU was found, the CPU build is what runs here; the GPU build comes as
        the alternative for a GPU this run could not see, with what it needs beside it."""
        gpu = cls._fix(facts, python, reinstall)
        if not no_gpu or facts.os != "linux":  # the CPU index's command is sourced for Linux
            return gpu, []
        cpu = _pip_fix(facts, python, cpu_index(), reinstall,
                       note="install the CPU build of torch, which runs on this machine without a GPU")
        if not gpu:
            return cpu, []
        index, why, _ = _amd_index(facts)
        return cpu, [alternative(
            "the ROCm build, for an AMD GPU this run did not find", *gpu,
            why_not_first=f"no GPU was found here, and a ROCm build uses none until one shows. Prefer it when this "
                          f"machine does have an AMD GPU: fix what hides it first, then run rocm-doctor check again, "
                          f"which names the index for that GPU's gfx target. It installs from {index}: {why}.")]

    @classmethod
    def _fix(cls, facts, python: str, reinstall: bool) -> list:
        vendors = _gpu_vendors(facts)
        if "nvidia" in vendors or ("nvidia" not in vendors and _amd_plan_is_direct(facts)):  # no GPU seen: AMD first
            index, packages = cls._index(facts)
            return _pip_fix(facts, python, index, reinstall, packages)
        return []

    @staticmethod
    def _index(facts) -> tuple[str, list[str]]:
        """(index, requirements): CUDA torch of the installed release where one is known, else of the newest."""
        if "nvidia" in _gpu_vendors(facts) and "amd" not in _gpu_vendors(facts):
            return cuda_index(facts.get(TORCH_VERSION)), ["torch"]
        index, _, packages = _amd_index(facts)
        return index, packages


class TorchBuildMatchesGpu(Check):
    id = "torch-build-mismatch"
    title = "The torch build against the GPU in this machine"
    explains = ("torch-cuda-unavailable", "gfx-not-in-torch-arch-list", "torch-arch-list-vs-table",
                "hip-runtime-mismatch", *GPU_WORK)
    area = "torch"
    severity = Severity.CRITICAL
    requires = (TORCH_FLAVOUR, GPU_PCI)

    def run(self, facts):
        flavour = facts[TORCH_FLAVOUR]
        vendors = _gpu_vendors(facts)
        version = facts.get(TORCH_VERSION)
        python = target_python(facts, "python")
        if "amd" in vendors and flavour != "rocm" and "nvidia" not in vendors:
            index, why, packages = _amd_index(facts)
            return self.fail(
                f"torch {version} is a {flavour_name(flavour)} build, but the GPU here is AMD: it will never use the GPU.",
                evidence=[f"torch.version.hip = {facts.get(TORCH_HIP)}", f"torch.version.cuda = {facts.get(TORCH_CUDA_VERSION)}"],
                remediation=[f"Install {why}" + ("." if _amd_plan_is_direct(facts) else f": {index}")],
                fix=_pip_fix(facts, python, index, packages=packages) if _amd_plan_is_direct(facts) else [],
            )
        if "nvidia" in vendors and flavour != "cuda" and "amd" not in vendors:
            later = currency.newer("torch", version)
            return self.fail(
                f"torch {version} is a {flavour_name(flavour)} build, but the GPU here is NVIDIA.",
                evidence=[f"{later}: the CUDA index is the newest release's in the table"] if later else [],
                remediation=[currency.advice()] if later else [],
                fix=_pip_fix(facts, python, cuda_index(version)),
            )
        if not vendors & {"amd", "nvidia"}:
            if flavour == "cpu":
                return self.ok(f"torch {version} is a CPU build and no AMD or NVIDIA GPU was found")
            return self.info(f"torch {version} is a {flavour_name(flavour)} build, but no AMD or NVIDIA GPU shows on PCI")
        return self.ok(f"torch {version} is a {flavour_name(flavour)} build for the {'/'.join(sorted(vendors & {'amd', 'nvidia'})).upper()} GPU here")


class TorchSeesGpu(Check):
    id = "torch-cuda-unavailable"
    title = "torch.cuda.is_available()"
    area = "torch"
    severity = Severity.CRITICAL
    requires = (TORCH_AVAILABLE, TORCH_FLAVOUR)

    def run(self, facts):
        flavour = facts[TORCH_FLAVOUR]
        if facts[TORCH_AVAILABLE]:
            count = facts.get(TORCH_DEVICE_COUNT, 0)
            names = ", ".join(d.get("name", "?") for d in facts.get(TORCH_DEVICES) or [])
            return self.ok(f"torch sees {count} GPU{'s' if count != 1 else ''}: {names}")
        if flavour == "cpu":
            return self.skip("torch is a CPU build (see torch-build-mismatch)")
        evidence = []
        if facts.get(TORCH_AVAILABLE_ERROR):
            evidence.append(f"exception: {facts[TORCH_AVAILABLE_ERROR]}")
        evidence += [f"warning: {w}" for w in facts.get(TORCH_WARNINGS) or []]
        if flavour == "rocm":  # the other side: what shows a GPU below torch
            evidence += hardware_lines(facts)
        said = facts.get(TORCH_AVAILABLE_ERROR) or next(iter(facts.get(TORCH_WARNINGS) or []), None)
        runtime = refusals(facts.get(RUNTIME_STATUS) or {}, flavour)
        evidence += [f"the runtime says: {call.get('call')}() returned {row.get('name') or call.get('name')} "
                     f"({call.get('code')})" for _, call, row in runtime]
        if not said and runtime:
            _, call, row = runtime[0]
            said = f"nothing; the runtime says {row.get('name') or call.get('name')} (see gpu-runtime-refuses)"
        remediation = [
            "Check that the GPU driver is loaded and the devices are accessible (see the ROCm/driver findings).",
            "Make sure no *_VISIBLE_DEVICES variable hides the GPU (see gpu-visibility-env).",
        ]
        cause = ""
        hipinfo = facts.get(WINDOWS_HIPINFO)
        if (facts.os == "windows" and flavour == "rocm" and isinstance(hipinfo, dict) and not hipinfo.get("devices")
                and not hipinfo.get("error") and not hipinfo.get("timed_out")):
            # hipInfo ran and lists no device: the cause is below torch, and that finding says which
            cause = " The HIP runtime itself lists no GPU (hipInfo), so the cause is below torch."
            remediation.insert(0, "First make the HIP runtime list the GPU (the hipInfo finding): torch cannot see a "
                                  "GPU the HIP runtime does not list.")
        return self.fail(
            f"this {flavour_name(flavour)} build of torch cannot reach any GPU"
            + (f"; torch says: {said}" if said else " (torch gave no reason).") + cause,
            evidence=evidence,
            remediation=remediation,
        )
