"""What a probe gets: a Recorder that runs commands and reads files into the Observations, and the context."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

from rocm_doctor.engine import runner
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.observations import FileRecord, Observations

FILE_CAP = 1_000_000


@dataclass
class ProbeContext:
    """Options of this run that probes need."""

    python: str
    python_reason: str
    platform_os: str  # linux, windows, wsl, macos
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    command_timeout_s: float = 10.0
    torch_timeout_s: float = 60.0
    online: bool = False  # probes that touch the network (probes/online.py) run only when this is set


class Recorder:
    """The only door from probes to the machine. Everything seen is recorded, success or failure."""

    def __init__(self, observations: Observations, context: ProbeContext) -> None:
        self.observations = observations
        self.context = context

    def command(
        self,
        key: str,
        argv: Sequence[str],
        timeout: Optional[float] = None,
        env: Optional[Mapping[str, str]] = None,
    ) -> CommandResult:
        result = runner.run(argv, timeout=timeout or self.context.command_timeout_s, env=env)
        self.observations.add_command(key, result)
        return result

    def read_file(self, path: str, cap: int = FILE_CAP) -> FileRecord:
        record = FileRecord(path=str(path))
        try:
            with open(path, "rb") as handle:
                raw = handle.read(cap + 1)
            record.exists = True
            record.truncated = len(raw) > cap
            record.content = raw[:cap].decode("utf-8", errors="replace")
        except FileNotFoundError:
            record.error = "not found"
        except IsADirectoryError:
            record.exists = True
            record.error = "is a directory"
        except PermissionError:
            record.exists = True
            record.error = "permission denied"
        except OSError as exc:
            record.exists = Path(path).exists()
            record.error = f"{type(exc).__name__}: {exc.strerror or exc}"
        self.observations.add_file(record)
        return record

    def list_dir(self, path: str) -> FileRecord:
        record = FileRecord(path=str(path))
        try:
            record.entries = sorted(os.listdir(path))
            record.exists = True
        except FileNotFoundError:
            record.error = "not found"
        except NotADirectoryError:
            record.exists = True
            record.error = "not a directory"
        except PermissionError:
            record.exists = True
            record.error = "permission denied"
        except OSError as exc:
            record.error = f"{type(exc).__name__}: {exc.strerror or exc}"
        self.observations.add_file(record)
        return record

    def put(self, key: str, value) -> None:
        self.observations.add_probe(key, value)
