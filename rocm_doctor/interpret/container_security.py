"""linux.security (the SELinux label and mode, the AppArmor profile, seccomp and no_new_privs of the doctor's own
process, which shares the container's confinement with the programs it diagnoses) and linux.device_map (whether
/dev/kfd may be mapped once open), from the container_security probe."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.security_attrs import parse_enforce, parse_label, parse_status_security
from rocm_doctor.facts.keys import (APPARMOR_LABEL, DEVICE_MAP_KEY, LINUX_SECURITY, PROC_STATUS, SECURITY_LABEL,
                                    SELINUX_ENFORCE)

NOT_READ = "the process's security attributes were not read"


def _read(observations: Observations, path: str) -> tuple[str | None, str | None]:
    """(content, why it is missing) of a recorded file."""
    record = observations.file(path)
    if record is None:
        return None, f"{path} was not read"
    if record.content is None:
        return None, f"{path}: {record.error or 'not found'}"
    return record.content, None


def security(observations: Observations) -> dict | None:
    """{selinux, apparmor, seccomp, seccomp_filters, no_new_privs, cap_dac_override, unread}; None when nothing
    was read."""
    if all(observations.file(path) is None for path in (SELINUX_ENFORCE, SECURITY_LABEL, APPARMOR_LABEL, PROC_STATUS)):
        return None
    label_text, label_why = _read(observations, SECURITY_LABEL)
    apparmor_text, apparmor_why = _read(observations, APPARMOR_LABEL)
    enforce_text, _ = _read(observations, SELINUX_ENFORCE)  # hidden in Podman containers: the label still shows confinement
    status_text, status_why = _read(observations, PROC_STATUS)
    label, apparmor = parse_label(label_text), parse_label(apparmor_text)
    selinux = label if label and label["kind"] == "selinux" else None
    if not (apparmor and apparmor["kind"] == "apparmor"):
        apparmor = label if label and label["kind"] == "apparmor" else None
    if selinux is not None:
        selinux = dict(selinux, enforcing=parse_enforce(enforce_text))
    unread = ([label_why, apparmor_why] if selinux is None and apparmor is None else []) + [status_why]
    return {"selinux": selinux, "apparmor": apparmor, **parse_status_security(status_text),
            "unread": [why for why in unread if why]}


def interpret(observations: Observations, facts: Facts) -> None:
    if facts.os != "linux":
        for key in (LINUX_SECURITY, DEVICE_MAP_KEY):
            facts.set_missing(key, f"not collected on {facts.os}")
        return
    found = security(observations)
    if found is None:
        facts.set_missing(LINUX_SECURITY, NOT_READ)
    else:
        facts.set(LINUX_SECURITY, found)
    mapped = observations.probes.get(DEVICE_MAP_KEY)
    if isinstance(mapped, dict):
        facts.set(DEVICE_MAP_KEY, mapped)
    else:
        facts.set_missing(DEVICE_MAP_KEY, "mapping /dev/kfd was not tried")
