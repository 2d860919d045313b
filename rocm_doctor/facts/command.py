"""What happened when an external command ran: the record a probe keeps and a snapshot stores.

An observation, not a way to run anything (that is rocm_doctor.engine.runner), so that facts and snapshots can hold
command results without depending on the engine.
"""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass
from typing import Mapping, Optional


@dataclass
class CommandResult:
    """What happened when a command ran (or could not be started)."""

    argv: list[str]
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    timed_out: bool = False
    error: Optional[str] = None  # why it could not start, e.g. "not found"
    stdout_truncated_bytes: int = 0
    stderr_truncated_bytes: int = 0
    invalid_utf8: bool = False
    timeout_s: Optional[float] = None
    kept_tail: bool = False  # output past the cap was dropped from the start (the oldest lines), not the end
    environment: Optional[str] = None  # "run.env": ran in the service's or kernel's environment; None: the shell's

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.returncode == 0

    @property
    def signal(self) -> Optional[int]:
        """The signal that ended the process on POSIX (negative return codes), else None."""
        if self.returncode is not None and self.returncode < 0:
            return -self.returncode
        return None

    @property
    def truncated(self) -> bool:
        return bool(self.stdout_truncated_bytes or self.stderr_truncated_bytes)

    def describe(self) -> str:
        """One line saying how the command ended, for evidence."""
        cmd = " ".join(self.argv)
        if self.error:
            return f"`{cmd}` could not run: {self.error}"
        if self.timed_out:
            return f"`{cmd}` did not finish within {self.timeout_s:g} s and was killed"
        if self.signal:
            return f"`{cmd}` was killed by signal {signal_name(self.signal)}"
        return f"`{cmd}` exited with code {self.returncode} after {self.duration_s:.2f} s"

    def to_dict(self) -> dict:
        """Every field, but `kept_tail` and `environment` only when set: a plain command's record keeps the shape
        snapshots have always had."""
        out = asdict(self)
        for name in ("kept_tail", "environment"):
            if not out[name]:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "CommandResult":
        """Rebuild a recorded result; a field of the wrong type raises TypeError (a malformed snapshot)."""
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["argv"] = [str(a) for a in data["argv"]]
        for name, types in _FIELD_TYPES.items():
            if name in values and not isinstance(values[name], types):
                raise TypeError(f"{name} is {type(values[name]).__name__}")
        return cls(**values)


_FIELD_TYPES = {
    "returncode": (int, type(None)),
    "stdout": str,
    "stderr": str,
    "duration_s": (int, float),
    "timed_out": bool,
    "error": (str, type(None)),
    "stdout_truncated_bytes": int,
    "stderr_truncated_bytes": int,
    "invalid_utf8": bool,
    "timeout_s": (int, float, type(None)),
    "kept_tail": bool,
    "environment": (str, type(None)),
}


def signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} ({number})"
    except ValueError:
        return str(number)
