"""Whether amdgpu can load on this kernel: Secure Boot refusing an unsigned or unenrolled DKMS build
(secure-boot-blocks-amdgpu), amdgpu-dkms not built for the running kernel (amdgpu-dkms-not-built), a modprobe.d
blacklist or kernel parameter that keeps it out (amdgpu-blocked), and the GPU's firmware missing on disk
(amdgpu-firmware-missing)."""

from __future__ import annotations

import re

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import (GPU_PCI, LINUX_AMDGPU_BLOCKS, LINUX_AMDGPU_MODINFO, LINUX_DKMS_AMDGPU,
                                    LINUX_FIRMWARE, LINUX_KERNEL_LOG, LINUX_SECURE_BOOT, OS_RELEASE_FACT)
from rocm_doctor.knowledge import catalog, firmware

from rocm_doctor.checks.amd_common import gpus, label, real_gfx
from rocm_doctor.checks.layer_common import (amd_present, amdgpu_loaded, family, in_container,
                                             initramfs_step_argv, is_ubuntu, running_kernel)
from rocm_doctor.checks.symptoms import DRIVER_SYMPTOMS

UBUNTU_MOK = "/var/lib/shim-signed/mok/MOK.der"
DKMS_MOK = "/var/lib/dkms/mok.pub"
ENROL = ("At the next boot the blue MOK manager screen appears: choose Enroll MOK, Continue, Yes, type the password "
         "you gave mokutil, then Reboot")


def _modinfo_lines(modinfo: dict) -> list[str]:
    lines = [f"modinfo amdgpu: {modinfo.get('filename')}" + (f" (version {modinfo['version']})"
                                                             if modinfo.get("version") else "")]
    lines.append("signer: " + (modinfo.get("signer") or "none (the module is not signed)"))
    return lines


class SecureBootBlocksAmdgpu(Check):
    id = "secure-boot-blocks-amdgpu"
    title = "Secure Boot against the amdgpu module modprobe would load"
    explains = DRIVER_SYMPTOMS
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX,)
    requires = (LINUX_SECURE_BOOT,)
    docs = ("https://github.com/ROCm/ROCm/issues/4328", "https://wiki.debian.org/SecureBoot#MOK_-_Machine_Owner_Key")

    def run(self, facts):
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        sb = facts[LINUX_SECURE_BOOT]
        evidence = [f"mokutil --sb-state: Secure Boot {sb['state']}"
                    + (", validation disabled in shim" if sb.get("validation_disabled") else "")]
        if not sb.get("enforcing"):
            return self.ok("Secure Boot does not check module signatures here", evidence=evidence)
        modinfo = facts.get(LINUX_AMDGPU_MODINFO) or {}
        dkms = [r for r in facts.get(LINUX_DKMS_AMDGPU) or [] if r.get("kernel") == running_kernel(facts)]
        is_dkms = modinfo.get("origin") == "dkms" or any(r["state"] == "installed" for r in dkms)
        if modinfo.get("found"):
            evidence += _modinfo_lines(modinfo)
        evidence += [line for line in (facts.get(LINUX_KERNEL_LOG) or {}).get("lines", [])
                     if "sign" in line.lower() or "Lockdown" in line][:3]
        loaded = amdgpu_loaded(facts)
        if loaded:
            return self.ok("Secure Boot is on and amdgpu is loaded: its signature was accepted", evidence=evidence)
        if not is_dkms:
            return self.ok("Secure Boot is on; the amdgpu module is the kernel's own, signed by the distribution",
                           evidence=evidence)
        if loaded is None:
            return self.skip("whether amdgpu is loaded was not read", evidence=evidence)
        key = UBUNTU_MOK if is_ubuntu(facts) else DKMS_MOK
        steps = []
        if not modinfo.get("signed") and dkms:
            steps.append(S.run_command(["sudo", "dkms", "install", "--force", f"amdgpu/{dkms[0]['version']}", "-k",
                                        dkms[0]["kernel"]], needs_admin=True,
                                       description="rebuild amdgpu so that DKMS signs it with its key"))
        steps += [S.run_command(["sudo", "mokutil", "--import", key], needs_admin=True, then=S.AFTER_REBOOT,
                                description="queue the DKMS signing key for enrolment (mokutil asks for a one-time "
                                "password)", note="Secure Boot loads only modules signed by an enrolled key"),
                  S.advice(ENROL)]
        return self.fail(
            "Secure Boot is enforcing module signatures and amdgpu is a DKMS build "
            + ("that is not signed" if not modinfo.get("signed") else "signed by a key the firmware does not trust")
            + ": the kernel refuses to load it, so there is no /dev/kfd."
            + (" The kernel log shows the refusal." if (facts.get(LINUX_KERNEL_LOG) or {}).get("unsigned_rejected")
               else ""), evidence=evidence,
            remediation=[f"DKMS signs its builds with the key whose certificate is {key}; enrolling it once makes "
                         "every later amdgpu build load."],
            fix=steps, alternatives=[S.alternative("turn Secure Boot off in the firmware setup", S.advice(
                "Disable Secure Boot in the UEFI firmware setup, then boot again"), workaround=True,
                why_not_first="it turns off a protection for the whole machine")])


class AmdgpuDkmsNotBuilt(Check):
    id = "amdgpu-dkms-not-built"
    title = "amdgpu-dkms for the running kernel"
    explains = DRIVER_SYMPTOMS
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX,)
    requires = (LINUX_DKMS_AMDGPU,)
    docs = ("https://github.com/ROCm/ROCm/issues/1318", "https://github.com/ROCm/amdgpu/issues/115",
            "https://github.com/ROCm/ROCm/issues/3701")

    def run(self, facts):
        rows = facts[LINUX_DKMS_AMDGPU]
        kernel = running_kernel(facts)
        if not rows:
            return self.skip("no amdgpu DKMS module is registered (the kernel's own driver is used)")
        evidence = [f"dkms status: amdgpu/{r['version']}" + (f", {r['kernel']}" if r.get("kernel") else "")
                    + f": {r['state']}" + (f" ({r['note']})" if r.get("note") else "") for r in rows]
        broken = [r for r in rows if r["state"] == "broken"]
        if broken:
            return self._broken_tree(facts, broken[0], evidence)
        if kernel is None:
            return self.skip("the running kernel is unknown", evidence=evidence)
        if any(r["state"] == "installed" and r.get("kernel") == kernel for r in rows):
            return self.ok(f"amdgpu-dkms is installed for the running kernel {kernel}", evidence=evidence)
        version = rows[-1]["version"]
        others = sorted({r["kernel"] for r in rows if r.get("kernel")})
        loaded = amdgpu_loaded(facts)
        message = (f"amdgpu-dkms {version} is not installed for the running kernel {kernel}"
                   + (f" (only for {', '.join(others)})" if others else " (registered but never built)")
                   + ": the kernel's own amdgpu " + ("loaded instead, without the DKMS driver's fixes and GPU support"
                                                      if loaded else "is all there is, and it did not load") + ".")
        headers = {"debian": ["sudo", "apt-get", "install", f"linux-headers-{kernel}"],
                   "redhat": ["sudo", "dnf", "install", f"kernel-devel-{kernel}"]}.get(family(facts) or "")
        steps = ([S.run_command(headers, needs_admin=True, description=f"install the headers of kernel {kernel}, "
                                "which DKMS builds against")] if headers else [])
        steps.append(S.run_command(["sudo", "dkms", "autoinstall", "-k", kernel], needs_admin=True,
                                   then=S.AFTER_REBOOT, description=f"build and install amdgpu for {kernel}, then "
                                   "reboot"))
        finding = self.fail if not loaded else self.warn
        return finding(message, evidence=evidence, fix=steps, remediation=[
            "If the build fails, its log is /var/lib/dkms/amdgpu/" + version + "/build/make.log; a kernel newer than "
            "the driver supports is the usual reason (see os-support-matrix)."])


    def _broken_tree(self, facts, row, evidence):
        """A leftover amdgpu tree without its dkms.conf (an interrupted upgrade): dkms stops at it, so nothing is
        built for any kernel until it is gone (ROCm/ROCm#3701, the fix the maintainer gave)."""
        folder = f"/var/lib/dkms/amdgpu/{row['version']}"
        steps = [S.run_command(["sudo", "rm", "-r", folder], needs_admin=True,
                               description=f"remove the leftover amdgpu {row['version']} tree that lost its dkms.conf")]
        reinstall = {"debian": ["sudo", "apt-get", "install", "--reinstall", "amdgpu-dkms"],
                     "redhat": ["sudo", "dnf", "reinstall", "amdgpu-dkms"]}.get(family(facts) or "")
        if reinstall:
            steps.append(S.run_command(reinstall, needs_admin=True, then=S.AFTER_REBOOT,
                                       description="build amdgpu again for the installed kernels, then reboot"))
        return self.fail(
            f"dkms cannot read the amdgpu {row['version']} tree: its dkms.conf is gone (left over from an earlier "
            "amdgpu-dkms), and dkms stops there, so no amdgpu build is registered or made for this kernel.",
            evidence=evidence, fix=steps)


class AmdgpuBlocked(Check):
    id = "amdgpu-blocked"
    title = "Blacklists of amdgpu and switches that disable kernel modesetting"
    explains = DRIVER_SYMPTOMS
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX,)
    requires = (LINUX_AMDGPU_BLOCKS,)
    docs = ("https://github.com/ROCm/gpu-operator/issues/330",)

    def run(self, facts):
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        found = facts[LINUX_AMDGPU_BLOCKS]
        files = [] if in_container(facts) else found["modprobe"]  # a container's modprobe.d is not the host's
        tokens = found["cmdline"]
        evidence = [f"{b['file']}:{b['line_no']}: {b['line']}" for b in files] + (
            [f"/proc/cmdline: {' '.join(tokens)}"] if tokens else [])
        if not files and not tokens:
            return self.ok("no modprobe.d file or kernel parameter blocks amdgpu")
        if amdgpu_loaded(facts):
            return self.info("amdgpu is blocked from loading by alias, but it is loaded (it was loaded explicitly)",
                             evidence=evidence)
        return self.fail("amdgpu is kept from loading: " + "; ".join(evidence) + ". Without it there is no /dev/kfd.",
                         evidence=evidence, fix=block_steps(facts, files, tokens),
                         remediation=["modprobe.d files are copied into the initramfs, so it has to be rebuilt after "
                                      "the change (ROCm/gpu-operator#330)."])


def block_steps(facts, files: list[dict], tokens: list[str]) -> list:
    """Comment out each blocking line (mask a package's file in /usr/lib by an empty one of the same name in
    /etc), rebuild the initramfs, and drop the kernel parameters."""
    steps = []
    for path in sorted({b["file"] for b in files}):
        if path.startswith(("/usr/lib/", "/lib/")):
            name = path.rsplit("/", 1)[-1]
            steps.append(S.run_command(["sudo", "touch", f"/etc/modprobe.d/{name}"], needs_admin=True,
                                       description=f"mask the packaged {path} with an empty file of the same name"))
        else:
            steps.append(S.run_command(["sudo", "sed", "-i", "-E", r"s/^\s*(blacklist|install)\s+amdgpu\b/# &/", path],
                                       needs_admin=True, description=f"comment out the amdgpu lines of {path}"))
    if files:
        steps.append(S.run_command(initramfs_step_argv(facts), needs_admin=True, then=S.AFTER_REBOOT,
                                   description="rebuild the initramfs so that early boot sees the change, then reboot"))
    if tokens and family(facts) == "redhat":
        steps.append(S.run_command(["sudo", "grubby", "--update-kernel=ALL", f"--remove-args={' '.join(tokens)}"],
                                   needs_admin=True, then=S.AFTER_REBOOT,
                                   description=f"remove {' '.join(tokens)} from every kernel's command line"))
    elif tokens:
        for token in tokens:
            steps.append(S.run_command(["sudo", "sed", "-i", rf"s/ *\b{re.escape(token)}\b//", "/etc/default/grub"],
                                       needs_admin=True, description=f"remove {token} from /etc/default/grub"))
        steps.append(S.run_command(["sudo", "update-grub"], needs_admin=True, then=S.AFTER_REBOOT,
                                   description="regenerate the GRUB configuration, then reboot"))
    return steps


class AmdgpuFirmwareMissing(Check):
    id = "amdgpu-firmware-missing"
    title = "The firmware files amdgpu needs for this GPU"
    explains = DRIVER_SYMPTOMS + ("amdgpu-init-failed",)  # the init failure the kernel log shows follows from it
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX,)
    requires = (LINUX_FIRMWARE,)
    docs = ("https://github.com/ROCm/ROCm/issues/4992",)

    def run(self, facts):
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        if in_container(facts):
            return self.skip("in a container: the host's firmware is what the driver loads")
        fw = facts[LINUX_FIRMWARE]
        log = facts.get(LINUX_KERNEL_LOG) or {}
        folders = [f"{path}: {count} files" if count is not None else f"{path}: missing"
                   for path, count in fw["folders"].items()]
        findings = []
        for index, gfx, name in self._gpus(facts):
            row = firmware.target(gfx)
            if row is None:
                continue
            have = firmware.present(row, fw["names"])
            logged = [n for n in log.get("required_missing", []) if n.split("/")[-1].startswith(tuple(row["prefixes"]))]
            evidence = [f"{name}: {gfx}, GC {'/'.join(row['gc'])}, firmware {' or '.join(p + '*' for p in row['prefixes'])}"
                        f" [{row['source']}]"] + folders + [line for line in log.get("lines", [])][:4]
            if have and not logged:
                findings.append(self.ok(f"{name}: {len(have)} {row['prefixes'][0]}* firmware files are installed",
                                        subject=str(index), evidence=evidence))
                continue
            if self._kfd_sees(facts, index):
                findings.append(self.ok(f"{name}: the driver runs it (KFD lists it), so its firmware loaded",
                                        subject=str(index), evidence=evidence))
                continue
            findings.append(self.fail(
                f"{name} ({gfx}) needs the {' or '.join(p + '*' for p in row['prefixes'])} firmware, and none is "
                "installed" + (" (the kernel log shows the load failing)" if logged else "")
                + (": the kernel log shows amdgpu stopping at 'Fatal error during GPU init'" if log.get("init_failed")
                   else ": without it amdgpu cannot initialise the GPU") + ". The linux-firmware package is older than "
                "the GPU.",
                subject=str(index), evidence=evidence, fix=self._steps(facts),
                remediation=["AMD's amdgpu-dkms-firmware package (from amdgpu-install) also carries it, under "
                             "/lib/firmware/updates/amdgpu."]))
        return findings or self.skip("no AMD GPU whose firmware rocm-doctor knows")

    @staticmethod
    def _gpus(facts):
        """(index, gfx, label) per AMD GPU; the PCI device id names the gfx when no driver reported one."""
        found = []
        for gpu in gpus(facts):
            gfx = real_gfx(facts, gpu) or catalog.gfx_for_pci_id(gpu.get("device_id"))
            if gfx:
                found.append((gpu.get("index"), gfx, label(gpu)))
        if not found:
            amd = [d for d in facts.get(GPU_PCI) or [] if d.get("vendor") == "amd"]
            found = [(i, g, f"PCI {d.get('slot') or d.get('device_id')}") for i, d in enumerate(amd)
                     if (g := catalog.gfx_for_pci_id(d.get("device_id")))]
        return found

    @staticmethod
    def _kfd_sees(facts, index) -> bool:
        gpu = next((g for g in gpus(facts) if g.get("index") == index), {})
        return bool((gpu.get("sources") or {}).get("kfd"))

    @staticmethod
    def _steps(facts) -> list:
        debian = (facts.get(OS_RELEASE_FACT) or {}).get("id") == "debian"  # Debian ships it as firmware-amd-graphics
        argv = {"debian": ["sudo", "apt-get", "install", "firmware-amd-graphics" if debian else "linux-firmware"],
                "redhat": ["sudo", "dnf", "upgrade", "linux-firmware"],
                "arch": ["sudo", "pacman", "-Syu", "linux-firmware"]}.get(family(facts) or "")
        if argv is None:
            return [S.advice("Update the distribution's linux-firmware package to a release newer than the GPU")]
        return [S.run_command(argv, needs_admin=True, description="install the newest linux-firmware"),
                S.run_command(initramfs_step_argv(facts), needs_admin=True, then=S.AFTER_REBOOT,
                              description="rebuild the initramfs, which carries the firmware amdgpu loads at boot, "
                              "then reboot")]
