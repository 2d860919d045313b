"""The limits the target's processes run under (process.limits, read by the runtime child in the target
interpreter and environment): an address-space limit below what a GPU context reserves, an open-file limit below
what a CUDA process holds, a CPU affinity or quota that leaves torch a few of the machine's CPUs, and a cgroup
memory or task limit below what one CUDA process uses.

The needs are measured, not guessed (docs/measurements.md, "the runtime's own word and the process's limits"): on
an NVIDIA H200 with driver 580 and torch 2.11.0+cu130, a process that ran one kernel and one matmul had reserved
18,009,336 kB of address space (VmPeak; 0.75 GiB resident) and held 46 file descriptors. Under `ulimit -v` of 4 GiB
cuInit returned CUDA_ERROR_OUT_OF_MEMORY; under 16 GiB the first kernel failed with "out of memory"; under
`ulimit -n 32` the first kernel failed with "CUDA-capable device(s) is/are busy or unavailable".
"""

from __future__ import annotations

from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.facts.keys import PROCESS_LIMITS, TORCH_FLAVOUR, TORCH_THREADS

CUDA_ADDRESS_SPACE = 18_009_336 * 1024  # bytes a CUDA torch process reserved after its first kernel (measured)
CUDA_OPEN_FILES = 46  # descriptors the same process held (measured)
CUDA_RESIDENT = 782_476 * 1024  # bytes it had resident (VmRSS, measured)
CUDA_THREADS = 18  # threads it ran (measured); a cgroup's pids.max counts threads
OPEN_FILES_FAIL = 64  # the smallest soft limit measured to work (32 failed, 64 ran)
OPEN_FILES_USUAL = 1024  # the soft limit most Linux distributions give a login shell
GIB = 1 << 30
MEASURED = "measured on an NVIDIA H200, driver 580, torch 2.11.0+cu130 (docs/measurements.md)"
LIMIT_SYMPTOMS = (*TORCH_SEES_NO_GPU, *GPU_WORK)


def _soft(facts, name: str):
    entry = (facts[PROCESS_LIMITS].get("rlimits") or {}).get(name) or {}
    return entry.get("soft"), entry.get("hard")


def _read_in(facts) -> str:
    return "read in " + str(facts[PROCESS_LIMITS].get("read_in") or "the target interpreter")


def _shown(value) -> str:
    return "unlimited" if value is None else f"{value:,}"


class ProcessAddressSpaceLimited(Check):
    id = "process-address-space-limited"
    title = "The address-space limit against what a GPU context reserves"
    area = "environment"
    severity = Severity.CRITICAL
    requires = (PROCESS_LIMITS,)
    explains = tuple(Explains(t, when_failing) for t in LIMIT_SYMPTOMS)
    docs = ("https://man7.org/linux/man-pages/man2/getrlimit.2.html",)

    def run(self, facts):
        found = [(name, *_soft(facts, name)) for name in ("RLIMIT_AS", "RLIMIT_DATA")]
        found = [(name, soft, hard) for name, soft, hard in found if soft is not None]
        if not found:
            return self.ok("no address-space or data-segment limit is set (ulimit -v and -d are unlimited)")
        name, soft, hard = min(found, key=lambda item: item[1])
        flag = "-v" if name == "RLIMIT_AS" else "-d"
        evidence = [f"{name}: soft {_shown(soft)} bytes ({soft / GIB:.1f} GiB), hard {_shown(hard)}, {_read_in(facts)}",
                    f"a CUDA torch process reserved {CUDA_ADDRESS_SPACE / GIB:.1f} GiB of address space after its "
                    f"first kernel, {MEASURED}"]
        step = S.advice(f"Remove the limit where it is set (`ulimit {flag} unlimited` in the job script or shell "
                        "before Python starts; LimitAS=infinity for a systemd service; the batch system's "
                        "virtual-memory option), or raise it well above what the GPU context reserves.")
        if soft < CUDA_ADDRESS_SPACE and facts.get(TORCH_FLAVOUR) == "rocm":  # measured on CUDA only
            return self.warn(
                f"{name} limits this process to {soft / GIB:.1f} GiB of address space, less than a CUDA context was "
                f"measured to reserve ({CUDA_ADDRESS_SPACE / GIB:.1f} GiB); what the HIP runtime reserves was not "
                "measured here, so this may be why torch reports no GPU or fails at the first operation.",
                subject=name, evidence=evidence, fix=[step],
                data={"limit": name, "soft": soft, "hard": hard, "needed": CUDA_ADDRESS_SPACE})
        if soft < CUDA_ADDRESS_SPACE:
            return self.fail(
                f"{name} limits this process to {soft / GIB:.1f} GiB of address space: a GPU context reserves "
                f"more than that before it holds any data (cuInit answers out of memory, or the first kernel does), "
                "so torch reports no GPU or fails at the first operation.",
                subject=name, evidence=evidence, fix=[step],
                remediation=["Virtual address space is not memory: the limit stops the GPU runtime long before "
                             "memory runs out. Limit resident memory with a cgroup (memory.max) instead."],
                data={"limit": name, "soft": soft, "hard": hard, "needed": CUDA_ADDRESS_SPACE})
        return self.info(
            f"{name} is {soft / GIB:.1f} GiB: above the {CUDA_ADDRESS_SPACE / GIB:.1f} GiB a CUDA context was "
            "measured to reserve, but more GPUs, larger models and pinned buffers reserve more.",
            subject=name, evidence=evidence, data={"limit": name, "soft": soft, "hard": hard})


def _mentions_descriptors(_cause, symptom, _facts=None) -> bool:
    """The failure the descriptor limit produces: the runtime finds the device "busy or unavailable", or a call
    says there are too many open files."""
    text = " ".join([symptom.message, *symptom.evidence]).lower()
    return any(p in text for p in ("busy or unavailable", "too many open files", "devicesunavailable", "emfile"))


class ProcessOpenFilesLimited(Check):
    id = "process-open-files-limited"
    title = "The open-file limit for a GPU process"
    area = "environment"
    severity = Severity.HIGH
    requires = (PROCESS_LIMITS,)
    explains = tuple(Explains(t, when_failing) for t in LIMIT_SYMPTOMS) + tuple(
        Explains(t, _mentions_descriptors) for t in LIMIT_SYMPTOMS)
    docs = ("https://docs.pytorch.org/docs/stable/multiprocessing.html#sharing-strategies",
            "https://man7.org/linux/man-pages/man2/getrlimit.2.html")

    def run(self, facts):
        soft, hard = _soft(facts, "RLIMIT_NOFILE")
        if soft is None or soft >= OPEN_FILES_USUAL:
            return self.ok(f"the open-file limit is {_shown(soft)} (hard {_shown(hard)})")
        evidence = [f"RLIMIT_NOFILE: soft {soft}, hard {_shown(hard)}, {_read_in(facts)}",
                    f"a CUDA torch process held {CUDA_OPEN_FILES} descriptors after its first kernel; under a limit "
                    f"of 32 that kernel failed with 'CUDA-capable device(s) is/are busy or unavailable' ({MEASURED})"]
        raise_to = OPEN_FILES_USUAL if hard is None or hard >= OPEN_FILES_USUAL else hard
        step = S.advice(f"Raise the soft limit before Python starts: `ulimit -n {raise_to}` in the job script or "
                        "shell (LimitNOFILE= for a systemd service, --ulimit nofile= for a container).")
        if soft < OPEN_FILES_FAIL:
            return self.fail(
                f"this process may open only {soft} files: the GPU runtime alone holds about {CUDA_OPEN_FILES} "
                "descriptors, so it reports the device 'busy or unavailable' and every kernel fails.",
                evidence=evidence, fix=[step], data={"soft": soft, "hard": hard})
        return self.warn(
            f"this process may open only {soft} files, below the usual {OPEN_FILES_USUAL}: the GPU runtime holds "
            f"about {CUDA_OPEN_FILES}, and DataLoader workers pass every shared tensor as a file descriptor "
            "(torch.multiprocessing's default strategy on Linux), so data loading with workers can run out of them "
            "('Too many open files'), as PyTorch's multiprocessing notes warn.",
            evidence=evidence, fix=[step], data={"soft": soft, "hard": hard},
            remediation=["Where the limit cannot be raised, torch.multiprocessing.set_sharing_strategy('file_system') "
                         "avoids holding a descriptor per tensor."])


def usable_cpus(limits: dict):
    """(CPUs this process may use, CPUs present, what limits them): the affinity mask and a cgroup CPU quota."""
    present = limits.get("cpu_count")
    usable, why = present, []
    affinity = limits.get("affinity")
    if affinity and present and len(affinity) < present:
        usable, why = len(affinity), [f"CPU affinity {_ranges(affinity)} (taskset, numactl or a cpuset)"]
    quota = _quota((limits.get("cgroup") or {}).get("cpu.max"))
    if quota is not None and usable and quota < usable:
        usable, why = quota, why + [f"a cgroup CPU quota of {quota:g} CPUs (cpu.max)"]
    return usable, present, why


def _quota(text):
    parts = str(text or "").split()
    if len(parts) == 2 and parts[0] != "max":
        try:
            return int(parts[0]) / int(parts[1])
        except (ValueError, ZeroDivisionError):
            return None
    return None


def _ranges(cpus: list[int]) -> str:
    out, start = [], None
    for index, cpu in enumerate(cpus):
        if start is None:
            start = cpu
        if index + 1 == len(cpus) or cpus[index + 1] != cpu + 1:
            out.append(str(start) if start == cpu else f"{start}-{cpu}")
            start = None
    return ",".join(out)


class ProcessCpusRestricted(Check):
    id = "process-cpus-restricted"
    title = "CPUs available to torch"
    area = "environment"
    severity = Severity.MEDIUM
    requires = (PROCESS_LIMITS,)
    explains = ("bench-cnn-speedup-low",)
    docs = ("https://man7.org/linux/man-pages/man2/sched_setaffinity.2.html",
            "https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files")

    def run(self, facts):
        usable, present, why = usable_cpus(facts[PROCESS_LIMITS])
        threads = facts.get(TORCH_THREADS)
        if not present or not why:
            return self.ok(f"this process may run on all {present or '?'} CPUs")
        evidence = [f"{usable:g} of {present} CPUs usable: {'; '.join(why)}"]
        if isinstance(threads, int):
            evidence.append(f"torch.get_num_threads() in the target interpreter: {threads}")
        data = {"usable": usable, "present": present, "threads": threads}
        message = (f"this process may use {usable:g} of the machine's {present} CPUs ({'; '.join(why)}): torch's CPU "
                   "work, DataLoader workers and the CPU side of GPU speed-up comparisons run on that share")
        if usable * 2 <= present:
            return self.warn(message + ". A GPU-over-CPU speed-up measured here is larger than on the whole machine.",
                             evidence=evidence, data=data,
                             remediation=["If the restriction is not intended, start the program without taskset or "
                                          "numactl, or ask the batch system or container for more CPUs."])
        return self.info(message + ".", evidence=evidence, data=data)


def _bytes(text):
    """A cgroup memory limit in bytes; None for no limit ("max", or v1's page-rounded 2**63)."""
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return None
    return None if value >= 1 << 62 else value


class ProcessCgroupCapped(Check):
    id = "process-cgroup-capped"
    title = "cgroup room for a GPU process's memory and threads"
    area = "environment"
    severity = Severity.HIGH
    requires = (PROCESS_LIMITS,)
    explains = tuple(Explains(t, when_failing) for t in LIMIT_SYMPTOMS)
    docs = ("https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files",
            "https://docs.kernel.org/admin-guide/cgroup-v2.html#pid-interface-files")

    def run(self, facts):
        cgroup = facts[PROCESS_LIMITS].get("cgroup") or {}
        memory = _bytes(cgroup.get("memory.max") or cgroup.get("memory.limit_in_bytes"))
        tasks = _bytes(cgroup.get("pids.max"))
        if memory is None and tasks is None:
            return self.ok("the cgroup sets no memory or task limit")
        evidence = [f"cgroup {name}: {value}" for name, value in sorted(cgroup.items())
                    if name in ("memory.max", "memory.high", "memory.limit_in_bytes", "pids.max")]
        evidence.append(f"a CUDA torch process had {CUDA_RESIDENT / GIB:.2f} GiB resident and {CUDA_THREADS} threads "
                        f"after its first kernel, {MEASURED}")
        data = {"memory_max": memory, "pids_max": tasks}
        short = []
        if memory is not None and memory < CUDA_RESIDENT:
            short.append(f"its memory limit of {memory / GIB:.2f} GiB is below what one CUDA torch process has "
                         "resident, so the kernel's OOM killer ends it")
        if tasks is not None and tasks < CUDA_THREADS:
            short.append(f"its task limit of {tasks} is below the {CUDA_THREADS} threads one CUDA torch process runs, "
                         "so thread creation fails")
        if short:
            return self.fail("this process's cgroup is too small for a GPU process: " + "; ".join(short),
                             evidence=evidence, data=data,
                             remediation=["Raise the container's or job's memory and task limits (docker --memory "
                                          "and --pids-limit, the batch system's memory request)."])
        shown = [f"{memory / GIB:.1f} GiB of memory" if memory is not None else "",
                 f"{tasks} tasks" if tasks is not None else ""]
        return self.info("this process's cgroup may use " + " and ".join(s for s in shown if s) +
                         ": a model is read into RAM before it moves to the GPU, and each DataLoader worker is a "
                         "process with threads of its own", evidence=evidence, data=data)
