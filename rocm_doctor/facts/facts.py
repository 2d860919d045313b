"""Facts: the observations plus what was parsed from them, keyed by dotted names.

A fact is either present (any JSON-able value) or missing with a reason ("rocminfo not found", "not applicable
on Windows"). Checks declare the fact keys they need; the engine skips a check whose facts are missing and
quotes the reason.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, Optional

from rocm_doctor.facts.keys import PLATFORM_OS, PYTHON_TARGET, RUN_ENV
from rocm_doctor.facts.observations import Observations
from rocm_doctor.facts.tracked_env import ReadTracking

_ABSENT = object()


def target_python(facts: Optional["Facts"], default: Optional[str] = None) -> str:
    """The interpreter whose torch is diagnosed (fact python.target); else `default`, else this interpreter."""
    target = facts.get(PYTHON_TARGET) if facts is not None else None
    if isinstance(target, dict) and target.get("python"):
        return str(target["python"])
    return sys.executable if default is None else default


class Facts:
    def __init__(self, observations: Observations) -> None:
        self.observations = observations
        self._values: dict[str, Any] = {}
        self._missing: dict[str, str] = {}
        self.interpreter_errors: dict[str, str] = {}
        self._judged_from: Any = None  # the run.env environment _judged tracks reads of
        self._judged: Any = None

    def set(self, key: str, value: Any) -> None:
        self._values[key] = value
        self._missing.pop(key, None)

    def set_missing(self, key: str, reason: str) -> None:
        if key not in self._values:
            self._missing[key] = reason

    def set_read(self, readers, observations, platforms: tuple[str, ...]) -> None:
        """Each (key, read) of `readers`, where read(observations) gives (value, why it is missing): the value is
        set, or the key is missing with why; on another platform than `platforms` every key is missing."""
        for key, read in readers:
            if self.os not in platforms:
                self.set_missing(key, f"not collected on {self.os}")
                continue
            value, why = read(observations)
            if value is None:
                self.set_missing(key, why)
            else:
                self.set(key, value)

    def has(self, key: str) -> bool:
        return key in self._values

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def __getitem__(self, key: str) -> Any:
        value = self._values.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(f"{key}: {self.why_missing(key)}")
        return value

    def why_missing(self, key: str) -> str:
        return self._missing.get(key, "not collected")

    def keys(self) -> Iterator[str]:
        return iter(sorted(self._values))

    def values_dict(self) -> dict[str, Any]:
        return dict(sorted(self._values.items()))

    def missing_dict(self) -> dict[str, str]:
        return dict(sorted(self._missing.items()))

    @property
    def env(self) -> dict[str, str]:
        """The environment the checks judge: the shell's, or with --unit / --kernel the one the service or kernel
        runs in (fact run.env), which then records the variables read from it."""
        run = self._values.get(RUN_ENV)
        judged = run.get("env") if isinstance(run, dict) else None
        if not isinstance(judged, dict):
            return self.observations.env
        if self._judged_from is not judged:
            self._judged_from, self._judged = judged, ReadTracking(judged)
        return self._judged

    @property
    def shell_env(self) -> dict[str, str]:
        """The environment of the shell the doctor runs in, whatever environment the checks judge."""
        return self.observations.env

    @property
    def os(self) -> str:
        """The platform family checks branch on: linux, windows, wsl or macos."""
        return self.get(PLATFORM_OS, "linux")
