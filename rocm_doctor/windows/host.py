"""The Windows platform seam: every Windows-specific read (registry, folders, commands) goes through a
`WindowsHost`. Probes get one (the real one on Windows, a fake in tests) and record what it answers through
`record.WindowsRecorder`, so a snapshot replays anywhere.

Only `RealWindowsHost` touches Windows; `winreg` is imported inside it, so this module imports on Linux.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping, Optional, Protocol, Sequence, runtime_checkable

from rocm_doctor.engine import runner
from rocm_doctor.engine.runner import CommandResult

REG_TYPE_NAMES = {
    0: "REG_NONE",
    1: "REG_SZ",
    2: "REG_EXPAND_SZ",
    3: "REG_BINARY",
    4: "REG_DWORD",
    5: "REG_DWORD_BIG_ENDIAN",
    6: "REG_LINK",
    7: "REG_MULTI_SZ",
    11: "REG_QWORD",
}


class RegistryKeyMissing(LookupError):
    """The registry key does not exist (distinct from a value that is absent)."""


@runtime_checkable
class WindowsHost(Protocol):
    """What the Windows probes may ask of the machine. Implementations raise OSError subclasses
    (FileNotFoundError, PermissionError, NotADirectoryError) or RegistryKeyMissing; the recorder turns every
    answer, including errors, into observations."""

    def read_registry_value(self, hive: str, key: str, name: str) -> Optional[tuple[object, str]]:
        """(value, type name such as 'REG_EXPAND_SZ') or None when the value is absent. Values are returned raw:
        REG_EXPAND_SZ is *not* expanded (expansion happens in pure code so it replays)."""

    def list_registry_values(self, hive: str, key: str) -> dict[str, tuple[object, str]]:
        """Every value of a key, raw, by name."""

    def list_registry_subkeys(self, hive: str, key: str) -> list[str]:
        ...

    def list_dir(self, path: str) -> list[str]:
        ...

    def exists(self, path: str) -> bool:
        ...

    def is_dir(self, path: str) -> bool:
        ...

    def run(self, argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None) -> CommandResult:
        ...


class RealWindowsHost:  # pragma: no cover - Windows only; exercised by hand on Windows (docs/windows.md)
    """The live implementation. WINDOWS-ONLY: winreg exists only there."""

    def __init__(self) -> None:
        import winreg  # noqa: PLC0415 - deliberately lazy: this module must import on Linux

        self._winreg = winreg
        self._hives = {"HKCU": winreg.HKEY_CURRENT_USER, "HKLM": winreg.HKEY_LOCAL_MACHINE}

    def _open(self, hive: str, key: str):
        winreg = self._winreg
        try:
            # KEY_WOW64_64KEY: see the 64-bit view even from a 32-bit Python.
            return winreg.OpenKey(self._hives[hive], key, 0, winreg.KEY_READ | winreg.KEY_WOW64_64KEY)
        except FileNotFoundError:
            raise RegistryKeyMissing(f"{hive}\\{key}") from None

    @staticmethod
    def _plain(value: object) -> object:
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).hex()
        return value

    def read_registry_value(self, hive, key, name):
        with self._open(hive, key) as handle:
            try:
                value, kind = self._winreg.QueryValueEx(handle, name)
            except FileNotFoundError:
                return None
        return self._plain(value), REG_TYPE_NAMES.get(kind, f"REG_TYPE_{kind}")

    def list_registry_values(self, hive, key):
        values = {}
        with self._open(hive, key) as handle:
            index = 0
            while True:
                try:
                    name, value, kind = self._winreg.EnumValue(handle, index)
                except OSError:
                    break
                values[name] = (self._plain(value), REG_TYPE_NAMES.get(kind, f"REG_TYPE_{kind}"))
                index += 1
        return values

    def list_registry_subkeys(self, hive, key):
        names = []
        with self._open(hive, key) as handle:
            index = 0
            while True:
                try:
                    names.append(self._winreg.EnumKey(handle, index))
                except OSError:
                    break
                index += 1
        return names

    def list_dir(self, path):
        return sorted(os.listdir(path))

    def exists(self, path):
        return os.path.exists(path)

    def is_dir(self, path):
        return os.path.isdir(path)

    def run(self, argv, timeout, env=None):
        return runner.run(argv, timeout=timeout, env=env)


def default_host() -> WindowsHost:
    """The host for a live run: the real one on Windows. Elsewhere there is nothing to read."""
    if sys.platform != "win32":
        raise RuntimeError("the Windows probes need a WindowsHost; on this OS pass a fake one (tests)")
    return RealWindowsHost()  # pragma: no cover
