"""The kernel side of the AMD stack: kfd.nodes (KFD topology) and linux.* facts (device nodes, groups, the amdgpu
module, the kernel command line), from the kfd and linux_access probes."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.kfd_sysfs import describe_node
from rocm_doctor.facts.keys import (AMDGPU_INITSTATE_FILE, AMDGPU_MODULE_DIR, AMDGPU_VERSION_FILE, DEVICE_GROUPS,
                                    KERNEL_CMDLINE_FILE as CMDLINE, KFD_NODES, KFD_NODES_DIR as NODES_DIR,
                                    LINUX_AMDGPU_MODULE, LINUX_DEVICE_ACCESS, LINUX_GROUPS, LINUX_KERNEL_CMDLINE,
                                    NODE_NAME, NODE_PROPERTIES)


def _content(observations: Observations, path: str) -> str | None:
    record = observations.file(path)
    return record.content if record is not None else None


def kfd_nodes(observations: Observations) -> tuple[list[dict] | None, str]:
    listing = observations.file(NODES_DIR)
    if listing is None:
        return None, "the KFD topology was not read on this platform"
    if listing.entries is None:
        return None, f"{NODES_DIR} {listing.error or 'unreadable'}: the amdgpu kernel driver's KFD is not loaded"
    nodes = [
        describe_node(entry, _content(observations, f"{NODES_DIR}/{entry}/{NODE_PROPERTIES}"),
                      _content(observations, f"{NODES_DIR}/{entry}/{NODE_NAME}"))
        for entry in sorted((e for e in listing.entries if e.isdigit()), key=int)
    ]
    return nodes, ""


def groups_fact(raw: dict) -> dict:
    """The probe's groups plus, per device group, whether this process has it now and whether the group database
    lists the user (listed but not held means: log out and in again)."""
    fact = {k: raw.get(k) for k in ("uid", "user", "gids", "names", "primary_gid")}
    gids = raw.get("gids") or []
    for name in DEVICE_GROUPS:
        entry = (raw.get("database") or {}).get(name)
        if not isinstance(entry, dict):
            fact[name] = None
            continue
        fact[name] = {
            "gid": entry.get("gid"),
            "members": entry.get("members") or [],
            "in_process": entry.get("gid") in gids,
            "listed": raw.get("user") in (entry.get("members") or []) or entry.get("gid") == raw.get("primary_gid"),
        }
    return fact


def parse_cmdline(text: str) -> dict:
    """`/proc/cmdline` → {raw, amdgpu: {param: value}, iommu: {param: value}}; a bare flag has the value ""."""
    amdgpu, iommu = {}, {}
    for token in text.split():
        name, _, value = token.partition("=")
        if name.startswith("amdgpu."):
            amdgpu[name[len("amdgpu."):]] = value
        elif "iommu" in name:
            iommu[name] = value
    return {"raw": text.strip(), "amdgpu": amdgpu, "iommu": iommu}


def _module(observations: Observations) -> dict | None:
    listing = observations.file(AMDGPU_MODULE_DIR)
    if listing is None:
        return None
    version = _content(observations, AMDGPU_VERSION_FILE)
    initstate = _content(observations, AMDGPU_INITSTATE_FILE)
    return {
        "loaded": listing.exists,
        "version": version.strip() or None if version else None,
        "initstate": initstate.strip() or None if initstate else None,
    }


def interpret(observations: Observations, facts: Facts) -> None:
    nodes, why = kfd_nodes(observations)
    if nodes is None:
        facts.set_missing(KFD_NODES, why)
    else:
        facts.set(KFD_NODES, nodes)

    not_here = f"not collected on {facts.os}"
    access = observations.probes.get(LINUX_DEVICE_ACCESS)
    groups = observations.probes.get(LINUX_GROUPS)
    module = _module(observations)
    cmdline = _content(observations, CMDLINE)
    cmdline_record = observations.file(CMDLINE)
    for key, value in (
        (LINUX_DEVICE_ACCESS, access if isinstance(access, dict) else None),
        (LINUX_GROUPS, groups_fact(groups) if isinstance(groups, dict) else None),
        (LINUX_AMDGPU_MODULE, module),
        (LINUX_KERNEL_CMDLINE, parse_cmdline(cmdline) if cmdline is not None else None),
    ):
        if value is None and key == LINUX_KERNEL_CMDLINE and cmdline_record is not None:
            facts.set_missing(key, f"{CMDLINE}: {cmdline_record.error}")
        elif value is None:
            facts.set_missing(key, not_here)
        else:
            facts.set(key, value)
