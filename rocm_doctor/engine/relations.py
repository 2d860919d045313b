"""One pass after all checks and stages: which problems explain which.

Three sources of edges, all typed, none rewriting a finding's message:
- `explains` declared on a check class (a check id or fnmatch pattern, optionally with a condition on the two
  findings and the facts);
- error-signature findings (`known-error-signatures`) naming the check that diagnoses their message, and runtime
  status findings naming (`points_to`) the check that judges their usual cause: when that check found a problem,
  the message or status is its symptom and the cause gains it as confirmation;
- GPU evidence, already on the findings as `confirmed_by` / `refuted_by` (set by the stages' judges).
An edge links two problems only (fail, warn or error); a cycle is never closed: the edge that would close it is
dropped, so every problem has one root.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from rocm_doctor.engine.model import Check, Finding

Condition = Callable[[Finding, Finding, object], bool]
SIGNATURE_CHECK = "known-error-signatures"


@dataclass(frozen=True)
class Explains:
    """A problem found by the declaring check explains problems found by `target` when `when` holds."""

    target: str
    when: Optional[Condition] = None


def same_subject(cause: Finding, symptom: Finding, _facts=None) -> bool:
    """Both findings are about the same thing (the part of the id after the check id: a GPU index, a variable)."""
    return _subject(cause) == _subject(symptom)


def same_gpu(cause: Finding, symptom: Finding, _facts=None) -> bool:
    """Both findings are about the same GPU: subjects "0" and "0" or "0-rocblas" (a GPU index, then a part)."""
    return _subject(cause).split("-")[0] == _subject(symptom).split("-")[0]


def when_failing(cause: Finding, _symptom: Finding, _facts=None) -> bool:
    """Only a fail explains: the same check's warnings (an unneeded setting) break nothing else."""
    return cause.status.value == "fail"


def override_missing(_cause: Finding, symptom: Finding, _facts=None) -> bool:
    """The override check's "not set where it is the only way" warning: another view of a missing gfx."""
    return (symptom.data or {}).get("reason") == "override-missing"


def _subject(finding: Finding) -> str:
    return finding.id[len(finding.check) + 1:] if finding.id.startswith(finding.check + ":") else ""


def edges_of(check_cls: type[Check]) -> list[Explains]:
    out = []
    for item in getattr(check_cls, "explains", ()) or ():
        out.append(item if isinstance(item, Explains) else Explains(str(item)))
    return out


def link(findings: list[Finding], checks: Iterable[type[Check]], facts=None) -> list[Finding]:
    """Set `caused_by` / `explains` on the findings (in place) and return them."""
    for finding in findings:
        finding.caused_by, finding.explains = [], []
    problems = [f for f in findings if f.is_problem]
    by_check: dict[str, list[Finding]] = {}
    for finding in problems:
        by_check.setdefault(finding.check, []).append(finding)
    edges = {cls.id: edges_of(cls) for cls in checks}
    for cause in sorted(problems, key=_cause_order):
        for edge in edges.get(cause.check, ()):
            for symptom in problems:
                if symptom is cause or not fnmatch.fnmatchcase(symptom.check, edge.target):
                    continue
                if edge.when is None or _holds(edge.when, cause, symptom, facts):
                    _connect(cause, symptom, findings)
    for symptom in by_check.get(SIGNATURE_CHECK, []):
        pointed = (symptom.data or {}).get("check")
        for cause in by_check.get(str(pointed), []):
            if _connect(cause, symptom, findings):
                _confirm(cause, {"kind": "error-message", "finding": symptom.id,
                                 "detail": symptom.evidence[0] if symptom.evidence else symptom.message})
    for symptom in problems:  # a runtime status names the check that judges its usual cause
        pointed = (symptom.data or {}).get("points_to")
        for cause in by_check.get(str(pointed), []) if pointed else ():
            if _connect(cause, symptom, findings):
                _confirm(cause, {"kind": "runtime-status", "finding": symptom.id, "detail": symptom.message})
    return findings


def _holds(condition: Condition, cause: Finding, symptom: Finding, facts) -> bool:
    try:
        return bool(condition(cause, symptom, facts))
    except Exception:  # a faulty condition must not take the diagnosis down; the edge is simply not drawn
        return False


def _cause_order(finding: Finding):
    return (-finding.status.rank, -finding.severity.rank, finding.id)


def _connect(cause: Finding, symptom: Finding, findings: list[Finding]) -> bool:
    if cause.id in symptom.caused_by or _reaches(symptom, cause, findings):
        return False
    symptom.caused_by.append(cause.id)
    cause.explains.append(symptom.id)
    return True


def _reaches(start: Finding, goal: Finding, findings: list[Finding]) -> bool:
    """Does `start` already explain `goal`, directly or through others?"""
    index = {f.id: f for f in findings}
    stack, seen = list(start.explains), set()
    while stack:
        current = stack.pop()
        if current == goal.id:
            return True
        if current in seen or current not in index:
            continue
        seen.add(current)
        stack.extend(index[current].explains)
    return start.id == goal.id


def _confirm(finding: Finding, evidence: dict) -> None:
    if evidence not in finding.confirmed_by:
        finding.confirmed_by.append(evidence)


def roots_of(finding: Finding, index: dict[str, Finding]) -> list[str]:
    """The root causes above a finding (itself when nothing explains it)."""
    if not finding.caused_by:
        return [finding.id]
    out: list[str] = []
    for parent in finding.caused_by:
        if parent in index:
            out.extend(r for r in roots_of(index[parent], index) if r not in out)
    return out or [finding.id]

