"""The vocabulary every check and reporter shares: statuses, severities, findings, and the Check base class."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Optional, Union

from rocm_doctor.engine.remedy import alternatives_from_raw, steps_from_raw

if TYPE_CHECKING:
    from rocm_doctor.facts.facts import Facts


class Status(str, enum.Enum):
    """The closed set of outcomes a finding can have."""

    OK = "ok"
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """Higher is worse; used to sort findings and apply --fail-on."""
        return _STATUS_RANK[self]


_STATUS_RANK = {
    Status.SKIP: 0,
    Status.OK: 1,
    Status.INFO: 2,
    Status.WARN: 3,
    Status.ERROR: 4,
    Status.FAIL: 5,
}


class Severity(str, enum.Enum):
    """How much a check's problem matters when it is found; orders findings of the same status."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return list(Severity).index(self)


class Platform(str, enum.Enum):
    LINUX = "linux"
    WINDOWS = "windows"
    WSL = "wsl"
    MACOS = "macos"


ALL_PLATFORMS = tuple(Platform)


@dataclass
class Finding:
    """One verdict: what a check concluded, the evidence, and what to do."""

    id: str
    check: str
    status: Status
    title: str
    message: str
    evidence: list[str] = field(default_factory=list)
    remediation: list[str] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    area: str = "general"
    severity: Severity = Severity.MEDIUM
    data: dict[str, Any] = field(default_factory=dict)
    fix: list = field(default_factory=list)  # rocm_doctor.engine.remedy.Step objects: the preferred remedy as data
    alternatives: list = field(default_factory=list)  # rocm_doctor.engine.remedy.Alternative: other paths, labelled
    # Set by rocm_doctor.engine.relations after every check ran: how this finding relates to the others.
    caused_by: list[str] = field(default_factory=list)  # ids of findings that explain this one
    explains: list[str] = field(default_factory=list)  # ids of findings this one explains
    confirmed_by: list[dict[str, Any]] = field(default_factory=list)  # evidence that showed it: {kind, detail, ...}
    refuted_by: list[dict[str, Any]] = field(default_factory=list)  # evidence that showed it did not happen
    # Set by the check: this problem is that the input could not settle anything (a paste too thin to judge), so the
    # verdict says "not enough to tell" instead of one about the machine.
    undecided: bool = False

    @property
    def is_problem(self) -> bool:
        """A finding that says something is wrong (or could not be judged because the doctor failed)."""
        return self.status in PROBLEMS

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "check": self.check,
            "status": self.status.value,
            "severity": self.severity.value,
            "area": self.area,
            "title": self.title,
            "message": self.message,
            "evidence": list(self.evidence),
            "remediation": list(self.remediation),
            "docs": list(self.docs),
            "data": self.data,
            "fix": [step.to_dict() for step in self.fix],
            "alternatives": [alt.to_dict() for alt in self.alternatives],
            "caused_by": list(self.caused_by),
            "explains": list(self.explains),
            "confirmed_by": [dict(item) for item in self.confirmed_by],
            "refuted_by": [dict(item) for item in self.refuted_by],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Finding":
        return cls(
            id=raw["id"],
            check=raw["check"],
            status=Status(raw["status"]),
            title=raw.get("title", ""),
            message=raw.get("message", ""),
            evidence=list(raw.get("evidence", [])),
            remediation=list(raw.get("remediation", [])),
            docs=list(raw.get("docs", [])),
            area=raw.get("area", "general"),
            severity=Severity(raw.get("severity", "medium")),
            data=dict(raw.get("data", {})),
            fix=steps_from_raw(raw.get("fix", [])),
            alternatives=alternatives_from_raw(raw.get("alternatives", [])),
            caused_by=[str(i) for i in _list(raw.get("caused_by"))],
            explains=[str(i) for i in _list(raw.get("explains"))],
            confirmed_by=[dict(i) for i in _list(raw.get("confirmed_by")) if isinstance(i, dict)],
            refuted_by=[dict(i) for i in _list(raw.get("refuted_by")) if isinstance(i, dict)],
        )


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


PROBLEMS = (Status.FAIL, Status.WARN, Status.ERROR)


Outcome = Union[Finding, Iterable[Finding], None]


class Check:
    """A rule over the Facts. Subclasses set the metadata and implement `run`.

    `run` must be a pure function of the facts: no subprocess, file or network access. It returns one Finding, an
    iterable of them, or None (meaning: nothing to report, which the engine records as ok).
    """

    id: ClassVar[str]
    title: ClassVar[str]
    area: ClassVar[str] = "general"
    severity: ClassVar[Severity] = Severity.MEDIUM
    platforms: ClassVar[tuple[Platform, ...]] = ALL_PLATFORMS
    requires: ClassVar[tuple[str, ...]] = ()
    docs: ClassVar[tuple[str, ...]] = ()
    # Findings of other checks that a problem found by this one explains: check ids (fnmatch patterns allowed) or
    # rocm_doctor.engine.relations.Explains edges with a condition. Read by the relations pass, never by `run`.
    explains: ClassVar[tuple[Any, ...]] = ()
    # True for a check whose problem means the input settles nothing (then the verdict is "Not enough to tell").
    undecided: ClassVar[bool] = False

    def run(self, facts: "Facts") -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError

    def evidence_on(self, facts: "Facts") -> dict[str, dict[str, Any]]:
        """What this check's facts (a GPU stage's results) show about other checks' findings: {check id or finding
        id: {"confirmed" | "refuted": True, "kind", "detail", ...}}. The pipeline applies it after the stage whose
        facts the check requires (engine/pipeline.py); like `run`, a pure function of the facts."""
        return {}

    def shown_with_stage(self, facts: "Facts") -> dict[str, Any]:
        """What the stage whose facts this check requires shows of the check's judgement beyond its findings (the
        bench's every figure with its verdict), merged into the stage's summary by the pipeline: the renderers read
        the judgement there, and no stage reaches for a check. Like `run`, a pure function of the facts."""
        return {}

    # Helpers so checks read as verdicts.
    def finding(
        self,
        status: Status,
        message: str,
        *,
        subject: Optional[str] = None,
        evidence: Iterable[str] = (),
        remediation: Iterable[str] = (),
        title: Optional[str] = None,
        data: Optional[dict[str, Any]] = None,
        severity: Optional[Severity] = None,
        fix: Iterable[Any] = (),
        alternatives: Iterable[Any] = (),
    ) -> Finding:
        return Finding(
            id=f"{self.id}:{subject}" if subject else self.id,
            check=self.id,
            status=status,
            title=title or self.title,
            message=message,
            evidence=list(evidence),
            remediation=list(remediation),
            docs=list(self.docs),
            area=self.area,
            severity=severity or self.severity,
            data=data or {},
            fix=list(fix),
            alternatives=list(alternatives),
            undecided=status in PROBLEMS and self.undecided,
        )

    @staticmethod
    def with_fix(finding: Finding, *steps: Any) -> Finding:
        """Attach fix steps (built with rocm_doctor.engine.remedy constructors) to a finding; returns the finding."""
        finding.fix.extend(steps)
        return finding

    def ok(self, message: str, **kw: Any) -> Finding:
        return self.finding(Status.OK, message, **kw)

    def info(self, message: str, **kw: Any) -> Finding:
        return self.finding(Status.INFO, message, **kw)

    def warn(self, message: str, **kw: Any) -> Finding:
        return self.finding(Status.WARN, message, **kw)

    def fail(self, message: str, **kw: Any) -> Finding:
        return self.finding(Status.FAIL, message, **kw)

    def skip(self, message: str, **kw: Any) -> Finding:
        return self.finding(Status.SKIP, message, **kw)
