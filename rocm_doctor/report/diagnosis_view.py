"""The Diagnosis as reporters show it, built from the report's JSON form so that the terminal, Markdown and a
replayed report all say the same: each root cause with its evidence, "Do this" steps as commands for the user's
OS and shell, the alternatives with the reason they come second, and the symptoms it explains."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocm_doctor.engine import steps as S
from rocm_doctor.engine.remedy import step_from_dict
from rocm_doctor.engine import shells
from rocm_doctor.report import diff_render

# Prose, never a command: the commands to run are printed whole on lines of their own.
APPLY_TEXT = {S.AUTO: "fix applies it", S.FLAG: "fix runs it with --allow-install", S.PRINT: "run it yourself"}


@dataclass
class StepView:
    id: str
    summary: str
    commands: list[str] = field(default_factory=list)  # each printed whole on its own line
    how: str = ""  # who applies it
    why: str = ""


@dataclass
class AlternativeView:
    title: str
    why_not_first: str
    workaround: bool
    steps: list[StepView] = field(default_factory=list)


@dataclass
class RootView:
    number: int
    finding: dict[str, Any]
    steps: list[StepView] = field(default_factory=list)
    alternatives: list[AlternativeView] = field(default_factory=list)
    symptoms: list[dict[str, Any]] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    refuted: list[str] = field(default_factory=list)
    new_since: list[str] = field(default_factory=list)  # when an earlier run did not have it, and what changed


def build(report: dict[str, Any]) -> list[RootView]:
    """The root causes of a report dict (Report.to_dict() or a replayed report), most important first."""
    diagnosis = report.get("diagnosis") or {}
    findings = {f.get("id"): f for f in report.get("findings") or [] if isinstance(f, dict)}
    plan = {item.get("id"): item for item in diagnosis.get("plan") or [] if isinstance(item, dict)}
    shell = shell_of(report)
    views = []
    for number, root in enumerate(diagnosis.get("root_causes") or [], 1):
        finding = findings.get(root.get("finding")) or root
        view = RootView(number, finding)
        view.steps = [v for i in root.get("plan") or [] if (v := _step_view(plan.get(i, {}).get("step"), i, shell))]
        for alt in root.get("alternatives") or []:
            steps = [v for s in alt.get("steps") or [] if (v := _step_view(s.get("step"), s.get("id"), shell))]
            view.alternatives.append(AlternativeView(str(alt.get("title") or ""), str(alt.get("why_not_first") or ""),
                                                     bool(alt.get("workaround")), steps))
        view.symptoms = [findings[i] for i in root.get("symptoms") or [] if i in findings]
        view.confirmed = [_evidence(e) for e in finding.get("confirmed_by") or []]
        view.refuted = [_evidence(e) for e in finding.get("refuted_by") or []]
        if isinstance(root.get("new_since"), dict):
            view.new_since = diff_render.new_since_lines(root["new_since"])
        views.append(view)
    return views


def shell_of(report: dict[str, Any]) -> str:
    """The shell a report's commands are written for: the target's, else the usual one of its OS."""
    os_name = (report.get("platform") or {}).get("os") or "linux"
    return (report.get("target") or {}).get("shell") or ("powershell" if os_name == "windows" else "bash")


def _step_view(raw: Any, step_id: Any, shell: str):
    try:
        step = step_from_dict(raw)
    except S.StepError:
        return None
    return step_view(step, shell, str(step_id or ""))


def step_view(step: S.Step, shell: str, step_id: str = "", planned: bool = True) -> StepView:
    """A step as shown; one outside the plan (an info finding's) does not say that fix applies it."""
    return StepView(step_id, step.summary(), commands(step, shell), APPLY_TEXT.get(step.mode, "") if planned else "",
                    step.note)


def commands(step: S.Step, shell: str) -> list[str]:
    """What the user types for a step, in their shell: the session command for a variable (the registry edit for a
    Windows machine-wide one), the full command line for an install or a sudo step; advice has none."""
    if isinstance(step, S._EnvStep) and step.scope == "machine" and shell in ("powershell", "cmd"):
        return shells.registry_step_lines(step, shell)
    if isinstance(step, S._EnvStep):
        return shells.session_lines(step, shell)
    return shells.print_lines(step, shell)


def _evidence(entry: dict[str, Any]) -> str:
    kind = str(entry.get("kind") or "evidence").replace("-", " ")
    return f"{kind}: {entry.get('detail') or entry.get('finding') or ''}".strip()


def symptom_ids(report: dict[str, Any]) -> set[str]:
    """Every finding the diagnosis folded under a root cause (shown there, not again as problems)."""
    roots = (report.get("diagnosis") or {}).get("root_causes") or []
    return {i for root in roots for i in root.get("symptoms") or []} | {root.get("finding") for root in roots}
