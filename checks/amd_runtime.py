"""A GPU is present (PCI, KFD, the SMI tools, /dev/dxg) but the layer above sees none: the kernel driver gives ROCm
no KFD node for it, or the ROCm runtime (rocminfo, amdgpu-arch) lists no GPU agent. Either way nothing ROCm-based
can use the GPU, so it is a problem, with both readings and the support table's reason for that card and release."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import (AMDGPU_ARCH_TARGETS, GPU_PCI, KFD_NODES, LINUX_AMDGPU_MODULE, LINUX_DEVICE_ACCESS,
                                    ROCMINFO_AGENTS, ROCMINFO_STATUS, ROCM_AGENT_ENUMERATOR_TARGETS, SMI_DEVICES,
                                    TORCH_AVAILABLE, TORCH_FLAVOUR, TORCH_VERSION)
from rocm_doctor.knowledge import catalog, support, versions
from rocm_doctor.knowledge.env_catalog import visibility_variables
from rocm_doctor.parsers.rocminfo import gpu_agents

from rocm_doctor.checks.amd_common import rocm_version
from rocm_doctor.checks.amd_support import paths_text
from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU

# rocminfo states another check diagnoses (the driver, /dev/kfd, WSL's own runtime): not this check's to judge
DRIVER_STATES = {"rock-not-loaded", "kfd-permission-denied", "kfd-no-memory", "kfd-missing", "kfd-open-failed",
                 "out-of-resources", "unsupported-gpu"}
NO_ANSWER = {"not-installed", "not-run", "timed-out", "crashed"}
ATOMICS_FAMILIES = ("gfx7", "gfx8")  # GCN 2-4: KFD skips them where the PCIe root lacks atomics


def amd_pci(facts) -> list[dict]:
    return [d for d in facts.get(GPU_PCI) or [] if d.get("vendor") == "amd"]


def kfd_gpus(facts) -> list[dict] | None:
    nodes = facts.get(KFD_NODES)
    return None if nodes is None else [n for n in nodes if n.get("kind") == "gpu"]


def hardware_lines(facts) -> list[str]:
    """What shows an AMD GPU below the ROCm runtime: PCI, the KFD topology, amd-smi/rocm-smi, /dev/dxg (WSL)."""
    lines = [f"PCI {d.get('slot') or '?'}: AMD device {d.get('device_id') or '?'} (driver {d.get('driver') or 'none'})"
             for d in amd_pci(facts)]
    lines += [f"KFD node {n.get('node')}: {n.get('gfx') or 'gfx unknown'}" for n in kfd_gpus(facts) or []]
    lines += [f"{d.get('source', 'smi')}: GPU {d.get('index')} {d.get('name') or ''} {d.get('gfx') or ''}".rstrip()
              for d in facts.get(SMI_DEVICES) or []]
    dxg = (facts.get(LINUX_DEVICE_ACCESS) or {}).get("/dev/dxg") or {}
    if facts.os == "wsl" and dxg.get("exists"):
        lines.append("/dev/dxg exists (the Windows GPU driver's device in WSL)")
    return lines


def _gfx(facts) -> str | None:
    """The GPU's hardware gfx: a KFD node's, else an SMI tool's, else its PCI device id's."""
    for gfx in [n.get("gfx") for n in kfd_gpus(facts) or []] + [d.get("gfx") for d in facts.get(SMI_DEVICES) or []]:
        if gfx:
            return gfx
    return next((g for g in (catalog.gfx_for_pci_id(d.get("device_id")) for d in amd_pci(facts)) if g), None)


def runtime_says_none(facts) -> list[str]:
    """Evidence that the ROCm runtime ran and lists no GPU; [] when it lists one or did not run cleanly."""
    status = facts.get(ROCMINFO_STATUS) or {}
    said = []
    if status and status.get("state") not in DRIVER_STATES | NO_ANSWER:
        agents = facts.get(ROCMINFO_AGENTS) or []
        if gpu_agents(agents):
            return []
        if status.get("agent_creation_failed") or status.get("state") == "ok":
            cpus = len([a for a in agents if a.get("device_type") == "CPU"])
            said.append(f"rocminfo: {cpus} CPU agent{'s' if cpus != 1 else ''} and no GPU agent")
            said += [f"rocminfo: {line}" for line in status.get("evidence") or [] if "agent" in line.lower()
                     or "unrecognized id" in line]
    arch = facts.get(AMDGPU_ARCH_TARGETS)
    if arch:
        return []
    if arch == [] and (said or not status):
        said.append("amdgpu-arch: no GPU")
    return said


class RocmRuntimeSeesNoGpu(Check):
    id = "rocm-runtime-sees-no-gpu"
    title = "The AMD GPU as the kernel driver and the ROCm runtime see it"
    explains = (*TORCH_SEES_NO_GPU, "gfx-not-in-torch-arch-list", "hip-runtime-mismatch", *GPU_WORK)
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX, Platform.WSL)
    docs = ("https://github.com/ROCm/legacy-rocm-build/issues/223", "https://github.com/rocm-arch/rocm-arch/issues/933",
            "https://github.com/xuhuisheng/rocm-gfx803/issues/20")

    def run(self, facts):
        hardware = hardware_lines(facts)
        if not hardware:
            return self.skip("no AMD GPU on PCI, in KFD, in amd-smi/rocm-smi or behind /dev/dxg")
        status = facts.get(ROCMINFO_STATUS) or {}
        if status.get("state") in DRIVER_STATES or (facts.get(LINUX_AMDGPU_MODULE) or {}).get("loaded") is False:
            return self.skip("the driver or /dev/kfd is the problem here (see rocm-kernel-driver, rocm-device-access, "
                             "wsl-rocm-support)")
        gfx, (version, where) = _gfx(facts), rocm_version(facts)
        reason = self._table(facts, gfx, version, where)
        kernel = self._kernel(facts, hardware, gfx, reason)
        if kernel:
            return kernel
        runtime = runtime_says_none(facts)
        if runtime:
            return self._runtime(facts, hardware, runtime, gfx, version, reason)
        if gpu_agents(facts.get(ROCMINFO_AGENTS) or []) or facts.get(AMDGPU_ARCH_TARGETS):
            return self.ok("the ROCm runtime lists the GPU the hardware shows", evidence=hardware)
        return self.skip("neither rocminfo nor amdgpu-arch answered (not installed, crashed or timed out), so the "
                         "runtime's view is unknown", evidence=hardware)

    def _table(self, facts, gfx, version, where) -> list[str]:
        if not (gfx and version):
            return [f"support table: not judged ({'gfx unknown' if not gfx else 'ROCm release unknown'})"]
        result = support.wsl(gfx, version) if facts.os == "wsl" else support.linux(gfx, version)
        return [f"{'ROCm on WSL' if facts.os == 'wsl' else 'Linux ROCm'} {result.release or version} (from {where}): "
                f"{gfx} {result.status}" + (f" ({result.note})" if result.note else "")
                + (f" [{result.source}]" if result.source else "")]

    def _kernel(self, facts, hardware, gfx, reason):
        """PCI shows an AMD GPU the KFD topology (or rocm_agent_enumerator, which reads it) does not list."""
        pci, kfd = amd_pci(facts), kfd_gpus(facts)
        enumerator = facts.get(ROCM_AGENT_ENUMERATOR_TARGETS)
        listed = len(kfd) if kfd is not None else (len(enumerator) if enumerator is not None else None)
        if not pci or listed is None or listed >= len(pci):
            return None
        drivers = sorted({d.get("driver") or "none" for d in pci} - {"amdgpu"})
        cause = (f" The GPU is bound to {', '.join(drivers)}, not amdgpu: only amdgpu gives ROCm a GPU." if drivers else
                 " A GCN 2-4 GPU needs PCIe atomics from the CPU and board; without them KFD skips it ('kfd: skipped "
                 "device ..., PCI rejects atomics' in the kernel log)." if (gfx or "").startswith(ATOMICS_FAMILIES)
                 else " The kernel log (dmesg | grep -i kfd) says why KFD skipped it.")
        evidence = hardware + ([f"rocm_agent_enumerator: {', '.join(enumerator) or 'no GPU (only gfx000)'}"]
                               if enumerator is not None else []) + reason
        message = (f"PCI shows {len(pci)} AMD GPU{'s' if len(pci) != 1 else ''} but the kernel driver gives ROCm "
                   f"{listed} (no KFD node{'s' if len(pci) - listed != 1 else ''} for the rest): rocminfo, torch and "
                   "every ROCm program see only what KFD lists." + cause)
        remediation = ["Boot with amdgpu bound to the GPU (a radeon or vfio-pci binding takes it away)." if drivers
                       else "Check the kernel log for the KFD message about this device; a kernel or firmware update "
                            "is the usual fix when KFD does not know the device yet."]
        if listed:
            return self.warn(message, subject="kfd", evidence=evidence, remediation=remediation,
                             severity=Severity.HIGH)
        return self.fail(message, subject="kfd", evidence=evidence, remediation=remediation + paths_text(gfx, facts.os)
                         if gfx else remediation)

    def _runtime(self, facts, hardware, runtime, gfx, version, reason):
        hidden = [f"{v}={facts.env[v]}" for v in visibility_variables() if v in facts.env]
        first = support.first_linux_release(gfx) if gfx and facts.os == "linux" else None
        if first and (not versions.parse(version) or versions.at_least(versions.parse(version), first)):
            first = None  # the installed release is not older than the GPU
        if hidden:
            cause = f" {', '.join(hidden)} chooses which GPUs the runtime lists (see gpu-visibility-env)."
        elif first:
            cause = (f" ROCm {version} predates {gfx}: {first} is the first release that supports it, and an older "
                     "runtime does not create an agent for a GPU it does not know.")
        elif any("unrecognized id" in line for line in runtime):
            cause = " ROCr does not know this GPU's id: the runtime is older than the GPU, or mixed with another."
        else:
            cause = (" Why the runtime dropped the GPU could not be told from its output: a ROCm release that does "
                     "not support it and a render node (/dev/dri/renderD*) this user cannot open both do this.")
        remediation = ([f"Install ROCm {first} or newer (and the torch wheels built for it)."] if first else []) + (
            paths_text(gfx, facts.os) if gfx else []) + [
            "Afterwards rocminfo lists a GPU agent (Name: gfx...) under HSA Agents."]
        torch = ([f"torch {facts.get(TORCH_VERSION)}: torch.cuda.is_available() is False"]
                 if facts.get(TORCH_FLAVOUR) == "rocm" and facts.get(TORCH_AVAILABLE) is False else [])
        return self.fail(f"the ROCm runtime lists no GPU although the {'driver' if facts.os == 'wsl' else 'kernel'} "
                         f"has one{f' ({gfx})' if gfx else ''}: nothing ROCm-based, PyTorch included, can use it."
                         + cause, subject="runtime", evidence=hardware + runtime + torch + reason,
                         remediation=remediation, data={"gfx": gfx, "rocm": version})
