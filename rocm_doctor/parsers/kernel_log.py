"""Kernel log lines about amdgpu (`dmesg`): firmware files that failed to load, a failed GPU init, and modules
refused for want of a signature. Pure; never raises."""

from __future__ import annotations

import re

from rocm_doctor.parsers.untrusted_text import shown_all

_FIRMWARE = (re.compile(r"Direct firmware load for (amdgpu/\S+) failed with error -?(\d+)"),
             re.compile(r"Failed to load (?:\w+ )?firmware \"(amdgpu/[^\"]+)\""))
INIT_FAILED = ("Fatal error during GPU init", "amdgpu_device_ip_init failed")
_PROBE_FAILED = re.compile(r"amdgpu: probe of (\S+) failed with error (-?\d+)")
_UNSIGNED = ("Loading of unsigned module is rejected", "module verification failed",
             "unsigned module loading is restricted", "Key was rejected by service")
OPTIONAL_FIRMWARE = ("_ta.bin", "_asd.bin")  # trusted-application blobs: ROCm runs without them (ROCm/ROCm#912)


def parse_kernel_log(text: str) -> dict:
    missing, evidence, probes = [], [], []
    init_failed = unsigned = False
    for line in (text or "").splitlines():
        hit = False
        for pattern in _FIRMWARE:
            for match in pattern.finditer(line):
                if match[1] not in missing:
                    missing.append(match[1])
                hit = True
        if any(words in line for words in INIT_FAILED):
            init_failed = hit = True
        probe = _PROBE_FAILED.search(line)
        if probe:
            probes.append({"device": probe[1], "error": int(probe[2])})
            hit = True
        if any(words in line for words in _UNSIGNED):
            unsigned = hit = True
        if hit:
            evidence.append(line.strip())
    required = [name for name in missing if not name.endswith(OPTIONAL_FIRMWARE)]
    return shown_all({"firmware_missing": missing, "required_missing": required, "init_failed": init_failed,
                      "probe_failed": probes, "unsigned_rejected": unsigned, "lines": evidence})  # the log's text
