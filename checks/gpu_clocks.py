"""How the GPU is running: clocks held low, a power limit below the default, thermal or power throttling, a forced
performance level, a PCIe link trained below its capability, uncorrected ECC errors. Each names the figures the
SMI tools or sysfs gave; an idle GPU's low clocks and slower link are power saving, not a fault."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.facts.keys import GPU_LIVE

from rocm_doctor.checks.gpu_state import busy, gpus, label, state_line, subject

SLOWDOWNS = {"hw_slowdown": "hardware slowdown", "hw_thermal_slowdown": "hardware thermal slowdown",
             "sw_thermal_slowdown": "software thermal slowdown", "hw_power_brake_slowdown": "power brake (the "
             "system's power supply asked the GPU to slow down)", "throttled": "throttling (amd-smi)"}
LOW_CLOCK = 0.5  # a busy GPU's memory clock under this share of its maximum is held low
FIXED_LOW_LEVELS = {"low", "manual", "profile_standard", "profile_min_sclk", "profile_min_mclk", "stable_std",
                    "stable_min_sclk", "stable_min_mclk"}


class GpuClocksHeldLow(Check):
    id = "gpu-clocks-held-low"
    title = "Settings that hold the GPU's clocks below their maximum"
    area = "gpu-state"
    severity = Severity.MEDIUM
    requires = (GPU_LIVE,)
    explains = ("bench-*",)

    def run(self, facts):
        clocked = [g for g in gpus(facts) if g.get("sm_clock_mhz") is not None or g.get("throttle_reasons")]
        if not clocked:
            return self.skip("no tool reported the GPU clocks")
        findings = []
        for gpu in clocked:
            reasons, sub = gpu.get("throttle_reasons") or [], subject(facts, gpu)
            sm, top = gpu.get("sm_clock_mhz"), gpu.get("sm_clock_max_mhz")
            mem, mem_top = gpu.get("mem_clock_mhz"), gpu.get("mem_clock_max_mhz")
            if "applications_clocks_setting" in reasons:
                findings.append(self.warn(
                    f"{label(gpu)}'s clocks are held by the applications-clocks setting: SM {sm} of {top} MHz.",
                    subject=sub, evidence=[state_line(gpu), "active clock event reason: applications clocks "
                                                            "setting (nvidia-smi)"],
                    remediation=[f"Reset them if nothing needs them: `sudo nvidia-smi -i {gpu.get('index')} -rac` "
                                 f"(application clocks) and `sudo nvidia-smi -i {gpu.get('index')} -rgc` (locked "
                                 "clocks)."], data={"sm_mhz": sm, "sm_max_mhz": top}))
            elif busy(gpu) and mem is not None and mem_top and mem < LOW_CLOCK * mem_top and not reasons:
                findings.append(self.warn(
                    f"{label(gpu)} was busy with its memory clock at {mem} of {mem_top} MHz and no reason reported: "
                    "memory-bound work runs at a fraction of its speed.", subject=sub, evidence=[state_line(gpu)],
                    remediation=["Look for a clock lock or a power profile set by the vendor tools "
                                 "(`nvidia-smi -q -d CLOCK,PERFORMANCE`, `amd-smi metric --clock`)."]))
        return findings or self.ok("; ".join(self._why_ok(g) for g in clocked))

    @staticmethod
    def _why_ok(gpu: dict) -> str:
        if "gpu_idle" in (gpu.get("throttle_reasons") or []):
            return f"{label(gpu)} idle (clocks drop when nothing runs: SM {gpu.get('sm_clock_mhz')} MHz)"
        return f"{label(gpu)}: no clock-limiting setting active"


class GpuPowerCapped(Check):
    id = "gpu-power-capped"
    title = "The GPU's power limit against its default"
    area = "gpu-state"
    severity = Severity.MEDIUM
    requires = (GPU_LIVE,)
    explains = ("bench-*",)

    def run(self, facts):
        limited = [g for g in gpus(facts) if g.get("power_limit_w") and g.get("power_default_w")]
        if not limited:
            return self.skip("no tool reported both the power limit and its default (nvidia-smi reports them)")
        findings = []
        for gpu in limited:
            limit, default = gpu["power_limit_w"], gpu["power_default_w"]
            if limit >= default - 1:
                continue
            active = "sw_power_cap" in (gpu.get("throttle_reasons") or [])
            findings.append(self.warn(
                f"{label(gpu)}'s power limit is {limit:.0f} W, below its default {default:.0f} W: under load the "
                "clocks drop to stay within it" + (f", as now ({gpu.get('power_w'):.0f} W drawn)." if active and
                                                   gpu.get("power_w") is not None else "."),
                subject=subject(facts, gpu), evidence=[state_line(gpu), f"power.limit {limit} W, "
                                                                        f"power.default_limit {default} W"],
                remediation=[f"Restore the default if nothing needs the cap: `sudo nvidia-smi -i {gpu.get('index')} "
                             f"-pl {default:.0f}` (a datacenter may cap power on purpose: ask its admins)."],
                data={"limit_w": limit, "default_w": default}))
        return findings or self.ok(f"power limit at its default on {len(limited)} GPU(s)")


class GpuThrottling(Check):
    id = "gpu-throttling"
    title = "Heat or power throttling of the GPU"
    area = "gpu-state"
    severity = Severity.HIGH
    requires = (GPU_LIVE,)
    explains = ("bench-*", Explains("gpu-kernel-hang", when_failing))

    def run(self, facts):
        reported = [g for g in gpus(facts) if g.get("throttle_reasons") is not None]
        if not reported:
            return self.skip("no tool reported why the clocks are where they are (nvidia-smi clock event "
                             "reasons, amd-smi throttle status)")
        findings = []
        for gpu in reported:
            reasons, sub = gpu["throttle_reasons"], subject(facts, gpu)
            slow = [SLOWDOWNS[r] for r in reasons if r in SLOWDOWNS]
            if slow:
                findings.append(self.warn(
                    f"{label(gpu)} is being slowed down: {', '.join(slow)}.", subject=sub,
                    evidence=[state_line(gpu), "active reasons: " + ", ".join(reasons)],
                    remediation=["Check the cooling (fans, airflow, dust, the room) and the power supply; "
                                 "`nvidia-smi -q -d PERFORMANCE,TEMPERATURE` or `amd-smi metric --temperature "
                                 "--power` show the limits it hits."], data={"reasons": reasons}))
            elif "sw_power_cap" in reasons:
                findings.append(self.info(
                    f"{label(gpu)} was drawing {gpu.get('power_w') or 0:.0f} W of its "
                    f"{gpu.get('power_limit_w') or 0:.0f} W limit: the driver holds the clocks to stay within it "
                    "(expected under full load).", subject=sub, evidence=[state_line(gpu)],
                    data={"reasons": reasons}))
        return findings or self.ok(f"no thermal or power slowdown on {len(reported)} GPU(s)")


class GpuPerfLevelForced(Check):
    id = "gpu-perf-level-forced"
    title = "The AMD GPU's performance level setting"
    area = "gpu-state"
    severity = Severity.MEDIUM
    requires = (GPU_LIVE,)
    explains = ("bench-*",)

    def run(self, facts):
        leveled = [g for g in gpus(facts) if g.get("perf_level")]
        if not leveled:
            return self.skip("no performance level reported (amdgpu's power_dpm_force_performance_level or "
                             "amd-smi metric; NVIDIA GPUs have none)")
        findings = []
        for gpu in leveled:
            level = gpu["perf_level"].lower()
            if level == "auto":
                continue
            evidence = [f"{label(gpu)}: performance level {level} ({gpu.get('source')})"]
            reset = ["Back to automatic: `sudo amd-smi set -g {0} -l AUTO` or `sudo rocm-smi -d {0} "
                     "--setperflevel auto` (it also resets at reboot).".format(gpu.get("index"))]
            if level in FIXED_LOW_LEVELS:
                findings.append(self.warn(
                    f"{label(gpu)}'s performance level is forced to {level}: its clocks are pinned instead of "
                    "rising with the load.", subject=subject(facts, gpu), evidence=evidence, remediation=reset,
                    data={"level": level}))
            else:
                findings.append(self.info(f"{label(gpu)}'s performance level is forced to {level}.",
                                          subject=subject(facts, gpu), evidence=evidence, remediation=reset,
                                          data={"level": level}))
        return findings or self.ok(f"performance level auto on {len(leveled)} GPU(s)")


class GpuPcieLinkDegraded(Check):
    id = "gpu-pcie-link-degraded"
    title = "The GPU's PCIe link width and speed against its maximum"
    area = "gpu-state"
    severity = Severity.MEDIUM
    requires = (GPU_LIVE,)
    explains = ("bench-host-copy-slow",)

    def run(self, facts):
        linked = [g for g in gpus(facts) if g.get("pcie_width_max") or g.get("pcie_gen_max")]
        if not linked:
            return self.skip("no tool reported a PCIe link's maximum (nvidia-smi does; amd-smi metric reports the "
                             "current link only)")
        findings, notes = [], []
        for gpu in linked:
            width, width_max = gpu.get("pcie_width"), gpu.get("pcie_width_max")
            gen, gen_max = gpu.get("pcie_gen"), gpu.get("pcie_gen_max")
            evidence = [f"{label(gpu)}: PCIe gen {gen} of {gen_max}, x{width} of x{width_max} (nvidia-smi)"]
            narrow = width is not None and width_max and width < width_max
            slow = gen is not None and gen_max and gen < gen_max
            if narrow or (slow and busy(gpu)):
                what = " and ".join(([f"x{width} of x{width_max} lanes"] if narrow else [])
                                    + ([f"gen {gen} of {gen_max}"] if slow else []))
                findings.append(self.warn(
                    f"{label(gpu)}'s PCIe link trained at {what}: host-to-GPU copies run slower than this GPU and "
                    "slot allow.", subject=subject(facts, gpu), evidence=evidence + [state_line(gpu)],
                    remediation=["Reseat the card or move it to a full-width slot, check the BIOS slot settings "
                                 "(link speed, bifurcation) and any riser cable; `sudo lspci -vv` shows LnkCap "
                                 "against LnkSta."], data={"gen": gen, "gen_max": gen_max, "width": width,
                                                           "width_max": width_max}))
            elif slow:
                notes.append(f"{label(gpu)} idle at gen {gen} of {gen_max} (the link slows down when idle)")
        return findings or self.ok("; ".join(notes) or f"PCIe links at full width and speed on {len(linked)} GPU(s)")


def _ecc_steps(gpu: dict) -> list:
    """Reset the GPU (which clears the volatile count), then read the error detail that decides about service."""
    index = str(gpu.get("index"))
    if gpu.get("vendor") == "nvidia":
        reset, detail = ["sudo", "nvidia-smi", "-i", index, "-r"], ["nvidia-smi", "-i", index, "-q", "-d",
                                                                     "ECC,ROW_REMAPPER"]
    else:
        reset, detail = ["sudo", "amd-smi", "reset", "-G", "-g", index], ["amd-smi", "metric", "--ecc", "-g", index]
    return [S.run_command(reset, needs_admin=True, description=f"reset {label(gpu)} once no job uses it"),
            S.run_command(detail, description="then read which memory the errors were in, and whether rows were "
                          "remapped")]


class GpuEccErrors(Check):
    id = "gpu-ecc-errors"
    title = "Uncorrected memory (ECC) errors on the GPU"
    area = "gpu-state"
    severity = Severity.HIGH
    requires = (GPU_LIVE,)
    explains = tuple(Explains(t, when_failing) for t in ("gpu-kernel*", "bench-*", "collective-*"))

    def run(self, facts):
        counted = [g for g in gpus(facts) if g.get("ecc_uncorrected") is not None]
        if not counted:
            return self.skip("no ECC error count reported (ECC off or not supported, as on most consumer GPUs)")
        findings = []
        for gpu in counted:
            errors = gpu["ecc_uncorrected"]
            if errors > 0:
                findings.append(self.fail(
                    f"{label(gpu)} reports {errors:.0f} uncorrected ECC error(s) since the driver loaded: results "
                    "computed on it may be wrong and CUDA/HIP calls can fail.", subject=subject(facts, gpu),
                    evidence=[f"{label(gpu)}: {errors:.0f} uncorrected ECC errors ({gpu.get('source')})"],
                    fix=_ecc_steps(gpu),
                    remediation=["Stop the jobs on it first: a reset ends every process on the GPU. If the errors "
                                 "come back after the reset or a reboot, the GPU needs service."],
                    data={"errors": errors}))
        return findings or self.ok(f"no uncorrected ECC errors on {len(counted)} GPU(s)")
