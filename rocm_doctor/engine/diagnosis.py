"""The Diagnosis: what is wrong (root causes, most important first), what each explains, and one plan.

Built from linked findings (rocm_doctor.engine.relations). Every reporter and `fix` render this object, so the
advice shown and the plan applied cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.plan import Plan, PlanBuilder, PlanItem, change_key, step_id
from rocm_doctor.engine.remedy import step_from_dict
from rocm_doctor.engine.relations import roots_of
from rocm_doctor.facts.keys import GPU_INVENTORY, GPU_PCI, TORCH_AVAILABLE, TORCH_INSTALLED

VERDICTS = {
    Status.FAIL: ("broken", "Broken"),
    Status.ERROR: ("incomplete", "Could not finish the diagnosis"),
    Status.WARN: ("works-with-problems", "Works, with problems"),
}
HEALTHY = ("healthy", "Healthy")
NO_GPU = ("no-gpu", "No GPU found")
UNDECIDED = ("not-enough-to-tell", "Not enough to tell")  # every problem is that the input settles nothing
# what to look at when no GPU is seen at all (docs/guide.md's verdict table says the same)
NO_GPU_HINTS = ("the card is seated", "the driver is loaded", "a container was given the GPU devices",
                "WSL has the GPU driver")


def no_gpu_seen(facts) -> Optional[str]:
    """What shows that this machine has no GPU for torch: an empty PCI display list, no AMD GPU from any tool and
    torch seeing none. None where that cannot be told (WSL shows no PCI GPUs; a source was not collected)."""
    if facts.os == "wsl" or facts.get(GPU_PCI) != [] or facts.get(GPU_INVENTORY) not in ([], None):
        return None
    if facts.get(TORCH_AVAILABLE) is True:
        return None
    torch = "torch sees none" if facts.get(TORCH_INSTALLED) else "torch is not installed to look"
    return f"no AMD or NVIDIA GPU on the PCI bus or from any GPU tool, and {torch}"


def verdict_word(verdict: str) -> str:
    """The words a user reads for a verdict key ("works-with-problems" -> "Works, with problems")."""
    return dict([*VERDICTS.values(), HEALTHY, NO_GPU, UNDECIDED]).get(verdict, verdict)


@dataclass
class RootCause:
    finding: Finding
    symptoms: list[str] = field(default_factory=list)  # ids of the findings it explains, directly or not
    plan: list[str] = field(default_factory=list)  # step ids, in order
    alternatives: list[dict[str, Any]] = field(default_factory=list)
    # set from the run history: the last earlier run without this problem (date, run) and what changed since
    # in the facts its check needs (changes)
    new_since: Optional[dict[str, Any]] = None

    def to_dict(self) -> dict[str, Any]:
        out = {"finding": self.finding.id, "check": self.finding.check, "status": self.finding.status.value,
               "title": self.finding.title, "message": self.finding.message, "symptoms": list(self.symptoms),
               "plan": list(self.plan), "alternatives": [dict(a) for a in self.alternatives]}
        if self.new_since is not None:
            out["new_since"] = dict(self.new_since)
        return out


@dataclass
class Diagnosis:
    verdict: str
    headline: str
    root_causes: list[RootCause] = field(default_factory=list)
    plan: Plan = field(default_factory=Plan)

    def root(self, finding_id: str) -> Optional[RootCause]:
        return next((r for r in self.root_causes if r.finding.id == finding_id), None)

    def step_ids(self) -> set[str]:
        """Ids of every step: planned, and the alternatives' (which `fix --only ID` can choose instead)."""
        return set(self.plan.ids()) | {s["id"] for r in self.root_causes for a in r.alternatives for s in a["steps"]}

    def select(self, wanted: Sequence[str]) -> Plan:
        """The plan items named by step, finding or check id, plus any alternative step named by its id."""
        chosen = self.plan.only(wanted)
        for root in self.root_causes:
            for alt in root.alternatives:
                for entry in alt["steps"]:
                    if entry["id"] in wanted and entry["id"] not in chosen.ids():
                        chosen.items.append(PlanItem(len(chosen.items) + 1, entry["id"], step_from_dict(entry["step"]),
                                                     [root.finding.id], [root.finding.check], alt["title"],
                                                     root.finding.message))
        return chosen

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "headline": self.headline,
                "root_causes": [r.to_dict() for r in self.root_causes],
                "plan": [item.to_dict() for item in self.plan.items]}


def build(findings: list[Finding], no_gpu: Optional[str] = None) -> Diagnosis:
    """The Diagnosis of linked findings: root causes ranked, symptoms grouped, one conflict-free plan. `no_gpu`
    says what showed that the machine has no GPU at all: then neither "healthy" nor "works, with problems" (which say
    torch uses a GPU) nor "broken" fits, so the verdict says that; a check that could not run still wins."""
    index = {f.id: f for f in findings}
    problems = [f for f in findings if f.is_problem]
    groups: dict[str, list[str]] = {}
    for finding in problems:
        if not finding.caused_by:
            groups.setdefault(finding.id, [])
    for finding in problems:
        if finding.caused_by:
            for root in roots_of(finding, index):
                groups.setdefault(root, []).append(finding.id)
    roots = sorted((RootCause(index[r], symptoms) for r, symptoms in groups.items()), key=lambda r: rank(r, index))
    builder = PlanBuilder()
    for root in roots:
        _plan_root(root, builder)
    worst = max((f.status for f in problems), key=lambda s: s.rank) if problems else None
    verdict, word = NO_GPU if no_gpu and worst is not Status.ERROR else VERDICTS.get(worst, HEALTHY)
    if problems and all(f.undecided for f in problems):
        verdict, word = UNDECIDED
        return Diagnosis(verdict, f"{word}: {roots[0].finding.message.removeprefix(word + ': ')}", roots,
                         builder.plan)
    headline = _headline(word, roots)
    if verdict == NO_GPU[0]:
        headline = f"{word}: {no_gpu}" + (f"; {headline[len(word) + 2:]}" if roots else ".")
    return Diagnosis(verdict, headline, roots, builder.plan)


def rank(root: RootCause, index: dict[str, Finding]):
    """Most important first: the worst status in the group (a cause is as bad as what it breaks), confirmed by
    evidence, severity, how much it explains, id."""
    finding = root.finding
    group = [finding] + [index[i] for i in root.symptoms if i in index]
    worst = max(f.status.rank for f in group)
    return (-worst, not finding.confirmed_by, -finding.severity.rank, -len(root.symptoms), finding.id)


def _plan_root(root: RootCause, builder: PlanBuilder) -> None:
    finding = root.finding
    refused = []
    for step in finding.fix:
        item, why = builder.add(step, finding)
        if item is None:
            refused.append((step, why))
        elif item.id not in root.plan:
            root.plan.append(item.id)
    for alt in finding.alternatives:
        root.alternatives.append({"title": alt.title, "why_not_first": alt.why_not_first,
                                  "workaround": alt.workaround, "steps": [_step_entry(s) for s in alt.steps]})
    for step, why in refused:
        root.alternatives.append({"title": step.summary(), "why_not_first": f"not planned: {why}",
                                  "workaround": False, "steps": [_step_entry(step)]})
    planned = {change_key(s) for s in finding.fix}
    for alt in root.alternatives:
        alt["steps"] = [s for s in alt["steps"] if s["key"] not in planned]
        for entry in alt["steps"]:
            entry.pop("key")


def _step_entry(step) -> dict[str, Any]:
    return {"id": step_id(step), "summary": step.summary(), "step": step.to_dict(), "key": change_key(step)}


def _headline(word: str, roots: list[RootCause]) -> str:
    if not roots:
        return f"{word}: no problem found"
    explained = sum(len(r.symptoms) for r in roots)
    causes = f"{len(roots)} problem{'s' if len(roots) != 1 else ''} to fix"
    also = f" (explaining {explained} other finding{'s' if explained != 1 else ''})" if explained else ""
    return f"{word}: {causes}{also}."


def hint(verdict: str) -> str:
    """What the user should look at for this verdict (only "No GPU found" has a hint)."""
    return f"Check that {', '.join(NO_GPU_HINTS)}." if verdict == NO_GPU[0] else ""
