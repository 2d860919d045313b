"""What else is on the GPU: other processes computing on it or holding its memory, a compute mode that keeps this
process out, MIG partitions. Each finding names what the SMI tools showed (pid, name, MiB, %)."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains, same_subject, when_failing
from rocm_doctor.facts.keys import GPU_LIVE

from rocm_doctor.checks.gpu_state import busy, gpus, label, live, mib, others, pct, processes, state_line, \
    subject, who
from rocm_doctor.checks.symptoms import GPU_UNUSABLE

BUSY_UNLISTED_PCT = 10  # utilization with no process listed that says someone else is computing
HELD_WARN_PCT = 50
HELD_FAIL_PCT = 90


def _listing_missing(facts) -> str:
    sources = live(facts).get("sources") or {}
    return "; ".join(f"{k}: {v}" for k, v in sources.items() if v != "ok") or "no tool listed them"


class GpuOtherProcess(Check):
    id = "gpu-other-process"
    title = "Other processes computing on the GPU"
    area = "gpu-state"
    severity = Severity.MEDIUM
    requires = (GPU_LIVE,)
    explains = ("bench-*",)

    def run(self, facts):
        listed = [g for g in gpus(facts) if g.get("processes_listed")]
        if not listed:
            return self.skip(f"no tool listed the processes on the GPUs ({_listing_missing(facts)})")
        findings = []
        for gpu in listed:
            found, seen = others(facts, gpu), state_line(gpu)
            sub = subject(facts, gpu)
            evidence = [seen] + [f"{who(p)}: {mib(p.get('memory_mib'))} on {label(gpu)} ({p.get('source')})"
                                 for p in found]
            data = {"gpu": gpu.get("index"), "processes": found, "utilization_pct": gpu.get("utilization_pct")}
            if found and busy(gpu):
                names = ", ".join(f"{who(p)} with {mib(p.get('memory_mib'))}" for p in found)
                findings.append(self.warn(
                    f"{names} {'is' if len(found) == 1 else 'are'} on {label(gpu)}, which was "
                    f"{gpu.get('utilization_pct'):.0f}% busy: work here shares the GPU, and its speed says little "
                    "about this machine.", subject=sub, evidence=evidence, data=data,
                    remediation=["Wait for that work to finish, or stop it if it is yours (see the pid with "
                                 "`ps -o user,etime,cmd -p PID`), or run on another GPU."]))
            elif found:
                findings.append(self.info(
                    f"{', '.join(who(p) for p in found)} holds a context on {label(gpu)}, which was idle when "
                    "sampled.", subject=sub, evidence=evidence, data=data))
            elif (gpu.get("utilization_pct") or 0) >= BUSY_UNLISTED_PCT and busy(gpu) and not processes(facts, gpu):
                findings.append(self.warn(
                    f"{label(gpu)} was {gpu['utilization_pct']:.0f}% busy with no process listed on it: the work "
                    "runs in another container or PID namespace that this one cannot see.", subject=sub,
                    evidence=evidence, data=data,
                    remediation=["Find who else is given this GPU (the container runtime or the job scheduler), "
                                 "or run on a GPU assigned to you alone."]))
        return findings or self.ok(f"no other process on {len(listed)} GPU(s)")


class GpuMemoryHeld(Check):
    id = "gpu-memory-held"
    title = "GPU memory held by other processes"
    area = "gpu-state"
    severity = Severity.HIGH
    requires = (GPU_LIVE,)
    explains = (Explains("gpu-other-process", same_subject), Explains("gpu-kernel*", when_failing),
                Explains("bench-*", when_failing))

    def run(self, facts):
        measured = [g for g in gpus(facts) if g.get("memory_used_mib") is not None and g.get("memory_total_mib")]
        if not measured:
            return self.skip("no tool reported the memory in use on a GPU")
        findings = []
        for gpu in measured:
            total = gpu["memory_total_mib"]
            own = sum(p.get("memory_mib") or 0 for p in processes(facts, gpu) if p.get("own"))
            held = max(0.0, gpu["memory_used_mib"] - own)
            share = pct(held, total)
            if share < HELD_WARN_PCT:
                continue
            found = others(facts, gpu)
            named = sum(p.get("memory_mib") or 0 for p in found)
            who_holds = [f"{who(p)}: {mib(p.get('memory_mib'))}" for p in found]
            if held - named >= 1024:
                who_holds.append(f"{mib(held - named)} held by no process listed here (another container or "
                                 "PID namespace, or a process that ended without freeing it)")
            message = (f"Other processes hold {held:.0f} of {total:.0f} MiB ({share:.0f}%) on {label(gpu)}: "
                       f"{'; '.join(who_holds)}. {mib(total - gpu['memory_used_mib'])} is left, so the next model "
                       "loaded here can fail with \"out of memory\".")
            freer = self._freer(measured, gpu)
            remedy = [f"If {who(p)} is yours and no longer needed, stop it: `kill {p.get('pid')}` (check first with "
                      f"`ps -o user,etime,cmd -p {p.get('pid')}`)." for p in found[:3]]
            if freer:
                spare = mib(freer["memory_total_mib"] - freer["memory_used_mib"])
                remedy.append(f"Otherwise run on {label(freer)}, which has {spare} free: select it with "
                              f"CUDA_VISIBLE_DEVICES={freer.get('uuid') or freer.get('index')}.")
            remedy.append("If the GPU is shared on purpose, size the job to the memory that is left.")
            make = self.fail if share >= HELD_FAIL_PCT else self.warn
            findings.append(make(message, subject=subject(facts, gpu), evidence=[state_line(gpu)] + who_holds,
                                 remediation=remedy,
                                 data={"gpu": gpu.get("index"), "held_mib": held, "total_mib": total,
                                       "processes": found}))
        return findings or self.ok(f"other processes hold under {HELD_WARN_PCT}% of the memory on "
                                   f"{len(measured)} GPU(s)")

    @staticmethod
    def _freer(measured: list[dict], gpu: dict) -> dict | None:
        free = [g for g in measured if g is not gpu and g.get("vendor") == gpu.get("vendor")]
        best = max(free, key=lambda g: g["memory_total_mib"] - g["memory_used_mib"], default=None)
        spare = (lambda g: g["memory_total_mib"] - g["memory_used_mib"])
        return best if best and spare(best) > spare(gpu) else None


class GpuComputeModeRestricted(Check):
    id = "gpu-compute-mode-restricted"
    title = "The GPU's compute mode for this process"
    area = "gpu-state"
    severity = Severity.HIGH
    requires = (GPU_LIVE,)
    explains = tuple(Explains(target, when_failing) for target in GPU_UNUSABLE)

    def run(self, facts):
        moded = [g for g in gpus(facts) if g.get("compute_mode")]
        if not moded:
            return self.skip("no tool reported a compute mode (nvidia-smi reports it for NVIDIA GPUs)")
        findings = []
        for gpu in moded:
            mode, sub = gpu["compute_mode"], subject(facts, gpu)
            reset = [f"If you administer this machine and nothing relies on the mode: `sudo nvidia-smi -i "
                     f"{gpu.get('index')} -c DEFAULT` (a cluster may set it on purpose: ask its admins first)."]
            evidence = [f"{label(gpu)}: compute mode {mode} (nvidia-smi)"]
            found = others(facts, gpu)
            if mode.lower() == "prohibited":
                findings.append(self.fail(f"{label(gpu)} is in compute mode Prohibited: no process can create a "
                                          "CUDA context on it, so torch cannot use it.", subject=sub,
                                          evidence=evidence, remediation=reset, data={"mode": mode}))
            elif mode.lower().startswith("exclusive") and found:
                findings.append(self.fail(
                    f"{label(gpu)} is in compute mode {mode} and {', '.join(who(p) for p in found)} already has it: "
                    "a second process gets \"CUDA-capable device(s) is/are busy or unavailable\".", subject=sub,
                    evidence=evidence + [f"{who(p)}: {mib(p.get('memory_mib'))}" for p in found], remediation=reset,
                    data={"mode": mode, "processes": found}))
            elif mode.lower().startswith("exclusive"):
                findings.append(self.warn(
                    f"{label(gpu)} is in compute mode {mode}: only one process at a time can use it, so a second "
                    "job, a DataLoader worker that touches CUDA, or a tool like this doctor fails with \"busy or "
                    "unavailable\" while another holds it.", subject=sub, evidence=evidence, remediation=reset,
                    data={"mode": mode}))
        return findings or self.ok(f"compute mode Default on {len(moded)} GPU(s)")


class GpuMigEnabled(Check):
    id = "gpu-mig-enabled"
    title = "MIG partitioning and torch's GPU slice"
    area = "gpu-state"
    severity = Severity.MEDIUM
    requires = (GPU_LIVE,)
    explains = tuple(Explains(target, when_failing) for target in GPU_UNUSABLE)

    def run(self, facts):
        reported = [g for g in gpus(facts) if g.get("mig_mode")]
        if not reported:
            return self.skip("no tool reported a MIG mode (nvidia-smi reports it for GPUs that support MIG)")
        selected = facts.env.get("CUDA_VISIBLE_DEVICES", "")
        findings = []
        for gpu in (g for g in reported if g["mig_mode"].lower() == "enabled"):
            migs, sub = gpu.get("mig_devices") or [], subject(facts, gpu)
            evidence = [f"{label(gpu)}: MIG mode Enabled (nvidia-smi)"] + [
                f"MIG {m.get('profile')} device {m.get('device')}: {m.get('uuid')} (nvidia-smi -L)" for m in migs]
            if not migs:
                findings.append(self.fail(
                    f"MIG is enabled on {label(gpu)} but no MIG instance exists: CUDA sees no device on this GPU.",
                    subject=sub, evidence=evidence,
                    remediation=["Create instances (`sudo nvidia-smi mig -cgi PROFILE -C`, profiles from "
                                 "`nvidia-smi mig -lgip`), or turn MIG off: `sudo nvidia-smi -i "
                                 f"{gpu.get('index')} -mig 0` and reset the GPU."]))
            elif any(m.get("uuid") and m["uuid"] in selected for m in migs):
                findings.append(self.info(f"MIG is enabled on {label(gpu)}; CUDA_VISIBLE_DEVICES selects an "
                                          "instance.", subject=sub, evidence=evidence))
            else:
                findings.append(self.warn(
                    f"MIG is enabled on {label(gpu)} with {len(migs)} instance(s) and none is selected: torch gets "
                    f"one slice ({migs[0].get('profile')}), not the whole GPU.", subject=sub, evidence=evidence,
                    remediation=[f"Select the instance you mean: CUDA_VISIBLE_DEVICES={migs[0].get('uuid')} (UUIDs "
                                 "from `nvidia-smi -L`), or turn MIG off if the job needs the whole GPU."]))
        return findings or self.ok(f"MIG is off on {len(reported)} GPU(s)")
