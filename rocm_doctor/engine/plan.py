"""The plan: one list of steps for the whole diagnosis, the same in `check`, `report` and `fix`.

Each root cause contributes its preferred steps; a step two root causes ask for appears once and names both. A
step that would undo or contradict a step already planned for a more important cause (set a variable another plan
step unsets, or to another value) is not planned: it becomes an alternative of its root cause, with the reason.
Symptoms contribute no steps: fixing their cause fixes them.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

from rocm_doctor.engine.model import Finding
from rocm_doctor.engine.steps import (AddUserToGroup, KernelEnv, PipInstall, RunCommand, SetEnv, Step, UnitEnv, UnsetEnv,
                                      _EnvStep, _PathStep, _ProgramEnvStep)


@dataclass
class PlanItem:
    number: int
    id: str
    step: Step
    findings: list[str]  # finding ids this step fixes (its root cause first)
    checks: list[str]  # their check ids
    title: str = ""
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "id": self.id,
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

    def ids(self) -> list[str]:
        return [item.id for item in self.items]

    def by_id(self, step_id: str) -> Optional[PlanItem]:
        return next((item for item in self.items if item.id == step_id), None)

    def check_ids(self) -> list[str]:
        return sorted({c for item in self.items for c in item.checks})

    def only(self, wanted: Sequence[str]) -> "Plan":
        """The items whose step id, finding id or check id is in `wanted`, renumbered."""
        keep = set(wanted)
        picked = [item for item in self.items
                  if item.id in keep or keep & set(item.findings) or keep & set(item.checks)]
        return Plan([_renumber(item, n) for n, item in enumerate(picked, 1)])


def _renumber(item: PlanItem, number: int) -> PlanItem:
    return PlanItem(number, item.id, item.step, list(item.findings), list(item.checks), item.title, item.message)


class PlanBuilder:
    """Adds the steps of root causes in order of importance, merging and refusing conflicts."""

    def __init__(self) -> None:
        self.plan = Plan()
        self._by_key: dict[str, PlanItem] = {}

    def add(self, step: Step, finding: Finding) -> tuple[Optional[PlanItem], str]:
        """Plan `step` for `finding`: (the plan item, "") or (None, why it was not planned)."""
        key = change_key(step)
        if key in self._by_key:
            item = self._by_key[key]
            if finding.id not in item.findings:
                item.findings.append(finding.id)
            if finding.check not in item.checks:
                item.checks.append(finding.check)
            self._keep_after_own_steps(item, finding)
            return item, ""
        clash = self.conflict(step)
        if clash is not None:
            return None, f"it contradicts step {clash.id} ({clash.step.summary()}), planned for {clash.findings[0]}"
        item = PlanItem(len(self.plan.items) + 1, unique_id(step_id(step), self.plan.ids()), step, [finding.id],
                        [finding.check], finding.title, finding.message)
        self._by_key[key] = item
        self.plan.items.append(item)
        return item, ""

    def _keep_after_own_steps(self, item: PlanItem, finding: Finding) -> None:
        """A shared step comes after every earlier step of each finding that asks for it: a restart both root
        causes need moves behind the second one's edit, and the numbers follow."""
        items = self.plan.items
        if any(finding.id in later.findings for later in items[items.index(item) + 1:]):
            items.remove(item)
            items.append(item)
            for number, planned in enumerate(items, 1):
                planned.number = number

    def conflict(self, step: Step) -> Optional[PlanItem]:
        """The planned item that changes the same variable in the same scope differently, if any."""
        name = touches(step)
        if name is None:
            return None
        key = change_key(step)
        for item in self.plan.items:
            if touches(item.step) == name and change_key(item.step) != key and not _both_path_edits(step, item.step):
                return item
        return None


def _both_path_edits(a: Step, b: Step) -> bool:
    """Two edits of one PATH-like list (prepend one folder, remove another) do not contradict each other."""
    return isinstance(a, _PathStep) and isinstance(b, _PathStep) and a.entry != b.entry


def change_key(step: Step) -> str:
    """What a step changes, without its explanation: two findings asking for the same change share one step."""
    # a pip install keeps the id it had before installers other than pip existed
    return json.dumps({k: v for k, v in step.to_dict().items() if k != "note" and (k, v) != ("installer", "pip")},
                      sort_keys=True)


def touches(step: Step) -> Optional[tuple[str, str]]:
    """The environment variable and scope a step changes (None for other kinds): unsetting a variable in the user
    and the machine scope are two changes, setting and unsetting it in one scope contradict each other. A service's
    or kernel's settings file is a scope of its own."""
    if isinstance(step, _ProgramEnvStep):
        return step.name, step.path
    return (step.name, step.scope) if isinstance(step, _EnvStep) else None


def step_id(step: Step) -> str:
    """A stable, readable id for a step (`fix --only ID`): the same change always gets the same id."""
    digest = hashlib.sha1(change_key(step).encode("utf-8")).hexdigest()[:6]
    if isinstance(step, UnsetEnv):
        return _slug(f"unset-{step.name}-{step.scope}")
    if isinstance(step, SetEnv):
        return _slug(f"set-{step.name}-{step.scope}") + f"-{digest}"
    if isinstance(step, _PathStep):
        return _slug(f"{step.kind}-{step.name}-{step.scope}") + f"-{digest}"
    if isinstance(step, PipInstall):
        return _slug("install-" + "-".join(step.packages[:2])) + f"-{digest}"
    if isinstance(step, AddUserToGroup):
        return _slug("group-" + "-".join(step.groups))
    if isinstance(step, (UnitEnv, KernelEnv)):
        where = step.unit if isinstance(step, UnitEnv) else f"kernel-{step.kernel}"
        return _slug(f"{'set' if step.value is not None else 'unset'}-{step.name}-{where}") + f"-{digest}"
    if isinstance(step, RunCommand):
        argv = step.argv()
        words = [argv[0].replace("\\", "/").rsplit("/", 1)[-1]] + [a for a in argv[1:] if not a.startswith("-")][:1]
        return _slug("run-" + "-".join(words))[:40].strip("-") + f"-{digest}"
    return _slug(step.kind) + f"-{digest}"


def unique_id(wanted: str, taken: Iterable[str]) -> str:
    taken = set(taken)
    candidate, n = wanted, 2
    while candidate in taken:
        candidate, n = f"{wanted}-{n}", n + 1
    return candidate


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
