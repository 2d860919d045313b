"""GPU presence without torch: display-class PCI devices from sysfs and lspci (Linux), WMI (Windows)."""

from __future__ import annotations

import os
import shutil

from rocm_doctor.facts.keys import LSPCI_KEY, PCI_SYSFS_KEY, WMI_VIDEO_KEY
from rocm_doctor.probes._base import Recorder

SYSFS_PCI = "/sys/bus/pci/devices"
DISPLAY_CLASS_PREFIX = "0x03"  # VGA, 3D and display controllers
WMI_QUERY = (
    "Get-CimInstance Win32_VideoController | "
    "Select-Object Name,PNPDeviceID,DriverVersion,DriverDate,AdapterRAM,VideoProcessor,Status | "
    "ConvertTo-Json -Compress"
)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def sysfs_display_devices(root: str = SYSFS_PCI) -> list[dict]:
    devices = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return devices
    for name in names:
        base = os.path.join(root, name)
        pci_class = _read(os.path.join(base, "class"))
        if not pci_class or not pci_class.startswith(DISPLAY_CLASS_PREFIX):
            continue
        driver = os.path.join(base, "driver")
        devices.append(
            {
                "slot": name,
                "class": pci_class,
                "vendor": _read(os.path.join(base, "vendor")),
                "device": _read(os.path.join(base, "device")),
                "subsystem_vendor": _read(os.path.join(base, "subsystem_vendor")),
                "subsystem_device": _read(os.path.join(base, "subsystem_device")),
                "revision": _read(os.path.join(base, "revision")),
                "boot_vga": _read(os.path.join(base, "boot_vga")),
                "driver": os.path.basename(os.readlink(driver)) if os.path.islink(driver) else None,
            }
        )
    return devices


def collect(recorder: Recorder) -> None:
    platform_os = recorder.context.platform_os
    if platform_os in ("linux", "wsl"):
        recorder.put(PCI_SYSFS_KEY, sysfs_display_devices())
        if shutil.which("lspci"):
            recorder.command(LSPCI_KEY, ["lspci", "-nn", "-D"])
    elif platform_os == "windows":
        recorder.command(
            WMI_VIDEO_KEY,
            ["powershell", "-NoProfile", "-NonInteractive", "-Command", WMI_QUERY],
            timeout=20,
        )
