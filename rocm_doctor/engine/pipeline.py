"""Stages and the pass that runs them: GPU work after the static checks, re-judged by the checks that need it.

A Stage (kernels, bench, collectives) runs in child processes and returns one raw result, stored in the
observations under its probe key, so a snapshot or report replays it. After a stage the engine re-runs exactly the
checks whose `requires` name a fact the stage provides, and applies what those checks judge the GPU showed about
other findings (Check.evidence_on: a static finding confirmed or refuted) as typed `confirmed_by` / `refuted_by`
entries; what they add to the stage's summary (Check.shown_with_stage) goes into report.stages. Given a sampler of
the live GPU state (the caller injects it: the engine touches no machine), each stage runs between two samples kept
with its result. No stage can take the run down.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, Optional, Sequence

from rocm_doctor.engine.engine import Selection, run_one, sort_findings
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.registry import Registry

Progress = Optional[Callable[[str], None]]  # one line saying what a stage is doing now
Sampler = Optional[Callable[[], dict]]  # one sample of the live GPU state (probes/gpu_sample.py)


class Stage:
    """One unit of GPU work. Subclasses set the metadata and implement `run` and `interpret`."""

    name: ClassVar[str]
    probe_key: ClassVar[str]  # where the raw result is kept in the observations
    provides: ClassVar[tuple[str, ...]]  # the fact keys `interpret` sets

    def skip_reason(self, facts) -> Optional[str]:
        """Why this stage must not run on these facts (None: run it)."""
        return None

    def start_early(self, python: str, env: dict[str, str]) -> None:
        """Start work that does not need the facts while the probes run (a live run calls it before observing);
        `run` uses it when its interpreter and environment are the same, else discards it."""

    def probes_done(self, sample: Sampler = None) -> None:
        """The probes have ended: what start_early began may use the GPU now without slowing them or being slowed.
        `sample` is the live-state sampler a watched run uses: a stage whose early work was held takes its "before"
        sample first (sampled_before), since a GPU query beside the first kernels slows them."""

    def sampled_before(self) -> Optional[dict]:
        """The "before" sample the stage took itself when it let its early work compute (None: take it now)."""
        return None

    def discard_early(self) -> None:
        """Stop whatever start_early began and `run` did not use (the stage was skipped, or the run failed)."""

    def run(self, facts, progress: Progress = None) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def interpret(self, observations, facts) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def run_watched(self, facts, progress: Progress, sample: Sampler) -> Any:
        """`run` between two samples of the live GPU state, kept in the result as "live"; a stage that samples
        inside (the bench, per section) overrides it."""
        before = self.sampled_before() or taken(sample, "before")
        result = self.run(facts, progress)
        if isinstance(result, dict):
            result["live"] = {"samples": [before, taken(sample, "after")]}
        return result

    def summary(self, result: dict[str, Any], judged: dict[str, Any]) -> dict[str, Any]:
        """What the report shows for the stage (report.stages[name]); `judged`: what the checks of its facts add
        (Check.shown_with_stage)."""
        return result


@dataclass
class StageRun:
    findings: list[Finding]
    stages: dict[str, Any]


def run_stages(stages: Sequence[Stage], registry: Registry, facts, findings: list[Finding],
               selection: Optional[Selection] = None, replay: bool = False, progress: Progress = None,
               sample: Sampler = None, asked: bool = False) -> StageRun:
    """Run (or, on a replay, re-read) each stage, then re-judge the checks that need its facts. `asked`: the
    command asked for these stages by name (`bench`, `kernels`), so they run without the skip reasons that read
    machine-wide facts such a command does not observe."""
    selection = selection or Selection()
    shown: dict[str, Any] = {}
    for stage in stages:
        result = facts.observations.probes.get(stage.probe_key)
        if not replay:
            why = None if asked else stage.skip_reason(facts)
            if why:
                stage.discard_early()
                shown[stage.name] = {"ran": False, "reason": why}
                continue
            result = _run_safely(stage, facts, progress, sample)
            facts.observations.add_probe(stage.probe_key, result)
        elif not isinstance(result, dict):
            continue
        stage.interpret(facts.observations, facts)
        findings = rerun(registry, facts, findings, stage.provides, selection)
        findings = apply_evidence(findings, _asked_safely(registry, facts, stage.provides,
                                                          lambda check: check.evidence_on(facts)))
        shown[stage.name] = stage.summary(result, _asked_safely(registry, facts, stage.provides,
                                                                lambda check: check.shown_with_stage(facts)))
    return StageRun(sort_findings(findings), shown)


def _run_safely(stage: Stage, facts, progress: Progress, sample: Sampler = None) -> dict[str, Any]:
    try:
        result = stage.run(facts, progress) if sample is None else stage.run_watched(facts, progress, sample)
        return result if isinstance(result, dict) else {"ran": False, "reason": f"the {stage.name} stage returned "
                                                                                  f"{type(result).__name__}"}
    except Exception as exc:  # the stage must never take the report down
        return {"ran": False, "reason": f"the {stage.name} stage failed: {type(exc).__name__}: {exc}"}


def _asked_safely(registry: Registry, facts, provided: Sequence[str],
                  ask: Callable[[Any], Optional[dict]]) -> dict[str, Any]:
    """`ask` of every check judging the stage's facts, merged (what they say about other findings, what the stage
    shows of their judgement); a check that raises says nothing (its own finding already reports the error)."""
    found: dict[str, Any] = {}
    for check in registry.checks:
        if set(check.requires) & set(provided) \
                and all(facts.has(key) for key in check.requires):
            try:
                found.update(ask(check()) or {})
            except Exception:
                continue
    return found


def rerun(registry: Registry, facts, findings: list[Finding], provided: Sequence[str],
          selection: Selection) -> list[Finding]:
    """Replace the findings of every selected check that requires one of `provided` by a fresh verdict."""
    wanted = [c for c in registry.checks if set(c.requires) & set(provided) and _selected(c.id, selection)]
    ids = {c.id for c in wanted}
    kept = [f for f in findings if f.check not in ids]
    for check in wanted:
        kept.extend(run_one(check, facts))
    return kept


def _selected(check_id: str, selection: Selection) -> bool:
    return (not selection.only or check_id in selection.only) and check_id not in selection.skip


_DOWN = {Status.FAIL: Status.WARN, Status.WARN: Status.INFO, Status.ERROR: Status.WARN}


def apply_evidence(findings: list[Finding], evidence: dict[str, dict[str, Any]]) -> list[Finding]:
    """A static problem the GPU refuted drops one status level; one it confirmed becomes a fail. Both keep the
    evidence as a typed entry, and the message is left as the check wrote it. Evidence is keyed by finding id (one
    subject of a check) or by check id (all its findings)."""
    out = []
    for finding in findings:
        seen = evidence.get(finding.id) or evidence.get(finding.check)
        if seen and finding.is_problem:
            entry = {k: v for k, v in seen.items() if k not in ("confirmed", "refuted")}
            entry["status_before"] = finding.status.value
            if seen.get("refuted") and finding.status in _DOWN:
                finding = replace(finding, status=_DOWN[finding.status], refuted_by=finding.refuted_by + [entry])
            elif seen.get("confirmed"):
                finding = replace(finding, status=Status.FAIL, confirmed_by=finding.confirmed_by + [entry])
        out.append(finding)
    return out


def taken(sample: Sampler, mark: str) -> dict:
    """One sample marked with what it was taken for; a sampler that raises gives the error instead."""
    try:
        return dict(sample(), marks=[mark])
    except Exception as exc:  # a failed sample is recorded; the stage goes on
        return {"error": f"{type(exc).__name__}: {exc}", "marks": [mark]}
