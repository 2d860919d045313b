"""Inside a container: /dev/kfd and the render nodes passed in, and this process in the group that owns them
(container-gpu-devices). The host can be perfect and the container still sees no GPU."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import LINUX_DEVICE_ACCESS, LINUX_GROUPS, LINUX_SECURITY, OS_CONTAINER, ROCMINFO_STATUS

from rocm_doctor.checks.layer_common import amd_present
from rocm_doctor.checks.symptoms import DRIVER_SYMPTOMS

NOGROUP = 65534
OPENED = ("ok", "kfd-permission-denied", "kfd-no-memory")
FLAGS = "--device=/dev/kfd --device=/dev/dri --group-add video --group-add render"


def recreate_container(flags: str) -> S.Step:
    """Options of `docker run` / `podman run` only take effect on a new container: one step says so for all."""
    return S.advice(f"Recreate the container with {flags}")


def mode_allows(info: dict, uid: int | None, gids, dac_override: bool | None = None) -> bool | None:
    """Whether the node's owner, group and mode let this process open it read-write; None when they were not read.
    Root passes when it holds CAP_DAC_OVERRIDE (Docker and Podman keep it) and the node's owner and group are mapped
    into its user namespace; the overflow id 65534 (an unmapped host id) matches no one."""
    mode = info.get("mode") or ""
    if len(mode) < 10 or uid is None:
        return None
    owner, group = info.get("uid"), info.get("gid")
    if uid == 0 and dac_override and NOGROUP not in (owner, group):
        return True
    if owner == uid and owner != NOGROUP:
        bits = mode[1:3]
    else:
        bits = mode[4:6] if group in set(gids or []) and group != NOGROUP else mode[7:9]
    return bits == "rw"


def _node(info: dict) -> str:
    if not info.get("exists"):
        return f"{info['path']}: missing"
    group = info.get("group") or "no name in this container"
    return (f"{info['path']}: {info.get('mode', '?')} gid {info.get('gid', '?')} ({group}), open O_RDWR: "
            + ("ok" if info.get("read_write") else info.get("errno") or "failed"))


class ContainerGpuDevices(Check):
    id = "container-gpu-devices"
    title = "The GPU device nodes and their group in the container"
    explains = DRIVER_SYMPTOMS
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX,)
    requires = (OS_CONTAINER,)
    docs = ("https://github.com/ROCm/ROCm/issues/1211", "https://github.com/ROCm/ROCm-docker/issues/50")

    def run(self, facts):
        found = facts[OS_CONTAINER]
        if not found.get("in_container"):
            return self.skip("not running in a container")
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        engine = found.get("engine") or "container"
        access = facts.get(LINUX_DEVICE_ACCESS) or {}
        kfd = access.get("/dev/kfd") or {"path": "/dev/kfd"}
        render = [info for path, info in sorted(access.items()) if path.startswith("/dev/dri/renderD")]
        evidence = list(found.get("evidence") or []) + [_node(i) for i in [kfd, *render]]
        opened = (facts.get(ROCMINFO_STATUS) or {}).get("state") in OPENED  # rocminfo reached /dev/kfd itself
        missing = ([] if kfd.get("exists") or opened else ["/dev/kfd"]) + (
            [] if opened or any(i.get("exists") for i in render) else ["/dev/dri/renderD*"])
        if not access:
            return self.skip("the device nodes were not checked", evidence=evidence)
        if missing:
            return self.fail(
                f"this runs in a {engine} container that was started without {' and '.join(missing)}: the host's GPU "
                "is not visible inside.", evidence=evidence,
                remediation=[f"Start the container again with {FLAGS} (Kubernetes: request amd.com/gpu through the "
                             "AMD device plugin)."],
                fix=[recreate_container(FLAGS)])
        denied = [i for i in [kfd, *render] if i.get("exists") and i.get("read_write") is False]
        if not denied:
            return self.ok(f"the {engine} container has /dev/kfd and the render nodes, and opens them",
                           evidence=evidence)
        gids = set((facts.get(LINUX_GROUPS) or {}).get("gids") or [])
        if any(i.get("gid") == NOGROUP for i in denied):
            return self.fail(
                "the device nodes show as nobody:nogroup: a rootless container (user namespace) maps the host's "
                "render group away, so no group inside can open them.", evidence=evidence,
                fix=[S.advice("Run the container rootful and pass the host's render group by number: "
                              "--device=/dev/kfd --device=/dev/dri --group-add GID (getent group render on the host "
                              "prints GID); with rootless podman and crun, --group-add keep-groups")])
        uid = (facts.get(LINUX_GROUPS) or {}).get("uid")
        dac_override = (facts.get(LINUX_SECURITY) or {}).get("cap_dac_override")
        wanted = sorted({i.get("gid") for i in denied if i.get("gid") not in gids and i.get("gid") is not None
                         and not mode_allows(i, uid, gids, dac_override)})
        if wanted:
            numbers = " ".join(f"--group-add {g}" for g in wanted)
            return self.fail(
                f"the device nodes belong to gid {', '.join(map(str, wanted))}, which this process does not have: the "
                f"container was started without that group. A group name only works when the image gives it the "
                "host's number, so pass the number.", evidence=evidence,
                fix=[recreate_container(f"--device=/dev/kfd --device=/dev/dri {numbers}")])
        return self.skip("the nodes are denied for a reason other than groups (see container-security-refuses-gpu, "
                         "rocm-device-access)",
                         evidence=evidence)
