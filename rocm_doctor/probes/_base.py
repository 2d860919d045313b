"""What a probe gets: a Recorder that runs commands and reads files into the Observations, and the context."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from rocm_doctor.engine import runner
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.facts import RUN_ENV
from rocm_doctor.facts.observations import FileRecord, Observations

FILE_CAP = 1_000_000

# A failed read is recorded in these words; any other failure as "<type>: <message>".
_OS_ERROR_WORDS = (
    (FileNotFoundError, "not found"),
    (PermissionError, "permission denied"),
    (NotADirectoryError, "not a directory"),
    (IsADirectoryError, "is a directory"),
)


def os_error_text(exc: BaseException) -> str:
    """The error text a record keeps for a failed read of the machine."""
    for kind, words in _OS_ERROR_WORDS:
        if isinstance(exc, kind):
            return words
    return f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"


def record_os_error(
    record: FileRecord,
    exc: BaseException,
    exists_when: tuple[type[BaseException], ...],
    otherwise_exists: Optional[Callable[[], bool]] = None,
    text: Optional[str] = None,
) -> FileRecord:
    """Turn a failed read into the record's error (`text`, else os_error_text). `exists_when`: the failures that
    show the path is there (no permission, wrong kind); for one that says nothing either way (not "not found"),
    `otherwise_exists()`."""
    record.error = text or os_error_text(exc)
    if isinstance(exc, exists_when):
        record.exists = True
    elif otherwise_exists is not None and not isinstance(exc, FileNotFoundError):
        record.exists = otherwise_exists()
    return record


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
    run_target: Optional[dict] = None  # --unit / --user-unit / --kernel: {kind, name, scope} (probes/run_env.py)
    python_given: bool = False  # --python was given: a service's or kernel's interpreter does not replace it
    torch_env: Optional[Mapping[str, str]] = None  # the torch probe's environment when not `env` (a service's)
    run_env: Optional[Mapping[str, str]] = None  # the service's or kernel's environment, once read (probes/run_env.py)
    # When the tools' commands must have ended (time.monotonic()): one deadline for the whole observation, so that
    # a command that waits on another's outcome gets what is left, not a timeout of its own. None: no deadline.
    deadline: Optional[float] = None

    def target_env(self) -> Mapping[str, str]:
        """The environment the target interpreter's children run in: a service's or kernel's under --unit or
        --kernel, else this shell's."""
        return self.env if self.torch_env is None else self.torch_env

    def judged_env(self) -> Mapping[str, str]:
        """The environment the checks judge: a service's or kernel's under --unit or --kernel, whatever program it
        starts (ollama is no Python), else this shell's."""
        return self.env if self.run_env is None else self.run_env


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
        keep_tail: bool = False,
    ) -> CommandResult:
        """Run argv and record it under `key`. `keep_tail`: output past the cap is dropped from its start, so a log
        keeps its newest lines (the record says how many bytes were dropped, and from which end)."""
        return self._record(key, self._run(argv, timeout, env, keep_tail))

    def _run(self, argv: Sequence[str], timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
             keep_tail: bool = False, cancel: Optional[threading.Event] = None) -> CommandResult:
        left = self._time_left(timeout)
        if left is None:
            return self._too_late(argv)
        return runner.run(argv, timeout=left, env=env, keep_tail=keep_tail, cancel=cancel)

    def with_fallback(self, first: Callable[[], CommandResult], failed: Callable[[CommandResult], bool], key: str,
                      argv: Sequence[str], env: Optional[Mapping[str, str]] = None, keep_tail: bool = False) -> None:
        """Run `first` and, beside it, the command that replaces it where it fails; that one is recorded under `key`
        only when failed(first's result), and ended early once first has done. Run one after the other, the
        fallback of a hung command would start when the observation's time is up."""
        unneeded, outcome = threading.Event(), {}

        def primary() -> CommandResult:
            result = first()
            outcome["failed"] = failed(result)
            if not outcome["failed"]:
                unneeded.set()
            return result

        _, second = self.side_by_side(primary, lambda: self._run(argv, None, env, keep_tail, unneeded))
        if outcome.get("failed"):
            self._record(key, second)

    def target_command(
        self,
        key: str,
        argv: Sequence[str],
        timeout: Optional[float] = None,
        adapt: Callable[[Mapping[str, str]], Mapping[str, str]] = dict,
    ) -> CommandResult:
        """Run a child of the target interpreter in target_env() (through `adapt`); the record says when that is a
        service's or kernel's environment."""
        return self._run_in(key, argv, adapt(self.context.target_env()), self.context.torch_env is not None,
                            timeout or self.context.command_timeout_s)

    def tool_command(self, key: str, argv: Sequence[str]) -> CommandResult:
        """Run a GPU tool whose output depends on the environment (GPU visibility, HSA_OVERRIDE_GFX_VERSION, HIP's
        paths) in judged_env(), so that what it lists is what the checks compare with that environment; the record
        says when that is a service's or kernel's."""
        left = self._time_left(None)
        if left is None:
            return self._record(key, self._too_late(argv))
        return self._run_in(key, argv, dict(self.context.judged_env()), self.context.run_env is not None, left)

    def _run_in(self, key: str, argv: Sequence[str], env: Mapping[str, str], in_run_env: bool,
                timeout: float) -> CommandResult:
        result = runner.run(argv, timeout=timeout, env=env)
        result.environment = RUN_ENV if in_run_env else None
        return self._record(key, result)

    def _time_left(self, timeout: Optional[float]) -> Optional[float]:
        """A tool's timeout, within the observation's deadline; None when the deadline has passed."""
        timeout = timeout or self.context.command_timeout_s
        if self.context.deadline is None:
            return timeout
        left = round(self.context.deadline - time.monotonic(), 1)
        return min(timeout, left) if left > 0 else None

    def _too_late(self, argv: Sequence[str]) -> CommandResult:
        return CommandResult(argv=[str(a) for a in argv], timeout_s=0.0, error=(
            f"not started: the {self.context.command_timeout_s:g} s the observation gives its tools had passed"))

    def side_by_side(self, *calls: Callable[[], Any]) -> list:
        """Run calls that need nothing from each other (a probe's independent commands) at the same time, so that
        hung tools cost one timeout, not one each; their results in order. The first exception, in order, is raised
        once all have ended."""
        if len(calls) <= 1:
            return [call() for call in calls]
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            futures = [pool.submit(call) for call in calls]
            return [future.result() for future in futures]

    def _record(self, key: str, result: CommandResult) -> CommandResult:
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
        except OSError as exc:
            record_os_error(record, exc, (IsADirectoryError, PermissionError), lambda: Path(path).exists())
        self.observations.add_file(record)
        return record

    def list_dir(self, path: str) -> FileRecord:
        record = FileRecord(path=str(path))
        try:
            record.entries = sorted(os.listdir(path))
            record.exists = True
        except OSError as exc:
            record_os_error(record, exc, (NotADirectoryError, PermissionError))
        self.observations.add_file(record)
        return record

    def put(self, key: str, value) -> None:
        self.observations.add_probe(key, value)
