"""Inside a container: the GPU device nodes were passed in and their mode lets this process open them, yet the
kernel refuses them — the SELinux label, AppArmor profile or seccomp filter the container was started under
(container-security-refuses-gpu). Nothing inside the container can change that; it takes a container started
with other security options, or a host policy that allows the device."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import DEVICE_MAP_KEY, LINUX_DEVICE_ACCESS, LINUX_GROUPS, LINUX_SECURITY, OS_CONTAINER

from rocm_doctor.checks.containers import mode_allows, recreate_container
from rocm_doctor.checks.layer_common import amd_present, in_container
from rocm_doctor.checks.symptoms import DRIVER_SYMPTOMS

REFUSED = ("EACCES", "EPERM")
LABEL_OFF = "--security-opt label=disable"
APPARMOR_OFF = "--security-opt apparmor=unconfined"
DEVICES = "--device=/dev/kfd --device=/dev/dri"
SELINUX_BOOLEAN = ["sudo", "setsebool", "-P", "container_use_devices", "1"]


def _gpu_nodes(access: dict) -> list[dict]:
    return [dict(info, path=path) for path, info in sorted(access.items())
            if (path == "/dev/kfd" or path.startswith("/dev/dri/renderD")) and info.get("exists")]


def refusal(info: dict, uid, gids, dac_override) -> str | None:
    """Why this node's refusal is not the permissions' doing, in words; None when it is not refused so."""
    path = info["path"]
    if info.get("stat_error") and not info.get("mode"):
        return (f"{path}: even reading its owner and mode is refused ({info['stat_error']}), which file "
                "permissions never do")
    if info.get("read_write") is False and info.get("errno") in REFUSED and mode_allows(info, uid, gids, dac_override):
        return (f"{path}: {info.get('mode')} uid {info.get('uid')} gid {info.get('gid')} lets uid {uid} (groups "
                f"{', '.join(map(str, gids)) or 'none'}) open it, yet open O_RDWR gives {info['errno']}")
    return None


def describe(security: dict) -> list[str]:
    """The confinement the process reads of itself, as evidence lines."""
    lines = []
    selinux, apparmor = security.get("selinux"), security.get("apparmor")
    if selinux:
        mode = {True: "enforcing", False: "permissive"}.get(selinux.get("enforcing"), "mode not readable in the container")
        lines.append(f"SELinux label {selinux['label']} (type {selinux['type']}, "
                     f"{'confined' if selinux['confined'] else 'unconfined'}; {mode})")
    if apparmor:
        lines.append(f"AppArmor profile {apparmor['profile']}" + (f" ({apparmor['mode']})" if apparmor["mode"] else ""))
    if security.get("seccomp") is not None:
        lines.append({0: "seccomp: off", 1: "seccomp: strict"}.get(security["seccomp"], "seccomp: filter")
                     + (f" ({security['seccomp_filters']} filters)" if security.get("seccomp_filters") else "")
                     + ("; no_new_privs set" if security.get("no_new_privs") else ""))
    return lines + [f"not readable: {why}" for why in security.get("unread") or []]


class ContainerSecurityRefusesGpu(Check):
    id = "container-security-refuses-gpu"
    title = "Container security modules and the GPU device nodes"
    explains = ("container-gpu-devices", "rocm-runtime-sees-no-gpu", "hip-runtime-mismatch", *DRIVER_SYMPTOMS)
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX,)
    requires = (OS_CONTAINER, LINUX_DEVICE_ACCESS, LINUX_SECURITY)
    docs = ("https://github.com/ROCm/ROCm/issues/1549", "https://github.com/containers/container-selinux/pull/384",
            "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html")

    def run(self, facts):
        if not in_container(facts):
            return self.skip("not running in a container")
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        nodes = _gpu_nodes(facts[LINUX_DEVICE_ACCESS])
        if not nodes:
            return self.skip("no GPU device node is in this container (see container-gpu-devices)")
        security = facts[LINUX_SECURITY]
        groups = facts.get(LINUX_GROUPS) or {}
        uid, gids = groups.get("uid"), groups.get("gids") or []
        dac_override = security.get("cap_dac_override")
        refused = [why for why in (refusal(info, uid, gids, dac_override) for info in nodes) if why]
        mapped = (facts.get(DEVICE_MAP_KEY) or {}).get("/dev/kfd") or {}
        if mapped.get("opened") and mapped.get("mapped") is False and mapped.get("errno") in REFUSED:
            refused.append(f"/dev/kfd: it opens, but mapping it is refused ({mapped['errno']}), and the ROCm "
                           "runtime maps it")
        evidence = refused + describe(security)
        if not refused:
            if any(info.get("read_write") is False for info in nodes):
                return self.skip("the nodes are refused by their owner, group or mode, which no security module "
                                 "needs to explain (see container-gpu-devices, rocm-device-access)", evidence=evidence)
            tried = "opens /dev/kfd and may map it" if mapped.get("opened") else "opens the GPU device nodes"
            return self.ok(f"no security module refuses the GPU here: this process {tried}", evidence=evidence)
        return self._refused(security, refused, evidence)

    def _refused(self, security: dict, refused: list[str], evidence: list[str]):
        selinux, apparmor = security.get("selinux") or {}, security.get("apparmor") or {}
        said = "the GPU device nodes were passed in and nothing in their permissions stops this process, yet the " \
               "kernel refuses them"
        if selinux.get("confined") and selinux.get("enforcing") is not False:
            return self.fail(
                f"{said}: the container runs under the SELinux type {selinux['type']}, and the host's policy does "
                "not let that type use the GPU's device nodes (on Fedora and RHEL /dev/kfd is labelled "
                "hsa_device_t).", evidence=evidence,
                remediation=["Start the container again without SELinux separation. Allowing containers to use "
                             "devices on the host is the other way; it applies to every container there."],
                fix=[recreate_container(LABEL_OFF)],
                alternatives=[S.alternative(
                    "on the host, let containers use device nodes (SELinux boolean container_use_devices)",
                    S.run_command(SELINUX_BOOLEAN, needs_admin=True,
                                  description="on the host: let containers use device nodes, for good"),
                    why_not_first="it changes the host's policy for every container; label=disable changes only "
                                  "this one")])
        if apparmor.get("confined"):
            return self.fail(
                f"{said}: the container runs under the AppArmor profile {apparmor['profile']} in {apparmor['mode']} "
                "mode, which does not allow them.", evidence=evidence,
                remediation=["Start the container again without that profile, or with a profile that allows "
                             "/dev/kfd and /dev/dri/renderD* read-write."],
                fix=[recreate_container(APPARMOR_OFF)])
        if all("EPERM" in why for why in refused):
            filtered = security.get("seccomp") == 2
            flags = DEVICES + (" --security-opt seccomp=unconfined" if filtered else "")
            return self.warn(
                f"{said} with 'Operation not permitted': the container's device rules do not include them (they "
                "reached it by a bind mount, not by --device)" + (", or its seccomp filter refuses the call; which "
                                                                 "of the two could not be told" if filtered else "")
                + ".", evidence=evidence, fix=[recreate_container(flags)])
        return self.warn(
            f"{said}, and no enforcing SELinux label or confining AppArmor profile that would explain it could be read "
            "from inside the container: which security module refuses could not be told.", evidence=evidence,
            remediation=["On the host, the audit log (SELinux) or the kernel log's AppArmor DENIED lines name what "
                         "refused the device and under which label."])
