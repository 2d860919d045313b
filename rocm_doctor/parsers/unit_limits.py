"""A systemd unit's process limits, as `systemctl show` prints them (LimitNOFILESoft=1024, LimitAS=infinity,
TasksMax=4915, MemoryMax=infinity, CPUAffinity=0-3, CPUQuotaPerSecUSec=2s), in the shape the runtime child reports
its own (probes/limits_reader.py): a service runs under these, not under the shell's. Pure; never raises.
Property names and values: systemd.exec(5) and systemd.resource-control(5)."""

from __future__ import annotations

import re

RLIMITS = {"RLIMIT_NOFILE": "NOFILE", "RLIMIT_AS": "AS", "RLIMIT_DATA": "DATA", "RLIMIT_MEMLOCK": "MEMLOCK",
           "RLIMIT_NPROC": "NPROC", "RLIMIT_STACK": "STACK"}
UNIT_LIMITS = tuple(f"Limit{n}{s}" for n in RLIMITS.values() for s in ("", "Soft")) + (
    "TasksMax", "MemoryMax", "CPUAffinity", "CPUQuotaPerSecUSec")
_QUOTA = re.compile(r"^(?:(\d+(?:\.\d+)?)s)?\s*(?:(\d+(?:\.\d+)?)ms)?$")


def _number(text: str):
    text = (text or "").strip()
    return int(text) if text.isdigit() else None  # "infinity", "" and anything else: no limit stated


def _cpus(text: str) -> list[int]:
    cpus: list[int] = []
    for part in re.split(r"[\s,]+", (text or "").strip()):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            cpus.extend(range(int(low), int(high or low) + 1))
    return sorted(set(cpus))


def _quota(text: str):
    """CPUQuotaPerSecUSec as CPUs: "2s" is two CPUs, "500ms" half of one; "infinity" none."""
    found = _QUOTA.match((text or "").strip())
    if not found or not any(found.groups()):
        return None
    return float(found.group(1) or 0) + float(found.group(2) or 0) / 1000


def unit_limits(props: dict[str, list[str]]) -> dict:
    """The limits the unit sets, as {"RLIMIT_NOFILE": [soft, hard], ..., "affinity": [...], "cgroup_files": {...}}
    (only what `systemctl show` printed; an absent property is absent here)."""
    def value(name):
        values = props.get(name) or []
        return values[0] if values else None

    out: dict = {}
    for rlimit, short in RLIMITS.items():
        hard, soft = value(f"Limit{short}"), value(f"Limit{short}Soft")
        if hard is not None or soft is not None:
            out[rlimit] = [_number(soft if soft is not None else hard), _number(hard)]
    affinity = _cpus(value("CPUAffinity") or "")
    if affinity:
        out["affinity"] = affinity
    cgroup = {}
    quota = _quota(value("CPUQuotaPerSecUSec") or "")
    if quota:
        cgroup["cpu.max"] = f"{int(quota * 100000)} 100000"
    for name, key in (("MemoryMax", "memory.max"), ("TasksMax", "pids.max")):
        if _number(value(name) or "") is not None:
            cgroup[key] = value(name).strip()
    if cgroup:
        out["cgroup_files"] = cgroup
    return out
