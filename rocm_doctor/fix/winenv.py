"""The seam to the Windows per-user environment (HKCU\\Environment).

`fix` talks to an `EnvRegistry`: read a value with its type, write it with a type, delete it, broadcast
WM_SETTINGCHANGE. The real implementation (`_winreg_real`) is imported only on Windows and kept thin; tests and
previews of Windows snapshots use `MemoryRegistry`. Types are preserved: a REG_EXPAND_SZ Path stays expandable
(`setx` would flatten it and truncate it at 1024 characters, so it is never used).
"""

from __future__ import annotations

import sys
from typing import Optional, Protocol

from rocm_doctor.fix.regvalue import RegValue

LOCATION = r"HKCU\Environment"


class EnvRegistry(Protocol):
    """HKCU\\Environment. Methods raise PermissionError/OSError on failure; names compare case-insensitively."""

    def get(self, name: str) -> Optional[RegValue]: ...

    def set(self, name: str, value: RegValue) -> None: ...

    def delete(self, name: str) -> None: ...

    def broadcast(self) -> None: ...


class MemoryRegistry:
    """In-memory HKCU\\Environment for tests and previews. `locked=True` makes writes raise PermissionError."""

    def __init__(self, values: Optional[dict[str, RegValue]] = None, locked: bool = False) -> None:
        self.values: dict[str, RegValue] = dict(values or {})
        self.locked = locked
        self.broadcasts = 0

    def _find(self, name: str) -> Optional[str]:
        for existing in self.values:
            if existing.lower() == name.lower():
                return existing
        return None

    def get(self, name: str) -> Optional[RegValue]:
        found = self._find(name)
        return self.values[found] if found else None

    def set(self, name: str, value: RegValue) -> None:
        if self.locked:
            raise PermissionError(13, "Access is denied")
        self.values[self._find(name) or name] = value  # like Windows: an existing name keeps its spelling

    def delete(self, name: str) -> None:
        if self.locked:
            raise PermissionError(13, "Access is denied")
        found = self._find(name)
        if found:
            del self.values[found]

    def broadcast(self) -> None:
        self.broadcasts += 1


def default_registry() -> Optional[EnvRegistry]:
    """The real registry on Windows, else None (user-scope changes then go to rc files)."""
    if sys.platform != "win32":
        return None
    from rocm_doctor.fix import _winreg_real  # pragma: no cover - Windows only

    return _winreg_real.WinRegistry()  # pragma: no cover - Windows only
