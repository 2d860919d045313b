"""Facts: the observations plus what was parsed from them, keyed by dotted names.

A fact is either present (any JSON-able value) or missing with a reason ("rocminfo not found", "not applicable
on Windows"). Checks declare the fact keys they need; the engine skips a check whose facts are missing and
quotes the reason.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, Optional

from rocm_doctor.facts.observations import Observations

_ABSENT = object()


def target_python(facts: Optional["Facts"], default: Optional[str] = None) -> str:
    """The interpreter whose torch is diagnosed (fact python.target); else `default`, else this interpreter."""
    target = facts.get("python.target") if facts is not None else None
    if isinstance(target, dict) and target.get("python"):
        return str(target["python"])
    return sys.executable if default is None else default


class Facts:
    def __init__(self, observations: Observations) -> None:
        self.observations = observations
        self._values: dict[str, Any] = {}
        self._missing: dict[str, str] = {}
        self.interpreter_errors: dict[str, str] = {}

    def set(self, key: str, value: Any) -> None:
        self._values[key] = value
        self._missing.pop(key, None)

    def set_missing(self, key: str, reason: str) -> None:
        if key not in self._values:
            self._missing[key] = reason

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
        return self.observations.env

    @property
    def os(self) -> str:
        """The platform family checks branch on: linux, windows, wsl or macos."""
        return self.get("platform.os", "linux")
