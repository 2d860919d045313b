"""Linux/WSL access to the GPU: /dev/kfd and /dev/dri/renderD* open read-write for this user (rocm-device-access),
and the amdgpu kernel driver with its KFD loaded and matching the kernel (rocm-kernel-driver)."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine import remedy as S
from rocm_doctor.facts.keys import (GPU_PCI, LINUX_AMDGPU_MODULE, LINUX_DEVICE_ACCESS, LINUX_GROUPS,
                                    LINUX_KERNEL_CMDLINE, ROCMINFO_STATUS)

from rocm_doctor.checks.amd_common import gpus
from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU

NOGROUP = 65534


def amd_present(facts) -> bool:
    status = (facts.get(ROCMINFO_STATUS) or {}).get("state")
    return bool(gpus(facts)) or any(g.get("vendor") == "amd" for g in facts.get(GPU_PCI) or []) or status in (
        "kfd-permission-denied", "kfd-no-memory", "rock-not-loaded", "kfd-open-failed")


class RocmDeviceAccess(Check):
    id = "rocm-device-access"
    title = "Access to /dev/kfd and the GPU render nodes"
    explains = (*TORCH_SEES_NO_GPU, "hip-runtime-mismatch", "rocm-runtime-sees-no-gpu", *GPU_WORK)
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX,)  # WSL goes through /dev/dxg: wsl-rocm-support

    def run(self, facts):
        access = facts.get(LINUX_DEVICE_ACCESS) or {}
        status = facts.get(ROCMINFO_STATUS) or {}
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        kfd = access.get("/dev/kfd") or {}
        denied = [info for path, info in sorted(access.items())
                  if (path == "/dev/kfd" or path.startswith("/dev/dri/renderD")) and info.get("exists")
                  and info.get("read_write") is False]
        if status.get("state") == "kfd-permission-denied" and not denied:
            denied = [dict(kfd, path="/dev/kfd", errno="EACCES")]
        evidence = [self._describe(i) for i in denied] + list(status.get("evidence") or [])[1:4]
        if denied:
            return self._denied(facts, denied, evidence)
        if access and not kfd.get("exists") and (facts.get(LINUX_AMDGPU_MODULE) or {}).get("loaded"):
            return self.fail(
                "/dev/kfd does not exist although amdgpu is loaded: in a container the devices were not passed in.",
                evidence=[self._describe(dict(kfd, path="/dev/kfd"))],
                remediation=["Docker/Podman: add --device=/dev/kfd --device=/dev/dri --group-add video "
                             "--group-add render (by numeric GID if the name is unknown in the image)."])
        if not access:
            return self.skip("device nodes were not checked (linux.device_access not collected)")
        if not kfd.get("exists"):
            return self.skip("no /dev/kfd (see rocm-kernel-driver)")
        return self.ok("/dev/kfd and the render nodes open read-write for this user")

    @staticmethod
    def _describe(info):
        owner = f"{info.get('mode', '?')} group {info.get('group') or info.get('gid', '?')}"
        return (f"{info['path']}: " + ("missing" if not info.get("exists", True) else
                f"{owner}, open O_RDWR: {'ok' if info.get('read_write') else info.get('errno') or 'failed'}"))

    def _denied(self, facts, denied, evidence):
        groups = facts.get(LINUX_GROUPS) or {}
        paths = ", ".join(i["path"] for i in denied)
        owner_groups = {i.get("group") for i in denied}
        if "nogroup" in owner_groups or NOGROUP in {i.get("gid") for i in denied} or any(
                "nogroup" in line for line in evidence):
            return self.fail(
                f"{paths}: owned by nobody:nogroup here — a rootless container (user namespace) maps the host's "
                "render group away, so no group inside can open it, not even root.", evidence=evidence,
                remediation=["Run the container rootful (podman as root, or docker) and pass the host's render "
                             "group by number: --device=/dev/kfd --device=/dev/dri --group-add GID, where GID is the "
                             "render group's number on the host (getent group render prints it); the group name "
                             "alone did not work.",
                             "With rootless podman: --group-add keep-groups (crun) keeps your host groups."])
        if groups.get("uid") == 0:
            return self.fail(
                f"{paths}: permission denied although this process runs as root, whom the nodes' mode and groups do "
                "not stop: a user namespace (a rootless container) or a security module (SELinux, AppArmor, "
                "seccomp) refuses it, so joining groups would not help.", evidence=evidence,
                remediation=["In a container: start it rootful with --device=/dev/kfd --device=/dev/dri, and see "
                             "what its --security-opt settings allow."])
        held = [name for name in ("render", "video") if (groups.get(name) or {}).get("in_process")]
        listed = [name for name in ("render", "video") if (groups.get(name) or {}).get("listed")]
        if listed and not held:
            return self.fail(
                f"{paths}: permission denied. You were added to {'/'.join(listed)}, but this session started "
                "before that: group changes apply to new logins only.", evidence=evidence,
                remediation=["Afterwards the id command must list render (and video)."],
                fix=[S.advice("Log out and back in (or reboot): group changes apply to new logins")],
                alternatives=[S.alternative(
                    "start one shell with the render group", S.run_command(
                        ["newgrp", "render"], description="a shell with the render group (this shell only)"),
                    workaround=True, why_not_first="only that one shell gets the group; other programs still lack it")])
        if held:
            return self.fail(
                f"{paths}: permission denied although this session holds {'/'.join(held)}: the device nodes' group "
                "or mode is not the usual one (a udev rule, or a container that maps groups).",
                evidence=evidence, remediation=["The device nodes are normally group render with mode crw-rw---- "
                                                "(the evidence shows theirs); a udev rule in /etc/udev/rules.d/ may "
                                                "change that."])
        finding = self.fail(f"{paths}: permission denied: this user is not in the render/video groups that own the "
                            "GPU device nodes.", evidence=evidence,
                            remediation=["The new groups apply after you log out and back in."])
        return self.with_fix(finding, S.add_to_group(("render", "video")))


class RocmKernelDriver(Check):
    id = "rocm-kernel-driver"
    title = "The amdgpu kernel driver and its KFD in this kernel"
    explains = ("rocm-device-access", *TORCH_SEES_NO_GPU, *GPU_WORK)
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX,)

    def run(self, facts):
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        status = facts.get(ROCMINFO_STATUS) or {}
        module = facts.get(LINUX_AMDGPU_MODULE) or {}
        cmdline = facts.get(LINUX_KERNEL_CMDLINE) or {}
        evidence = list(status.get("evidence") or [])[:5]
        if module:
            evidence.append(f"/sys/module/amdgpu: {'present' if module.get('loaded') else 'absent'}"
                            + (f", DKMS version {module['version']}" if module.get("version") else ""))
        if status.get("state") == "kfd-no-memory":
            version = module.get("version")
            return self.fail(
                "/dev/kfd exists but opening it fails with 'Cannot allocate memory': the loaded kernel driver's "
                "KFD does not support this GPU. "
                + (f"The loaded amdgpu is the DKMS build {version}, so the module was built for this kernel; whether "
                   "the kernel is too old for this ROCm could not be told from here (the kernel log names the reason)."
                   if version else "/sys/module/amdgpu names no DKMS version, so the kernel's own driver is the one "
                   "loaded: the amdgpu DKMS module was not built for the running kernel, or the kernel is too old "
                   "for this ROCm; which could not be told from here."), evidence=evidence,
                remediation=[f"With the DKMS build {version} loaded, what remains is the kernel: install a newer one "
                             "(Ubuntu 20.04: linux-generic-hwe-20.04), reboot, reinstall ROCm."
                             if version else "If dkms status already lists amdgpu as installed for the running "
                             "kernel (uname -r names it), the kernel is too old for the driver: install a newer one.",
                             "The kernel log (dmesg) names the reason, e.g. 'DID 7340 is missing in supported_devices'."],
                fix=[] if version else [S.run_command(
                    ["sudo", "dkms", "autoinstall"], needs_admin=True, then=S.AFTER_REBOOT,
                    description="build the DKMS modules (amdgpu) for the running kernel, then reboot",
                    note="the kernel's own driver has no KFD support for this GPU")])
        runtime_ok = status.get("state") == "ok" or status.get("rock_loaded")
        not_loaded = status.get("state") == "rock-not-loaded" or (module.get("loaded") is False and not runtime_ok)
        if not_loaded:
            blocked = [t for t in (cmdline.get("raw") or "").split() if t in ("nomodeset", "amdgpu.modeset=0")
                       or "blacklist=amdgpu" in t]
            return self.fail(
                "the amdgpu kernel driver is not loaded (rocminfo: 'ROCk module is NOT loaded'): no /dev/kfd, so no "
                "ROCm program sees the GPU." + (f" The kernel command line disables it: {' '.join(blocked)}." if blocked
                                                 else ""),
                evidence=evidence + ([f"/proc/cmdline: {cmdline.get('raw')}"] if blocked else []),
                remediation=["Remove " + " ".join(blocked) + " from the kernel command line (/etc/default/grub), "
                             "regenerate the GRUB configuration, then reboot."] if blocked else [
                    "If loading it fails, the kernel log (dmesg) says why."],
                fix=[] if blocked else [S.run_command(["sudo", "modprobe", "amdgpu"], needs_admin=True,
                                                      description="load the amdgpu kernel driver")],
                alternatives=[] if blocked else [S.alternative(
                    "install the driver for this kernel (amdgpu-dkms) with ROCm's installer",
                    S.run_command(["sudo", "amdgpu-install", "--usecase=rocm"], needs_admin=True, then=S.AFTER_REBOOT,
                                  description="install amdgpu-dkms and ROCm, then reboot"),
                    why_not_first="needed only when no amdgpu module for the running kernel is installed")])
        if module.get("loaded") or runtime_ok:
            return self.ok("amdgpu is loaded" + (f" (DKMS {module['version']})" if module.get("version") else
                                                 " (the kernel's own driver)"), evidence=evidence)
        return self.skip("neither rocminfo nor /sys/module/amdgpu was read")
