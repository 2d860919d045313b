"""Runs the checks over the facts: platform filter, required facts, isolation of a check that raises."""

from __future__ import annotations

import difflib
import traceback
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from rocm_doctor.engine.model import Check, Finding, Severity, Status
from rocm_doctor.engine.registry import Registry
from rocm_doctor.engine.run_env import relabel, start_reads
from rocm_doctor.facts import words
from rocm_doctor.facts.keys import DERIVED_FROM
from rocm_doctor.facts.facts import Facts


@dataclass
class Selection:
    only: Sequence[str] = ()
    skip: Sequence[str] = ()


class UnknownCheckError(ValueError):
    pass


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """" (did you mean 'x'?)" for the closest of `choices` to a mistyped `word`, else ""."""
    scored = sorted(((difflib.SequenceMatcher(None, word, c).ratio(), c) for c in choices), reverse=True)
    close = [c for score, c in scored[:2] if score >= max(0.6, scored[0][0] - 0.05)] if scored else []
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def validate_selection(registry: Registry, selection: Selection) -> None:
    known = set(registry.ids())
    unknown = [i for i in [*selection.only, *selection.skip] if i not in known]
    if unknown:
        hints = "".join(did_you_mean(i, known) for i in unknown)
        raise UnknownCheckError(f"unknown check id{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"
                                + (hints or "; rocm-doctor checks lists them"))


def run_checks(registry: Registry, facts: Facts, selection: Optional[Selection] = None) -> list[Finding]:
    selection = selection or Selection()
    findings: list[Finding] = []
    findings.extend(_load_problem_findings(registry))
    findings.extend(_collection_problem_findings(facts))
    for check_cls in registry.checks:
        if selection.only and check_cls.id not in selection.only:
            continue
        if check_cls.id in selection.skip:
            continue
        findings.extend(run_one(check_cls, facts))
    return sort_findings(findings)


def run_one(check_cls: type[Check], facts: Facts) -> list[Finding]:
    check = check_cls()  # a fresh instance per run: no state shared between runs
    platform = facts.os
    if platform not in {p.value for p in check_cls.platforms}:
        return [check.skip(f"not applicable on {platform}")]
    missing = [key for key in check_cls.requires if not facts.has(key)]
    missing = [key for key in missing if DERIVED_FROM.get(key) not in missing]  # said once, as what it comes from
    if missing:
        reasons = "; ".join(f"{words.about(key)}: {facts.why_missing(key)}" for key in missing)
        return [check.skip(f"needs {reasons}")]
    reads = start_reads(facts)  # a service's or kernel's environment records what the check reads from it
    try:
        outcome = check.run(facts)
        return relabel(check_cls, _normalise(check, outcome), facts, reads)
    except Exception as exc:
        return [
            check.finding(
                Status.ERROR,
                f"the check itself failed ({type(exc).__name__}: {exc}); other checks were not affected",
                evidence=traceback.format_exc(limit=5).splitlines()[-6:],
                remediation=["This is a bug in rocm-doctor or a plugin; please report it (rocm-doctor report writes "
                             "the file to attach)."],
            )
        ]


def _normalise(check: Check, outcome) -> list[Finding]:
    if outcome is None:
        return [check.ok("no problem found")]
    if isinstance(outcome, Finding):
        return [outcome]
    findings = list(outcome)
    for item in findings:
        if not isinstance(item, Finding):
            raise TypeError(f"check returned {type(item).__name__}, expected Finding")
    return findings or [check.ok("no problem found")]


def _load_problem_findings(registry: Registry) -> Iterable[Finding]:
    for problem in registry.problems:
        if problem.builtin:
            title = "A built-in check module could not be loaded"
            advice = "This is a bug or a broken install of rocm-doctor: reinstall it; the other checks ran without it."
        else:
            title = "A check plugin could not be loaded"
            advice = "Upgrade or uninstall the plugin package; the other checks ran without it."
        yield Finding(
            id=f"plugin-load-failed:{problem.source}",
            check="plugin-load-failed",
            status=Status.ERROR,
            title=title,
            message=f"{problem.source}: {problem.error}",
            evidence=[problem.error],
            remediation=[advice],
            area="rocm-doctor",
            severity=Severity.LOW,
        )


def _collection_problem_findings(facts: Facts) -> Iterable[Finding]:
    for probe, text in facts.observations.probe_errors.items():
        yield _own_error("probe-failed", probe, "A probe failed while collecting facts",
                         f"the {probe} probe raised an error; checks that need its facts are skipped", text)
    for name, text in facts.interpreter_errors.items():
        yield _own_error("parser-failed", name, "Parsing collected output failed",
                         f"the {name} interpreter raised an error; checks that need its facts are skipped", text)


def _own_error(check: str, subject: str, title: str, message: str, traceback_text: str) -> Finding:
    """A finding for rocm-doctor's own failure (a probe or an interpreter raised): the traceback's tail as evidence."""
    return Finding(
        id=f"{check}:{subject}",
        check=check,
        status=Status.ERROR,
        title=title,
        message=message,
        # Python 3.11+ underlines the failing expression with ^~~~ lines: they say nothing out of context
        evidence=[line for line in traceback_text.splitlines() if line.strip(" ^~")][-6:],
        remediation=["This is a bug in rocm-doctor; please report it (rocm-doctor report writes the file to attach)."],
        area="rocm-doctor",
        severity=Severity.LOW,
    )


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Worst first: status, then severity, then id, so the real problem leads the report."""
    return sorted(findings, key=lambda f: (-f.status.rank, -f.severity.rank, f.id))

