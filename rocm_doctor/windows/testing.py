"""A fake WindowsHost for tests and for building replayable snapshots on Linux.

The file system is a real folder: `C:\\Program Files\\AMD` is `<root>/C/Program Files/AMD`, looked up
case-insensitively like Windows. The registry is a dict, commands are canned CommandResults (or callables).
"""

from __future__ import annotations

import ntpath
import os
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, Union

from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.windows.host import RegistryKeyMissing

Canned = Union[CommandResult, Callable[[list], CommandResult]]


class FakeWindowsHost:
    def __init__(self, root: Union[str, Path]) -> None:
        self.root = Path(root)
        self.registry: dict[tuple[str, str], dict[str, tuple[object, str]]] = {}
        self.commands: dict[str, Canned] = {}
        self.calls: list[list[str]] = []

    # Building the fake machine ---------------------------------------------------------------------------------
    def local(self, path: str) -> Optional[Path]:
        """The folder under root that stands for a Windows path (case-insensitive), or where it would be."""
        drive, rest = ntpath.splitdrive(path.replace("/", "\\"))
        if not drive or not drive.endswith(":"):
            return None
        current = self.root / drive[0].upper()
        for part in [p for p in rest.split("\\") if p and p != "."]:
            if part == "..":
                current = current.parent
                continue
            match = None
            if current.is_dir():
                for name in os.listdir(current):
                    if name.lower() == part.lower():
                        match = name
                        break
            current = current / (match or part)
        return current

    def add_dir(self, path: str) -> "FakeWindowsHost":
        self.local(path).mkdir(parents=True, exist_ok=True)
        return self

    def add_file(self, path: str, content: str = "") -> "FakeWindowsHost":
        target = self.local(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return self

    def set_value(self, hive: str, key: str, name: str, value: object, kind: str = "REG_SZ") -> "FakeWindowsHost":
        self.registry.setdefault((hive, key.lower()), {})[name] = (value, kind)
        return self

    def add_key(self, hive: str, key: str) -> "FakeWindowsHost":
        self.registry.setdefault((hive, key.lower()), {})
        return self

    def on(self, executable: str, result: Canned) -> "FakeWindowsHost":
        """Answer commands whose argv[0] ends with this name (case-insensitive), e.g. 'vswhere.exe'."""
        self.commands[executable.lower()] = result
        return self

    # WindowsHost ------------------------------------------------------------------------------------------------
    def _key(self, hive: str, key: str) -> dict:
        found = self.registry.get((hive, key.lower()))
        if found is None:
            raise RegistryKeyMissing(f"{hive}\\{key}")
        return found

    def read_registry_value(self, hive, key, name):
        values = self._key(hive, key)
        for existing, value in values.items():
            if existing.lower() == name.lower():
                return value
        return None

    def list_registry_values(self, hive, key):
        return dict(self._key(hive, key))

    def list_registry_subkeys(self, hive, key):
        prefix = key.lower().rstrip("\\") + "\\"
        if (hive, key.lower()) not in self.registry and not any(
            h == hive and k.startswith(prefix) for h, k in self.registry
        ):
            raise RegistryKeyMissing(f"{hive}\\{key}")
        names = []
        for h, k in self.registry:
            if h == hive and k.startswith(prefix):
                child = k[len(prefix):].split("\\", 1)[0]
                if child not in names:
                    names.append(child)
        return sorted(names)

    def list_dir(self, path):
        local = self.local(path)
        if local is None or not local.exists():
            raise FileNotFoundError(path)
        if not local.is_dir():
            raise NotADirectoryError(path)
        return sorted(os.listdir(local))

    def exists(self, path):
        local = self.local(path)
        return bool(local and local.exists())

    def is_dir(self, path):
        local = self.local(path)
        return bool(local and local.is_dir())

    def run(self, argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None) -> CommandResult:
        argv = [str(a) for a in argv]
        self.calls.append(argv)
        exe = ntpath.basename(argv[0]).lower() if argv else ""
        canned = self.commands.get(exe)
        if canned is None:
            for name, value in self.commands.items():
                if argv and argv[0].lower().endswith(name):
                    canned = value
                    break
        if canned is None:
            return CommandResult(argv=argv, error="not found", timeout_s=timeout)
        result = canned(argv) if callable(canned) else canned
        return CommandResult(**{**result.to_dict(), "argv": argv, "timeout_s": timeout})


def ok(stdout: str = "", stderr: str = "", returncode: int = 0) -> CommandResult:
    return CommandResult(argv=[], returncode=returncode, stdout=stdout, stderr=stderr, duration_s=0.05)
