"""A test case for one check as data: the machine going in (OS, environment, raw observations, fact overrides),
the findings expected out, and, for steps that cannot be simulated, what the machine looks like after them.

Cases are plain dicts or JSON files so that a plugin author writes them the way the built-ins are written, and a
typo in a key fails the test instead of being ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Union

from rocm_doctor.engine import steps as S
from rocm_doctor.engine.remedy import KINDS
from rocm_doctor.engine.model import Platform, Status
from rocm_doctor.facts.observations import Observations

# Steps the harness applies to the case's environment; the others need the case's `after`.
SIMULATED_KINDS = tuple(cls.kind for cls in (S.SetEnv, S.UnsetEnv, S.PathPrepend, S.PathRemove, S.UnitEnv,
                                             S.KernelEnv))
DESCRIBED_KINDS = tuple(kind for kind in KINDS if kind not in SIMULATED_KINDS)
_OBSERVATION_KEYS = {f.name for f in fields(Observations) if not f.name.startswith("_")} - {"env"}


class CaseError(ValueError):
    """The case itself is wrong or incomplete (not the check under test)."""


@dataclass
class Case:
    """One check run on one machine.

    `facts` are set after interpretation (`None` makes a fact missing); `text` must appear in some finding's
    title, message, evidence, remediation, steps or alternatives; `problems` names the findings whose steps a fix
    case applies (default: every fail/warn finding); `alternative` picks, by a part of its title, the alternative
    to apply instead of the preferred steps; `after` maps a step kind that cannot be simulated to the fact
    overrides that hold once it was carried out.
    """

    check: str
    expect: dict[str, str]
    os: str = "linux"
    env: dict[str, str] = field(default_factory=dict)
    observations: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    alternative: str = ""
    after: dict[str, dict[str, Any]] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.name or self.check
        if isinstance(self.text, str):
            self.text = [self.text]
        where = f"case {self.name!r}"
        if self.os not in {p.value for p in Platform}:
            raise CaseError(f"{where}: os must be one of {', '.join(p.value for p in Platform)}, not {self.os!r}")
        bad = {k: v for k, v in self.expect.items() if v not in {s.value for s in Status}}
        if bad:
            raise CaseError(f"{where}: unknown status in expect: {bad}")
        extra = set(self.observations) - _OBSERVATION_KEYS
        if extra:
            raise CaseError(f"{where}: observations take {', '.join(sorted(_OBSERVATION_KEYS))}, not "
                            f"{', '.join(sorted(extra))} (the environment is the case's env)")
        unknown = set(self.after) - set(DESCRIBED_KINDS)
        if unknown:
            raise CaseError(f"{where}: after is for {', '.join(DESCRIBED_KINDS)}; {', '.join(sorted(unknown))} "
                            "steps are applied to the environment")

    @classmethod
    def from_dict(cls, raw: dict[str, Any], **defaults: Any) -> "Case":
        """A case from JSON-like data; keys missing from `raw` come from `defaults` (e.g. the file's check)."""
        known = {f.name for f in fields(cls)}
        unknown = set(raw) - known
        if unknown:
            raise CaseError(f"case {raw.get('name') or defaults.get('name')!r}: unknown key(s) "
                            f"{', '.join(sorted(unknown))}; a case takes {', '.join(sorted(known))}")
        values = {**defaults, **raw}
        if "check" not in values or "expect" not in values:
            raise CaseError(f"case {values.get('name')!r}: needs `check` and `expect`")
        return cls(**values)


def load_cases(path: Union[str, Path]) -> list[Case]:
    """The cases of a JSON file `{"check": ID, "cases": {NAME: CASE, ...}}`; `check` is each case's default."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("cases"), dict):
        raise CaseError(f"{path}: expected an object with a `cases` object of name -> case")
    defaults = {"check": data["check"]} if "check" in data else {}
    return [Case.from_dict(raw, **defaults, name=name) for name, raw in data["cases"].items()]
