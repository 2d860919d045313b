"""A fix plan: the steps of the findings that need fixing, numbered, deduplicated, filterable by id.

Only findings with status fail or warn contribute. A step that two findings both ask for (the same pip command
for torch-not-installed and torch-build-mismatch) appears once and names both findings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.fix.steps import Step

FIXABLE = (Status.FAIL, Status.WARN)


@dataclass
class PlanItem:
    number: int
    step: Step
    findings: list[str]  # finding ids
    checks: list[str]  # check ids
    title: str = ""
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "findings": list(self.findings),
            "checks": list(self.checks),
            "title": self.title,
            "message": self.message,
            "step": self.step.to_dict(),
        }


@dataclass
class Plan:
    items: list[PlanItem] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.items)

    def check_ids(self) -> list[str]:
        return sorted({c for item in self.items for c in item.checks})


def collect(findings: Iterable[Finding], only: Sequence[str] = ()) -> Plan:
    """The plan for `findings` (fail/warn only); `only` keeps the findings whose id or check id is listed."""
    findings = [f for f in findings if f.status in FIXABLE and f.fix]
    if only:
        wanted = set(only)
        findings = [f for f in findings if f.id in wanted or f.check in wanted]
    items: list[PlanItem] = []
    seen: dict[str, PlanItem] = {}
    for finding in findings:
        for step in finding.fix:
            key = _change_key(step)
            if key in seen:
                item = seen[key]
                if finding.id not in item.findings:
                    item.findings.append(finding.id)
                if finding.check not in item.checks:
                    item.checks.append(finding.check)
                continue
            item = PlanItem(len(items) + 1, step, [finding.id], [finding.check], finding.title, finding.message)
            seen[key] = item
            items.append(item)
    return Plan(items)


def _change_key(step: Step) -> str:
    """What a step changes, without its explanation: two findings asking for the same change share one step."""
    return json.dumps({k: v for k, v in step.to_dict().items() if k != "note"}, sort_keys=True)


def unknown_ids(findings: Iterable[Finding], only: Sequence[str]) -> list[str]:
    """Ids in `only` that name no finding and no check of this run."""
    known = {f.id for f in findings} | {f.check for f in findings}
    return [i for i in only if i not in known]
