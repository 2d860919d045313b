"""Records every answer of a WindowsHost into the Observations, through the probe's Recorder.

What lands in a snapshot (docs/windows.md):
- folders listed in full and existence checks: `files` records (FileRecord), like `Recorder.list_dir`;
- registry reads: `probes["windows.registry.<probe>"]` = {"HKCU\\Environment": {"values": {name: {"value",
  "type"}}, "complete": bool} | {"subkeys": [...]} | {"error": "..."}};
- filtered folder scans (System32, PATH folders: only the file names that matter are kept):
  `probes["windows.dir_scan.<probe>"]` = {"patterns": [...], "dirs": {path: {"exists", "matches", "error"}}};
- commands: `commands[key]` (CommandResult), as `Recorder.command`.
"""

from __future__ import annotations

import fnmatch
import threading
from typing import Mapping, Optional, Sequence

from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.keys import DIR_SCAN_PREFIX, REGISTRY_PREFIX
from rocm_doctor.facts.observations import FileRecord
from rocm_doctor.probes._base import Recorder, os_error_text, record_os_error
from rocm_doctor.windows.host import RegistryKeyMissing, WindowsHost



def _error_text(exc: BaseException) -> str:
    return "not found" if isinstance(exc, RegistryKeyMissing) else os_error_text(exc)


class WindowsRecorder:
    """A probe's view of Windows: ask the host, record the answer, return it. Never raises for the machine's
    failures (missing keys, folders, commands); they are recorded and returned as empty answers."""

    def __init__(self, recorder: Recorder, host: WindowsHost, probe: str) -> None:
        self.recorder = recorder
        self.host = host
        self.probe = probe
        self._lock = threading.Lock()
        self._registry: dict[str, dict] = {}
        self._scan: dict[str, dict] = {}
        self._patterns: list[str] = []

    @property
    def env(self) -> Mapping[str, str]:
        return self.recorder.context.env

    # Registry -----------------------------------------------------------------------------------------------
    def _reg_entry(self, hive: str, key: str) -> dict:
        return self._registry.setdefault(f"{hive}\\{key}", {})

    def _flush_registry(self) -> None:
        self.recorder.put(REGISTRY_PREFIX + self.probe, self._registry)

    def registry_value(self, hive: str, key: str, name: str) -> Optional[tuple[object, str]]:
        with self._lock:
            entry = self._reg_entry(hive, key)
            try:
                found = self.host.read_registry_value(hive, key, name)
            except Exception as exc:  # noqa: BLE001 - the machine's failure is an observation
                entry.setdefault("error", _error_text(exc))
                found = None
            else:
                values = entry.setdefault("values", {})
                entry.setdefault("complete", False)
                if found is None:
                    values[name] = None
                else:
                    values[name] = {"value": found[0], "type": found[1]}
            self._flush_registry()
        return found

    def registry_values(self, hive: str, key: str) -> dict[str, tuple[object, str]]:
        with self._lock:
            entry = self._reg_entry(hive, key)
            try:
                values = self.host.list_registry_values(hive, key)
            except Exception as exc:  # noqa: BLE001
                entry["error"] = _error_text(exc)
                values = {}
            else:
                entry["values"] = {name: {"value": v, "type": t} for name, (v, t) in sorted(values.items())}
                entry["complete"] = True
            self._flush_registry()
        return values

    def registry_subkeys(self, hive: str, key: str) -> list[str]:
        with self._lock:
            entry = self._reg_entry(hive, key)
            try:
                names = list(self.host.list_registry_subkeys(hive, key))
            except Exception as exc:  # noqa: BLE001
                entry["error"] = _error_text(exc)
                names = []
            else:
                entry["subkeys"] = names
            self._flush_registry()
        return names

    # Files ----------------------------------------------------------------------------------------------------
    def list_dir(self, path: str) -> FileRecord:
        """A full listing, recorded as a FileRecord (like Recorder.list_dir)."""
        record = FileRecord(path=str(path))
        try:
            record.entries = sorted(self.host.list_dir(path))
            record.exists = True
        except Exception as exc:  # noqa: BLE001
            record_os_error(record, exc, (NotADirectoryError, PermissionError), text=_error_text(exc))
        self.recorder.observations.add_file(record)
        return record

    def exists(self, path: str) -> bool:
        """Whether a path exists; recorded as a FileRecord unless that path is already recorded."""
        try:
            found = bool(self.host.exists(path))
            error = None if found else "not found"
        except Exception as exc:  # noqa: BLE001
            found, error = False, _error_text(exc)
        if self.recorder.observations.file(str(path)) is None:
            self.recorder.observations.add_file(FileRecord(path=str(path), exists=found, error=error))
        return found

    def scan_dir(self, path: str, patterns: Sequence[str]) -> list[str]:
        """List a folder but keep only names matching the patterns (fnmatch, case-insensitive). For big folders
        (System32, PATH folders) where only a few names matter; recorded under windows.dir_scan.<probe>."""
        lowered = [p.lower() for p in patterns]
        item: dict = {}
        try:
            names = self.host.list_dir(path)
            item["exists"] = True
            item["matches"] = sorted(n for n in names if any(fnmatch.fnmatch(n.lower(), p) for p in lowered))
        except Exception as exc:  # noqa: BLE001
            item["exists"] = isinstance(exc, (PermissionError, NotADirectoryError))
            item["error"] = _error_text(exc)
            item["matches"] = []
        with self._lock:
            for pattern in patterns:
                if pattern not in self._patterns:
                    self._patterns.append(pattern)
            self._scan[str(path)] = item
            self.recorder.put(DIR_SCAN_PREFIX + self.probe, {"patterns": list(self._patterns), "dirs": self._scan})
        return list(item["matches"])

    # Commands -------------------------------------------------------------------------------------------------
    def command(
        self, key: str, argv: Sequence[str], timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None
    ) -> CommandResult:
        try:
            result = self.host.run(list(argv), timeout or self.recorder.context.command_timeout_s, env)
        except Exception as exc:  # noqa: BLE001 - a fake or broken host must still leave a record
            result = CommandResult(argv=[str(a) for a in argv], error=f"{type(exc).__name__}: {exc}")
        self.recorder.observations.add_command(key, result)
        return result
