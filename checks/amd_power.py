"""Linux, several AMD GPUs: GPU work hung while amdgpu runtime power management is on. A GPU that does not wake from
its idle power state hangs the first kernel or copy on it (ROCm/ROCm#2418, fixed by amdgpu.runpm=0)."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import COLLECTIVES_RESULTS, GPU_INVENTORY, GPU_TARGETS, LINUX_KERNEL_CMDLINE, TORCH_PROBE
from rocm_doctor.knowledge import signatures

from rocm_doctor.checks.amd_common import gpus, integrated, kernel_parameter_steps
from rocm_doctor.checks.amd_signatures import texts

PARAMS = "amdgpu.ppfeaturemask=0xffff3fff amdgpu.runpm=0x0"  # the fix confirmed in ROCm/ROCm#2418


def runpm_off(cmdline: dict) -> bool:
    """True when the kernel command line sets amdgpu.runpm=0 (any integer spelling: 0, 0x0)."""
    value = ((cmdline or {}).get("amdgpu") or {}).get("runpm")
    try:
        return value is not None and int(str(value), 0) == 0
    except ValueError:
        return False


def hang_evidence(facts, check_id: str) -> list[str]:
    """What says GPU work hung: the torch probe, a collective, or a known hang signature in torch's output or a log."""
    out = []
    probe = facts.get(TORCH_PROBE) or {}
    if probe.get("state") == "hung":
        out.append(f"torch probe hung: {probe.get('detail') or 'no answer'}")
    collectives = facts.get(COLLECTIVES_RESULTS)
    if collectives is None:
        collectives = facts.observations.probes.get("collectives")
    if isinstance(collectives, dict) and collectives.get("hang"):
        out.append(f"collective hang: {collectives['hang'].get('summary') or 'the ranks stopped'}")
    for where, text in texts(facts):
        out += [f"{where}: {m.line[:240]} ({m.id})" for m in signatures.match(text) if m.check == check_id]
    return out


class GpuHangPowerState(Check):
    id = "gpu-hang-power-state"
    title = "Risk of multi-GPU hangs from a GPU stuck in its idle power state"
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX,)
    requires = (GPU_INVENTORY, GPU_TARGETS, LINUX_KERNEL_CMDLINE)

    def run(self, facts):
        found = gpus(facts)
        if len(found) < 2 or all(integrated(facts, g) for g in found):
            return self.skip(f"needs two or more AMD GPUs, one of them discrete (found {len(found)})")
        hangs = hang_evidence(facts, self.id)
        if not hangs:
            return self.ok(f"no GPU hang seen ({len(found)} AMD GPUs)")
        cmdline = facts[LINUX_KERNEL_CMDLINE] or {}
        amdgpu = cmdline.get("amdgpu") or {}
        evidence = hangs + ["/proc/cmdline amdgpu parameters: "
                            + (" ".join(f"amdgpu.{k}={v}" for k, v in amdgpu.items()) or "(none)")]
        if runpm_off(cmdline):
            return self.info("GPU work hung, but amdgpu.runpm=0 is already set: not the idle power state; see the "
                             "other findings (collective-hang, iommu-multi-gpu-hang-risk, gpu-kernel-hang)",
                             evidence=evidence)
        fix, alternatives = kernel_parameter_steps(facts, PARAMS, "keep idle GPUs from failing to wake (ROCm/ROCm#2418)")
        return self.warn(
            f"GPU work hung on a machine with {len(found)} AMD GPUs and amdgpu runtime power management on (no "
            "amdgpu.runpm=0 on the kernel command line): a GPU that does not wake from its idle power state hangs "
            "the first kernel or copy on it (ROCm/ROCm#2418).",
            evidence=evidence,
            remediation=["After the reboot, /proc/cmdline must list the new parameters.",
                         "If it still hangs, look for amdgpu errors in the kernel log (dmesg), and see "
                         "iommu-multi-gpu-hang-risk."],
            data={"hangs": hangs, "amdgpu": amdgpu}, fix=fix, alternatives=alternatives)
