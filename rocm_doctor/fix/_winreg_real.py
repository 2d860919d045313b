"""WINDOWS ONLY, kept thin on purpose: HKCU\\Environment through winreg, and the WM_SETTINGCHANGE broadcast.

Imported only by `winenv.default_registry()` on Windows; every decision lives in the platform-neutral code that the
tests exercise with `winenv.MemoryRegistry`.
"""

# pragma: no cover - this module cannot run on the Linux test machines

from __future__ import annotations

import ctypes
import winreg  # type: ignore[import-not-found]
from typing import Optional

from rocm_doctor.fix.regvalue import RegValue

_KEY = "Environment"
HWND_BROADCAST = 0xFFFF
WM_SETTINGCHANGE = 0x001A
SMTO_ABORTIFHUNG = 0x0002


class WinRegistry:  # pragma: no cover
    def get(self, name: str) -> Optional[RegValue]:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, _KEY, 0, winreg.KEY_READ) as key:
            try:
                value, kind = winreg.QueryValueEx(key, name)  # REG_EXPAND_SZ comes back unexpanded
            except FileNotFoundError:
                return None
        return RegValue(str(value), int(kind))

    def set(self, name: str, value: RegValue) -> None:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, _KEY, 0, winreg.KEY_SET_VALUE) as key:
            winreg.SetValueEx(key, name, 0, value.type, value.value)

    def delete(self, name: str) -> None:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, _KEY, 0, winreg.KEY_SET_VALUE) as key:
            try:
                winreg.DeleteValue(key, name)
            except FileNotFoundError:
                pass

    def broadcast(self) -> None:
        """Tell Explorer and new processes that the environment changed (what the System dialog does)."""
        result = ctypes.c_ulong()
        ctypes.windll.user32.SendMessageTimeoutW(
            HWND_BROADCAST, WM_SETTINGCHANGE, 0, "Environment", SMTO_ABORTIFHUNG, 5000, ctypes.byref(result)
        )
