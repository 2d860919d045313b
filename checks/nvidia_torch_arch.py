"""A CUDA build of torch against each NVIDIA GPU's compute capability: the predictor of torch's "sm_120 is not
compatible with the current PyTorch installation" warning and of "no kernel image is available for execution on
the device"."""

from __future__ import annotations

import re

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.installs import install_into
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import (PLATFORM_MACHINE, PYTHON_TARGET, TORCH_ARCH_LIST, TORCH_AVAILABLE,
                                    TORCH_CUDA_VERSION, TORCH_DEVICES, TORCH_FLAVOUR, TORCH_VERSION)
from rocm_doctor.knowledge import nvidia_arch
from rocm_doctor.knowledge.cuda_driver import cuda_key

from rocm_doctor.checks.symptoms import NVIDIA_GPU_WORK
from rocm_doctor.checks.torch_install import flavour_name

NO_KERNEL = "no kernel image is available for execution on the device"
SOURCE_BUILD = ("Build torch from a pytorch checkout with TORCH_CUDA_ARCH_LIST set to {cc}, with a CUDA toolkit that "
                "still builds for it (https://github.com/pytorch/pytorch#from-source).")
NO_WHEEL = ("No recorded download.pytorch.org CUDA index has {sm} machine code: install an older torch release whose "
            "wheels do, or build torch from a pytorch checkout with TORCH_CUDA_ARCH_LIST set to {cc}, with a CUDA "
            "toolkit that still builds for it (https://github.com/pytorch/pytorch#from-source).")
_CUDA_INDEX = re.compile(r"\+(cu\d+)")


def label(device: dict, sm: str = "") -> str:
    """"GPU 0 (NVIDIA H200, sm_90)"."""
    return f"GPU {device.get('index')} ({device.get('name') or 'NVIDIA GPU'}{', ' + sm if sm else ''})"


def capability(device: dict) -> tuple[int, int] | None:
    major, minor = device.get("major"), device.get("minor")
    return (major, minor) if isinstance(major, int) and isinstance(minor, int) else None


def arch_list(facts) -> tuple[list[str] | None, str]:
    """torch's arch list and where it comes from: measured (get_arch_list), else the table for its wheel index."""
    measured = facts.get(TORCH_ARCH_LIST)
    if measured:
        return list(measured), "torch.cuda.get_arch_list()"
    index = _CUDA_INDEX.search(str(facts.get(TORCH_VERSION) or ""))
    table = nvidia_arch.wheel_archs(index.group(1), facts.get(PLATFORM_MACHINE)) if index else None
    if table:
        return table, f"the machine code of the {index.group(1)} wheels (torch could not report its own list)"
    return None, ""


def built_for(archs: list[str]) -> str:
    """"sm_50 … sm_90" for a plain run of machine code, else the list itself."""
    codes = [code for code in map(nvidia_arch.parse, archs) if code]
    if len(codes) > 2 and all(not code.ptx and not code.suffix for code in codes):
        return f"{codes[0].entry} … {codes[-1].entry}"
    return ", ".join(archs)


class SmNotInTorchArchList(Check):
    id = "sm-not-in-torch-arch-list"
    title = "torch's GPU code for this NVIDIA GPU's compute capability"
    explains = NVIDIA_GPU_WORK
    area = "torch"
    severity = Severity.HIGH
    requires = (TORCH_FLAVOUR,)

    def run(self, facts):
        flavour = facts[TORCH_FLAVOUR]
        if flavour != "cuda":
            return self.skip(f"torch is a {flavour_name(flavour)} build, not a CUDA one (see torch-build-mismatch)")
        devices = [d for d in facts.get(TORCH_DEVICES) or [] if isinstance(d, dict)]
        if not devices:
            seen = "torch sees no GPU" if facts.get(TORCH_AVAILABLE) is False else "torch described no GPU"
            return self.skip(f"{seen}, so there is no compute capability to judge (see torch-cuda-unavailable)")
        archs, where = arch_list(facts)
        if archs is None:
            return self.skip(f"torch did not report its arch list ({facts.why_missing(TORCH_ARCH_LIST)})")
        return [self._one(facts, device, archs, where) for device in devices]

    def _one(self, facts, device, archs, where):
        cc, subject = capability(device), str(device.get("index"))
        version = facts.get(TORCH_VERSION)
        if cc is None:
            return self.skip(f"{label(device)}: torch did not report its compute capability", subject=subject)
        sm = nvidia_arch.sm_name(cc)
        gpu = label(device, sm)
        evidence = [f"{label(device)}: compute capability {cc[0]}.{cc[1]} ({sm})",
                    f"torch {version} arch list ({where}): {', '.join(archs)}"]
        native, ptx = nvidia_arch.code_for(archs, cc)
        if native:
            return self.ok(f"torch {version} has {native} machine code, which runs on {gpu}",
                           subject=subject, evidence=evidence)
        index = nvidia_arch.index_for(cc, facts.get(PLATFORM_MACHINE), version)
        if ptx:
            return self.info(
                f"torch {version} has no machine code for {gpu}, only {ptx} PTX: the driver JIT-compiles every kernel "
                "for it on first use, so the first start is slow (the driver caches the result) and kernels may run "
                "slower than code built for this GPU.", subject=subject, severity=Severity.LOW,
                evidence=evidence, remediation=[f"For native {sm} code, install torch from {index}."] if index else [])
        fix, alternatives = self._remedies(facts, cc, index)
        message = (f"torch {version} built for {built_for(archs)} has no code for {gpu}: CUDA kernels fail with "
                   f"'{NO_KERNEL}'.")
        first, built_with = nvidia_arch.first_cuda(cc), facts.get(TORCH_CUDA_VERSION)
        if first and cuda_key(built_with) and cuda_key(built_with) < cuda_key(first["cuda"]):
            evidence.append(f"{sm} ({first['architecture']}) machine code needs CUDA {first['cuda']} or later; this "
                            f"torch is built with CUDA {built_with}")
        return self.fail(message, subject=subject, evidence=evidence, data={"sm": sm, "arch_list": archs},
                         fix=fix, alternatives=alternatives)

    @staticmethod
    def _remedies(facts, cc, index) -> tuple[list, list]:
        """(preferred steps, alternatives): a torch from the CUDA index whose wheels carry machine code for the GPU,
        with a source build second; without such an index, an older release or a source build."""
        sm, dotted = nvidia_arch.sm_name(cc), f"{cc[0]}.{cc[1]}"
        if index is None:
            return [S.advice(NO_WHEEL.format(sm=sm, cc=dotted), note=f"a torch built with {sm} code")], []
        install = install_into(facts.get(PYTHON_TARGET), target_python(facts, "python"), ["torch"], index,
                               extra_args=["--force-reinstall"], note=f"a torch build whose arch list covers {sm}")
        build = S.advice(SOURCE_BUILD.format(cc=dotted), note=f"a torch built with {sm} code")
        return [install], [S.alternative(f"build torch for {sm} from source", build,
                                         why_not_first="takes hours, and the wheel above already has the code")]
