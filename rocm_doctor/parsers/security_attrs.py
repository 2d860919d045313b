"""What a process can read about its own confinement: `/proc/self/attr/current` (an SELinux context, or on
kernels without the per-module directory an AppArmor profile), `/proc/self/attr/apparmor/current`, the seccomp
and no_new_privs lines of `/proc/self/status`, and `/sys/fs/selinux/enforce`. Pure; never raises."""

from __future__ import annotations

import re

# SELinux types under which a process is not confined (a privileged or label=disable container runs as spc_t).
UNCONFINED_TYPES = frozenset({"spc_t", "unconfined_t", "unconfined_service_t", "kernel_t", "initrc_t"})
CAP_DAC_OVERRIDE = 1  # the bit of CapEff
_APPARMOR = re.compile(r"^(?P<profile>\S.*?) \((?P<mode>[a-z_]+)\)$")


def parse_label(text: str | None) -> dict | None:
    """A security label → {kind: "selinux", label, user, role, type, level, confined} or {kind: "apparmor",
    profile, mode, confined}; None for an empty or unknown text."""
    label = (text or "").replace("\x00", "").strip()
    if not label:
        return None
    if label == "unconfined":
        return {"kind": "apparmor", "profile": "unconfined", "mode": None, "confined": False}
    found = _APPARMOR.match(label)
    if found:
        mode = found["mode"]
        return {"kind": "apparmor", "profile": found["profile"], "mode": mode,
                "confined": mode in ("enforce", "kill")}
    parts = label.split(":", 3)
    if len(parts) >= 3 and parts[2].endswith("_t"):
        return {"kind": "selinux", "label": label, "user": parts[0], "role": parts[1], "type": parts[2],
                "level": parts[3] if len(parts) == 4 else None, "confined": parts[2] not in UNCONFINED_TYPES}
    return None


def parse_status_security(text: str | None) -> dict:
    """`/proc/<pid>/status` → {seccomp: 0 none / 1 strict / 2 filter, seccomp_filters, no_new_privs,
    cap_dac_override (from CapEff: root opens a node past its mode only with it)}; an absent line gives None."""
    fields = {}
    for line in (text or "").splitlines():
        name, sep, value = line.partition(":")
        if sep:
            fields[name.strip()] = value.strip()

    def number(name: str) -> int | None:
        value = fields.get(name, "").split()
        return int(value[0]) if value and value[0].isdecimal() else None

    no_new_privs = number("NoNewPrivs")
    cap_eff = fields.get("CapEff") or None
    try:
        dac_override = None if cap_eff is None else bool(int(cap_eff, 16) & 1 << CAP_DAC_OVERRIDE)
    except ValueError:
        dac_override = None
    return {"seccomp": number("Seccomp"), "seccomp_filters": number("Seccomp_filters"),
            "no_new_privs": None if no_new_privs is None else no_new_privs == 1, "cap_dac_override": dac_override}


def parse_enforce(text: str | None) -> bool | None:
    """`/sys/fs/selinux/enforce`: "1" enforcing, "0" permissive; anything else says nothing."""
    value = (text or "").strip()
    return {"1": True, "0": False}.get(value)
