"""What the GPU driver wrote in this boot's kernel log while programs ran: amdgpu ring timeouts and MES hangs
(amdgpu-ring-timeout), GPU page faults (amdgpu-page-fault), GPU resets (amdgpu-gpu-reset), PSP/SMU and IP-block
failures at init (amdgpu-init-failed), and whether the log could be read at all (kernel-log-unreadable). Each names
the lines seen and explains the runtime failures they cause. NVIDIA's Xid lines: checks/nvidia_xid.py."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.facts.keys import LINUX_GPU_EVENTS, LINUX_KERNEL_LOG, LINUX_KERNEL_LOG_ACCESS

from rocm_doctor.checks.driver_load import AmdgpuFirmwareMissing
from rocm_doctor.checks.layer_common import in_container
from rocm_doctor.checks.symptoms import DRIVER_SYMPTOMS, GPU_UNUSABLE, KERNEL_FAILURES, TORCH_SEES_NO_GPU

SHOWN = 4  # lines quoted per finding; the count says how many there were
REBOOT = ("Reboot the machine: the GPU starts from a clean state, and the next boot's kernel log no longer holds "
          "these lines")


def failing_signature(*signatures: str):
    """A fail explains the known-error-signatures finding of one of these messages (the runtime's view of it) that
    the signature table points at another check; the ones it points here are linked, and confirm, by themselves."""
    def holds(cause, symptom, _facts=None) -> bool:
        return cause.status.value == "fail" and (symptom.data or {}).get("signature") in signatures
    return holds


def events(facts, name: str) -> dict:
    found = facts[LINUX_GPU_EVENTS]
    return (found.get(name) if isinstance(found, dict) else None) or {"count": 0, "events": [], "devices": []}


def quoted(found: dict, what: str) -> list[str]:
    """The first lines of a class, then how many more there were."""
    lines = [event["line"] for event in found["events"][:SHOWN]]
    more = found["count"] - len(lines)
    return lines + ([f"... and {more} more {what} in this boot's kernel log"] if more > 0 else [])


def counted(n: int, word: str, plural: str | None = None) -> str:
    """"1 page fault", "3 page faults"."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def where(devices) -> str:
    devices = [d for d in devices if d]
    return f" on {' and '.join(f'PCI {d}' for d in devices[:3])}" if devices else ""


def processes(found: dict) -> list[str]:
    named = [f"{e.get('process') or 'a process'} (pid {e['pid']})" for e in found["events"] if e.get("pid")]
    return list(dict.fromkeys(named))


def read_from(facts) -> str:
    """Where the lines come from, for the evidence: the command and what it holds."""
    access = facts.get(LINUX_KERNEL_LOG_ACCESS) or {}
    note = "" if access.get("levels") in (None, "all levels") else f", {access['levels']}"
    return f"kernel log of this boot: {access.get('command') or 'read'}{note}" + (
        ", read in part" if in_part(access) else "")


def clean(check: Check, facts, what: str):
    access = facts.get(LINUX_KERNEL_LOG_ACCESS) or {}
    return check.ok(f"no {what} in this boot's kernel log ({facts[LINUX_GPU_EVENTS].get('messages', 0)} lines read"
                    + (f", {access['levels']}" if access.get("levels") not in (None, "all levels") else "")
                    + (", only part of the log" if in_part(access) else "") + ")",
                    evidence=[read_from(facts)])


class _KernelLogCheck(Check):
    area = "kernel-log"
    platforms = (Platform.LINUX,)
    requires = (LINUX_GPU_EVENTS,)
    docs = ("https://docs.kernel.org/gpu/amdgpu/debugging.html",)


class KernelLogUnreadable(Check):
    id = "kernel-log-unreadable"
    title = "Read access to this boot's kernel log"
    area = "kernel-log"
    severity = Severity.LOW
    platforms = (Platform.LINUX,)
    requires = (LINUX_KERNEL_LOG_ACCESS,)
    docs = ("https://www.freedesktop.org/software/systemd/man/latest/journalctl.html",
            "https://docs.kernel.org/admin-guide/sysctl/kernel.html#dmesg-restrict")

    def run(self, facts):
        access = facts[LINUX_KERNEL_LOG_ACCESS]
        if access["readable"]:
            extra = "" if access["levels"] == "all levels" else (
                f" ({access['levels']}: amdgpu logs its GPU resets at info level, so they are not in it)")
            if in_part(access):
                return self._in_part(access)
            return self.ok(f"read {access['messages']} lines of this boot's kernel log with {access['command']}"
                           + extra, evidence=access["tried"], data=dict(access))
        return self.info(
            "This boot's kernel log could not be read" + (", for want of permission" if access["refused"] else "")
            + ": whether the GPU driver logged ring timeouts, page faults, resets or NVIDIA Xid errors cannot be "
            "told, so GPU failures are judged without the driver's side of the story.",
            evidence=access["tried"] + [line for line in access["said"] if line not in " ".join(access["tried"])],
            fix=_access_steps(facts, access),
            remediation=["Running rocm-doctor check once with sudo also reads it."], data=dict(access))

    def _in_part(self, access: dict):
        """Said once, here: the lines read are judged by the other checks, whose findings cannot tell the rest."""
        why, unknown = [], []
        if access.get("stopped"):
            why.append(access["stopped"])
            unknown.append("whether the driver logged ring timeouts, page faults, resets or NVIDIA Xid errors in "
                           "what it did not print")
        if access.get("not_read") == "oldest":
            why.append(f"the oldest {access['not_read_bytes']:,} bytes were not read (the log is longer than what "
                       "rocm-doctor keeps of a command's output)")
            unknown.append("what the GPU drivers logged when they loaded at boot (amdgpu's firmware and init "
                           "failures are among the oldest lines)")
        elif access.get("not_read") == "newest":
            why.append(f"the newest {access['not_read_bytes']:,} bytes were not read (the output was cut at what "
                       "rocm-doctor keeps of it)")
            unknown.append("the GPU failures logged most recently")
        return self.info(
            f"This boot's kernel log was read only in part: {'; '.join(why)}. The {access['messages']} lines read "
            f"are judged; {' and '.join(unknown)} cannot be told.",
            evidence=access["tried"] + [f"it ended with: {line}" for line in access.get("stopped_with") or []],
            remediation=["Run the command on its own to see the error it stopped with; a journal that reports a bad "
                         "message has a damaged file, which journalctl's --verify option names."]
            if access.get("stopped") else [], data=dict(access))


def in_part(access: dict) -> bool:
    """The log was read, but not all of it: its command stopped early, or its output was cut (snapshots of older
    versions have neither key)."""
    return bool(access.get("stopped") or access.get("not_read"))


def _access_steps(facts, access: dict) -> list:
    """Who may read the kernel log: the host in a container; the journal's readers group; root for dmesg."""
    if in_container(facts):
        return [S.advice("The kernel log belongs to the host: run rocm-doctor check on the host, or start the "
                         "container with the SYSLOG capability (docker run --cap-add SYSLOG)")]
    if access["journalctl"]:
        group = "systemd-journal" if "systemd-journal" in access["groups"] or not access["groups"] else \
            access["groups"][0]
        return [S.add_to_group((group,), note="journalctl shows the whole journal, the kernel's messages included, "
                               "to members of this group (from the next login)")]
    return [S.advice("Run the check again as root (sudo): dmesg is restricted to root here (kernel.dmesg_restrict), "
                     "and there is no journalctl to read the log instead")]


class AmdgpuRingTimeout(_KernelLogCheck):
    id = "amdgpu-ring-timeout"
    title = "GPU job timeouts in the amdgpu driver this boot"
    severity = Severity.HIGH
    explains = tuple(Explains(t, when_failing) for t in KERNEL_FAILURES + ("amdgpu-gpu-reset",)) + (
        Explains("known-error-signatures", failing_signature(
            "amdgpu-ring-timeout", "amdgpu-mes-no-response", "cuda-unspecified-launch-failure",
            "stuck-after-code-object-load")),)

    def run(self, facts):
        found = events(facts, "ring_timeouts")
        if not found["count"]:
            return clean(self, facts, "ring timeout or MES hang")
        kinds = {e["kind"] for e in found["events"]}
        rings = sorted({e["ring"] for e in found["events"] if e.get("ring")})
        who = processes(found)
        resets = events(facts, "resets")
        after = ("a GPU reset that failed" if resets.get("failed") else "a GPU reset" if resets.get("begun") or
                 resets.get("succeeded") else "no GPU reset in the log")
        evidence = quoted(found, "ring timeout or MES lines") + [r["line"] for r in found.get("ring_resets", [])[:2]]
        evidence += [read_from(facts)]
        what = counted(found["count"], "GPU job timeout or scheduler hang", "GPU job timeouts or scheduler hangs")
        message = (f"{what} this boot{where(found['devices'])}"
                   + (f" on ring {', '.join(rings)}" if rings else "")
                   + (f", submitted by {', '.join(who)}" if who else "")
                   + f", followed by {after}: the work on the GPU then was lost, and the program that submitted it "
                   "got an error or hung.")
        remediation = ["Run the program that hung again on its own: a timeout on a compute or SDMA ring (comp_*, "
                       "sdma*) under a ROCm program points at its kernels or at the driver; if it recurs with "
                       "programs that worked before, update amdgpu (the kernel or amdgpu-dkms) and linux-firmware.",
                       "A timeout that follows a GPU page fault (amdgpu-page-fault) is its consequence; with several "
                       "GPUs see also gpu-hang-power-state."]
        if "mes" in kinds:
            remediation.insert(0, "MES, the GPU's scheduler firmware, stopped answering: a firmware fault; on some "
                                  "GPUs a linux-firmware release brought it (Strix Halo with MES 0x83), and going to "
                                  "a newer or the previous linux-firmware fixed it.")
        data = {"count": found["count"], "devices": found["devices"], "rings": rings, "processes": who}
        if kinds == {"soft-recovered"}:
            return self.warn(f"{counted(found['count'], 'GPU job')} timed out this boot{where(found['devices'])} and "
                             "the driver recovered without a GPU reset: the program that submitted the work may have seen "
                             "an error or a stall.", evidence=evidence, remediation=remediation, data=data,
                             severity=Severity.MEDIUM)
        return self.fail(message, evidence=evidence, remediation=remediation, data=data)


class AmdgpuPageFault(_KernelLogCheck):
    id = "amdgpu-page-fault"
    title = "GPU page faults in the amdgpu driver this boot"
    severity = Severity.HIGH
    explains = tuple(Explains(t, when_failing) for t in KERNEL_FAILURES + ("gpu-kernels-wrong-result",
                                                                          "amdgpu-gpu-reset")) + (
        Explains("known-error-signatures", failing_signature("hip-unspecified-launch-failure",
                                                             "cuda-illegal-memory-access")),)

    def run(self, facts):
        found = events(facts, "page_faults")
        if not found["count"]:
            return clean(self, facts, "GPU page fault")
        who = processes(found)
        addresses = list(dict.fromkeys(e["address"] for e in found["events"] if e.get("address")))
        evidence = quoted(found, "page fault lines")
        evidence += [f"first fault: address {e['address']}, status {e.get('status', 'not printed')}"
                     + (f", client {e['client']}" if e.get("client") else "") for e in found["events"][:1]
                     if e.get("address")]
        if found.get("suppressed"):
            evidence.append(f"the kernel left out {found['suppressed']} more fault messages (rate limit)")
        return self.fail(
            f"The GPU{where(found['devices'])} reported {counted(found['count'], 'page fault')} this boot"
            + (f" from {', '.join(who)}" if who else "")
            + (f" at {', '.join(addresses[:2])}" if addresses else "")
            + ": a kernel or copy touched GPU memory that was not mapped, and the runtime stopped the program "
            "(ROCm prints 'Memory access fault by GPU node').",
            evidence=evidence + [read_from(facts)],
            remediation=["A page fault is an access to memory the program does not own: a bug in the program or a "
                         "library it loads, code built for another GPU (an HSA_OVERRIDE_GFX_VERSION of another "
                         "family), or a driver fault. Run the program again with AMD_SERIALIZE_KERNEL=3 to find the "
                         "kernel that faults.",
                         "If it started after a kernel or linux-firmware update with the same program, update or "
                         "roll back amdgpu and linux-firmware."],
            data={"count": found["count"], "devices": found["devices"], "processes": who, "addresses": addresses})


class AmdgpuGpuReset(_KernelLogCheck):
    id = "amdgpu-gpu-reset"
    title = "GPU resets by amdgpu this boot"
    severity = Severity.CRITICAL
    explains = tuple(Explains(t, when_failing) for t in (*TORCH_SEES_NO_GPU, "rocm-device-access", "gpu-kernel*",
                                                         "bench-*", "collective-*"))

    def run(self, facts):
        found = events(facts, "resets")
        levels = facts[LINUX_GPU_EVENTS].get("levels")
        if levels not in (None, "all levels"):
            return self.skip(f"the kernel log recorded here holds {levels}; amdgpu logs its GPU resets at info level")
        if not found["count"]:
            return clean(self, facts, "GPU reset")
        methods = f" ({', '.join(found['methods'])})" if found.get("methods") else ""
        resumed = [e["line"] for e in events(facts, "firmware")["events"] if e.get("phase") == "reset"][:3]
        evidence = quoted(found, "reset lines") + resumed + [read_from(facts)]
        data = {"begun": found.get("begun", 0), "succeeded": found.get("succeeded", 0),
                "failed": found.get("failed", 0), "devices": found["devices"], "methods": found.get("methods", [])}
        if found.get("failed"):
            return self.fail(
                f"A GPU reset{methods} failed this boot{where(found['devices'])}: the GPU stays unusable until the "
                "machine reboots, and every GPU program on it fails or hangs.",
                evidence=evidence, data=data, fix=[S.advice(REBOOT)],
                remediation=["If resets keep failing after a reboot, update amdgpu and linux-firmware; a reset that "
                             "fails while the PSP firmware resumes points at the firmware or the hardware."])
        outcome = ("its outcome is not in the log" if not found.get("succeeded") else "it succeeded"
                   if found["succeeded"] == 1 == max(found.get("begun", 0), 1) else f"{found['succeeded']} succeeded")
        return self.warn(
            f"amdgpu reset the GPU{where(found['devices'])} {times(max(found.get('begun', 0), 1))} this boot"
            f"{methods}, {outcome}: every program that used the GPU then lost its work (the GPU's memory is lost "
            "in a reset).",
            evidence=evidence, data=data, severity=Severity.MEDIUM,
            remediation=["A reset follows a hang or a fault: the amdgpu-ring-timeout and amdgpu-page-fault findings "
                         "say which program and ring."])


class AmdgpuInitFailed(_KernelLogCheck):
    id = "amdgpu-init-failed"
    title = "amdgpu's bring-up of the GPU's firmware (PSP, SMU) and IP blocks at boot"
    severity = Severity.CRITICAL
    explains = tuple(Explains(t, when_failing) for t in DRIVER_SYMPTOMS)

    def run(self, facts):
        firmware = events(facts, "firmware")
        init = [e for e in firmware["events"] if e.get("phase") == "init"]
        failures, notes = [e for e in init if not e["harmless"]], [e for e in init if e["harmless"]]
        fatal = events(facts, "init_failed")
        if not failures and not fatal["count"]:
            if notes:
                return self.info(f"amdgpu noted {counted(len(notes), 'harmless firmware message')} at init (optional "
                                 "trusted-application firmware, an SMU interface version note); the GPU came up",
                                 evidence=[e["line"] for e in notes[:SHOWN]] + [read_from(facts)],
                                 severity=Severity.LOW)
            return clean(self, facts, "PSP, SMU or IP-block failure at init")
        blocks = sorted({e["block"] for e in failures})
        devices = list(dict.fromkeys(fatal["devices"] + firmware["devices"]))
        missing = (facts.get(LINUX_KERNEL_LOG) or {}).get("required_missing") or []
        evidence = [e["line"] for e in failures[:SHOWN]] + quoted(fatal, "init failure lines") + [read_from(facts)]
        said = (f"{', '.join(b.upper() if b in ('psp', 'smu') else b for b in blocks)} failed" if blocks
                else "init failed")
        if not fatal["count"]:
            return self.warn(f"amdgpu reported {said}{where(devices)} while bringing up the GPU, but did not stop "
                             "there: the GPU may work with a feature missing.", evidence=evidence,
                             severity=Severity.MEDIUM, data={"blocks": blocks, "devices": devices})
        if missing:
            return self.fail(
                f"amdgpu could not bring up the GPU{where(devices)} ({said}, then 'Fatal error during GPU init'): "
                f"the kernel could not load {', '.join(missing[:3])}. Without it the GPU has no driver, so no "
                "/dev/kfd and no ROCm.", evidence=evidence, fix=AmdgpuFirmwareMissing._steps(facts),
                remediation=["The linux-firmware package is older than the GPU; AMD's amdgpu-dkms-firmware carries "
                             "the files too."], data={"blocks": blocks, "devices": devices, "missing": missing})
        return self.fail(
            f"amdgpu could not bring up the GPU{where(devices)} ({said}, then 'Fatal error during GPU init'), and the "
            "kernel log names no firmware file that failed to load: the GPU has no driver, so no /dev/kfd and no ROCm.",
            evidence=evidence, data={"blocks": blocks, "devices": devices},
            fix=[S.advice("Power the machine off completely and start it again, then look at the kernel log once "
                          "more")],
            remediation=["If PSP or SMU fails again on a supported kernel, the GPU or its link is suspect (on a "
                         "4x MI210 server an Infinity Fabric bridge was); update the system BIOS and reseat the "
                         "card and its power."])


class AmdgpuFirmwareNotAnswering(_KernelLogCheck):
    id = "amdgpu-firmware-not-answering"
    title = "amdgpu's SMU and PSP firmware replies after the GPU came up"
    severity = Severity.HIGH
    explains = tuple(Explains(t, when_failing) for t in GPU_UNUSABLE)
    docs = ("https://lists.freedesktop.org/archives/amd-gfx/2025-October/",)

    def run(self, facts):
        firmware = events(facts, "firmware")
        after = [e for e in firmware["events"] if e.get("phase") == "runtime" and not e.get("harmless")]
        if not after:
            return clean(self, facts, "PSP or SMU failure after the GPU came up")
        blocks = sorted({e["block"].upper() for e in after})
        devices = list(dict.fromkeys(e.get("device") for e in after))
        return self.warn(
            f"amdgpu's {' and '.join(blocks)} firmware failed {times(len(after))} this boot{where(devices)} after "
            "the GPU came up: the driver could not change the GPU's power state or load what it needed, and GPU "
            "work on it hangs or fails until the GPU is reset.",
            evidence=[e["line"] for e in after[:SHOWN]] + [read_from(facts)], fix=[S.advice(REBOOT)],
            data={"blocks": blocks, "devices": devices, "count": len(after)},
            remediation=["Reloading amdgpu without a reboot (modprobe -r amdgpu, then modprobe amdgpu) is one known "
                         "way to get here: the PSP has already checked the firmware and refuses to load it again "
                         "until the GPU is reset. If it happens under load instead, update amdgpu and "
                         "linux-firmware."])
