"""platform.* and gpu.pci facts: what OS this is and which GPUs the hardware shows, without torch."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import GPU_PCI, LSPCI_KEY, PCI_SYSFS_KEY, PLATFORM_OS, PLATFORM_PREFIX, WMI_VIDEO_KEY
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.lspci import parse_lspci
from rocm_doctor.parsers.wmi_video import parse_video_controllers

VENDORS = {"0x1002": "amd", "0x10de": "nvidia", "0x8086": "intel", "0x1af4": "virtio", "0x1234": "qemu"}


def vendor_name(vendor_id: str | None) -> str:
    return VENDORS.get((vendor_id or "").lower(), "other")


def interpret(observations: Observations, facts: Facts) -> None:
    platform = observations.platform
    for key, value in platform.items():
        facts.set(PLATFORM_PREFIX + key, value)
    if "os" not in platform:
        facts.set(PLATFORM_OS, "linux")

    gpus = _pci_gpus(observations)
    if gpus is None:
        facts.set_missing(GPU_PCI, "no PCI source was readable (sysfs, lspci or WMI)")
    else:
        facts.set(GPU_PCI, gpus)


def _pci_gpus(observations: Observations) -> list[dict] | None:
    sysfs = observations.probes.get(PCI_SYSFS_KEY)
    if isinstance(sysfs, list) and sysfs:
        return [
            {
                "source": "sysfs",
                "slot": d.get("slot"),
                "vendor": vendor_name(d.get("vendor")),
                "vendor_id": (d.get("vendor") or "").lower() or None,
                "device_id": (d.get("device") or "").lower() or None,
                "driver": d.get("driver"),
                "boot_vga": d.get("boot_vga") == "1",
            }
            for d in sysfs
            if isinstance(d, dict)
        ]
    lspci = observations.command(LSPCI_KEY)
    if lspci is not None and lspci.stdout:
        return [dict(d, source="lspci", vendor=vendor_name(d["vendor_id"])) for d in parse_lspci(lspci.stdout)]
    wmi = observations.command(WMI_VIDEO_KEY)
    if wmi is not None and wmi.stdout:
        return [dict(d, source="wmi", vendor=vendor_name(d["vendor_id"])) for d in parse_video_controllers(wmi.stdout)]
    if isinstance(sysfs, list):
        return []  # sysfs was readable and shows no display device
    return None
