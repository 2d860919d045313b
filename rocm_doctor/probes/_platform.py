"""Describes the OS the doctor runs on: family (linux, windows, wsl, macos), release, WSL and Windows build."""

from __future__ import annotations

import os
import platform
import sys


def detect_os() -> str:
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "wsl" if _is_wsl() else "linux"


def _is_wsl() -> bool:
    if os.environ.get("WSL_DISTRO_NAME") or os.environ.get("WSL_INTEROP"):
        return True
    try:
        with open("/proc/sys/kernel/osrelease", encoding="utf-8", errors="replace") as handle:
            return "microsoft" in handle.read().lower()
    except OSError:
        return False


def describe_platform() -> dict:
    info = {
        "os": detect_os(),
        "system": platform.system(),
        "release": platform.release(),
        "version": platform.version(),
        "machine": platform.machine(),
        "doctor_python": sys.version.split()[0],
        "doctor_executable": sys.executable,
    }
    if info["os"] == "windows":
        info["windows_build"] = platform.version()
    if info["os"] in ("linux", "wsl"):
        info["os_release"] = _os_release()
    return info


def _os_release() -> dict:
    values = {}
    try:
        with open("/etc/os-release", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, sep, value = line.strip().partition("=")
                if sep and key in ("ID", "NAME", "VERSION_ID", "PRETTY_NAME", "ID_LIKE"):
                    values[key] = value.strip('"')
    except OSError:
        pass
    return values
