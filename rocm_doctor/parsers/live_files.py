"""Small kernel files the live-state probe reads: `/proc/<pid>/status`, a DRM card's `device/uevent`, and one-value
sysfs files (`gpu_busy_percent`, `mem_info_vram_used`, `power_dpm_force_performance_level`). Pure; never raises."""

from __future__ import annotations

from rocm_doctor.parsers.untrusted_text import shown


def _pairs(text: str, separator: str) -> dict[str, str]:
    pairs = {}
    for line in (text or "").splitlines():
        key, found, value = line.partition(separator)
        if found and key.strip():
            pairs[key.strip()] = value.strip()
    return pairs


def _int(text) -> int | None:
    try:
        return int(str(text).split()[0])
    except (ValueError, IndexError, TypeError):
        return None


def parse_proc_status(text: str) -> dict:
    """{"name", "pid", "ppid", "uid"} (the real uid, first of the four); missing lines are None. The name is the
    process's own choice (prctl, its argv[0]): shown neutral and without secrets."""
    pairs = _pairs(text, ":")
    return {"name": shown(pairs["Name"]) if pairs.get("Name") else None, "pid": _int(pairs.get("Pid")),
            "ppid": _int(pairs.get("PPid")), "uid": _int(pairs.get("Uid"))}


def parse_uevent(text: str) -> dict:
    """`DRIVER=amdgpu`, `PCI_ID=1002:73BF`, `PCI_SLOT_NAME=0000:03:00.0` → {"driver", "pci_id", "slot"}."""
    pairs = _pairs(text, "=")
    return {"driver": pairs.get("DRIVER"), "pci_id": (pairs.get("PCI_ID") or "").lower() or None,
            "slot": pairs.get("PCI_SLOT_NAME")}


def sysfs_value(text: str | None) -> str | None:
    value = (text or "").strip()
    return value or None


def sysfs_int(text: str | None) -> int | None:
    return _int(sysfs_value(text))
