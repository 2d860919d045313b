"""The tool outputs a paste holds (rocminfo, hipconfig --full, rocm-smi, amd-smi static or its default table, hipInfo,
and nvidia-smi's table, CUDA's deviceQuery and clinfo, which parsers/paste_tables.py reads), cut out by the lines each
tool prints first and last, so the parsers a live run uses read them as the machine's own output. Also the platform
the paste shows. Pure; never raises."""

from __future__ import annotations

import re

from rocm_doctor.facts.keys import (AMD_SMI_STATIC_KEY, CLINFO_KEY, DEVICE_QUERY_KEY, HIPCONFIG_FULL_KEY,
                                    HIPINFO_COMMAND_KEY, NVIDIA_SMI_TABLE_KEY, ROCM_SMI_KEY, ROCMINFO_KEY)

# command key (as the probes record it) → (first line, last line or None: to the next tool or the end)
TOOLS = {
    ROCMINFO_KEY: (re.compile(r"^(?:WSL environment detected\.|ROCk module(?: version [\w.-]+)? is (?:NOT )?loaded"
                            r"|HSA System Attributes\s*$)"), re.compile(r"^\*\*\* Done \*\*\*")),
    HIPCONFIG_FULL_KEY: (re.compile(r"^HIP version\s*:\s*\d"), re.compile(r"^== Linux Kernel|^== Windows")),
    ROCM_SMI_KEY: (re.compile(r"^=+ ROCm System Management Interface =+"), re.compile(r"^=+ End of ROCm SMI Log =+")),
    AMD_SMI_STATIC_KEY: (re.compile(r"^GPU: \d+\s*$|^\|\s*AMD-SMI \S+\s+amdgpu version"), None),
    HIPINFO_COMMAND_KEY: (re.compile(r"^device#\s+\d+\s*$"), None),
    NVIDIA_SMI_TABLE_KEY: (re.compile(r"^\|?\s*NVIDIA-SMI \d[\d.]*\s+Driver Version"), None),
    DEVICE_QUERY_KEY: (re.compile(r"^\s*CUDA Device Query \(Runtime API\)"), re.compile(r"^Result = ")),
    CLINFO_KEY: (re.compile(r"^\s*Number of platforms\b|^\s*Device Type:\s+CL_DEVICE_TYPE_"), None),
}
_STARTS = [start for start, _ in TOOLS.values()]
# a kernel log: dmesg's stamp, journalctl's "kernel:", or the drivers' own prefixes
_KERNEL = re.compile(r"^\s*\[\s*\d+\.\d+\]\s|^\[\w{3} \w{3} +\d+ [\d:]+ \d{4}\]\s|\bkernel: |\bNVRM: |"
                     r"^amdgpu [\da-f]{4}:[\da-f]{2}:[\da-f]{2}\.\d: |^\[drm(?::\w+)?\] ", re.MULTILINE)
_WSL = re.compile(r"WSL environment detected|microsoft-standard-WSL2|/dev/dxg|\bWSL2?\b")
_WINDOWS = re.compile(r"[A-Za-z]:\\(?:Users|Program Files|Windows|AMD|Python\d*)\\|amdhip64(?:_\d+)?\.dll|\.exe\b"
                      r"|HIP SDK|Adrenalin|\bWin(?:dows)? ?1[01]\b|WDDM|amd_windows\.go|\\AppData\\|\bWinError \d+|\w\.dll\b", re.IGNORECASE)
_LINUX = re.compile(r"\bon linux\b|\[GCC |/opt/rocm|/dev/kfd|/usr/lib|/home/|amdgpu [\da-f]{4}:|/sys/module/|Ubuntu|Fedora|"
                    r"Arch Linux|journalctl|\.so\b|ROCk module|amd_linux\.go|\bzypper\b|\bdnf\b|\bapt(?:-get)? "
                    r"(?:install|update)\b|Resolving package dependencies|SUSE|\.el\d+\.x86_64\b")
_AMD = re.compile(r"\bgfx[0-9a-f]{3,4}\b|ROCm|\bHIP\b|hip[A-Z]\w+|amdgpu|Radeon|Instinct|rocBLAS|MIOpen|\bhsa_|HSA_")
_NVIDIA = re.compile(r"NVIDIA|CUDA|\bcu\d{3}\b|nvidia-smi|\bsm_\d{2,3}\b|NCCL")


def tool_outputs(text: str) -> dict[str, str]:
    """command key → the part of `text` that tool printed (the first of each; a second run is the user's repeat)."""
    lines = text.split("\n")
    found: dict[str, str] = {}
    for key, (start, end) in TOOLS.items():
        first = next((i for i, line in enumerate(lines) if start.match(line)), None)
        if first is None or key in found:
            continue
        last = len(lines)
        for i in range(first + 1, len(lines)):
            if end is not None and end.match(lines[i]):
                last = i + 1
                break
            if end is None and any(s.match(lines[i]) for s in _STARTS if s is not start):
                last = i
                break
        found[key] = "\n".join(lines[first:last]) + "\n"
    return found


def has_kernel_log(text: str) -> bool:
    """Whether the paste holds kernel log lines (dmesg, dmesg -T, journalctl -k, or the bare driver lines)."""
    return bool(_KERNEL.search(text))


def platform_of(text: str) -> str:
    """"wsl", "windows", "linux" or "unknown": what the paste's own lines show."""
    if _WSL.search(text):
        return "wsl"
    windows, linux = len(_WINDOWS.findall(text)), len(_LINUX.findall(text))
    if windows > linux:
        return "windows"
    return "linux" if linux else ("windows" if windows else "unknown")


def vendor_of(text: str) -> str | None:
    """"amd", "nvidia" or None: the GPU stack the paste talks about (the one it names more)."""
    amd, nvidia = len(_AMD.findall(text)), len(_NVIDIA.findall(text))
    return None if not (amd or nvidia) else ("amd" if amd >= nvidia else "nvidia")
