"""Raw observations of a machine: exactly what the probes saw, before any parsing.

A snapshot is these observations serialized. Parsing happens again on load, so an old snapshot is re-read by
newer parsers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Optional

from rocm_doctor.facts.command import CommandResult


@dataclass
class FileRecord:
    """A file or folder the probes looked at: its text, its entries, or why it could not be read."""

    path: str
    exists: bool = False
    content: Optional[str] = None
    entries: Optional[list[str]] = None
    error: Optional[str] = None
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "exists": self.exists}
        for key in ("content", "entries", "error"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.truncated:
            out["truncated"] = True
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "FileRecord":
        return cls(
            path=str(raw["path"]),
            exists=bool(raw.get("exists", False)),
            content=raw.get("content"),
            entries=raw.get("entries"),
            error=raw.get("error"),
            truncated=bool(raw.get("truncated", False)),
        )


@dataclass
class Observations:
    """Everything collected from one machine. Thread-safe to fill from concurrent probes."""

    platform: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    target: dict[str, Any] = field(default_factory=dict)
    commands: dict[str, CommandResult] = field(default_factory=dict)
    files: dict[str, FileRecord] = field(default_factory=dict)
    probes: dict[str, Any] = field(default_factory=dict)
    probe_errors: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add_command(self, key: str, result: CommandResult) -> None:
        with self._lock:
            self.commands[key] = result

    def add_file(self, record: FileRecord) -> None:
        with self._lock:
            self.files[record.path] = record

    def add_probe(self, key: str, value: Any) -> None:
        with self._lock:
            self.probes[key] = value

    def add_probe_error(self, probe: str, text: str) -> None:
        with self._lock:
            self.probe_errors[probe] = text

    def command(self, key: str) -> Optional[CommandResult]:
        return self.commands.get(key)

    def file(self, path: str) -> Optional[FileRecord]:
        return self.files.get(path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "env": self.env,
            "target": self.target,
            "commands": {k: v.to_dict() for k, v in sorted(self.commands.items())},
            "files": {k: v.to_dict() for k, v in sorted(self.files.items())},
            "probes": self.probes,
            "probe_errors": self.probe_errors,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Observations":
        return cls(
            platform=dict(raw.get("platform", {})),
            env={str(k): str(v) for k, v in dict(raw.get("env", {})).items()},
            target=dict(raw.get("target", {})),
            commands={k: CommandResult.from_dict(v) for k, v in dict(raw.get("commands", {})).items()},
            files={k: FileRecord.from_dict(v) for k, v in dict(raw.get("files", {})).items()},
            probes=dict(raw.get("probes", {})),
            probe_errors={str(k): str(v) for k, v in dict(raw.get("probe_errors", {})).items()},
        )
