"""What decides whether amdgpu loads on this kernel: Secure Boot, the DKMS builds, the module modprobe would load,
modprobe.d files that block it, and the firmware it needs (the kernel's own report is read by probes/kernel_log.py)."""

from __future__ import annotations

import os

from rocm_doctor.facts.keys import DKMS_STATUS_KEY, FIRMWARE_DIRS, MODINFO_KEY, MODPROBE_DIRS, SECURE_BOOT_KEY
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux",)  # WSL has no amdgpu: the GPU is reached through /dev/dxg
COMMANDS = {
    SECURE_BOOT_KEY: ["mokutil", "--sb-state"],
    DKMS_STATUS_KEY: ["dkms", "status"],
    MODINFO_KEY: ["modinfo", "amdgpu"],
}  # the kernel log is read by probes/kernel_log.py (older snapshots hold `dmesg --level=err,warn` as dmesg-warnings)
MAX_CONF_FILES = 64


def collect(recorder: Recorder) -> None:
    recorder.side_by_side(*(lambda key=key, argv=argv: recorder.command(key, argv) for key, argv in COMMANDS.items()))
    seen = set()
    for folder in MODPROBE_DIRS:
        listing = recorder.list_dir(folder)
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        for name in [e for e in listing.entries or [] if e.endswith(".conf")][:MAX_CONF_FILES]:
            recorder.read_file(f"{folder}/{name}", cap=256_000)
    for folder in FIRMWARE_DIRS:
        recorder.list_dir(folder)
