"""Runs a case through the real pipeline (interpret, then the engine's `run_one`) and compares the findings with
what the case expects, so that a check is tested exactly as `rocm-doctor check` runs it."""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Iterable, Union

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Check, Finding
from rocm_doctor.engine.registry import Registry, load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import derive_again, interpret
from rocm_doctor.testing.cases import Case, CaseError

Checks = Union[Registry, Iterable[type[Check]], None]
MISSING_REASON = "missing in this test case"


@lru_cache(maxsize=1)
def _default_registry() -> Registry:
    return load_registry(include_plugins=True)


def check_class(check_id: str, registry: Checks = None) -> type[Check]:
    """The check with this id: from `registry` (a Registry or Check classes), else the built-ins and plugins."""
    if registry is None:
        registry = _default_registry()
    found = registry.by_id(check_id) if isinstance(registry, Registry) else next(
        (c for c in registry if c.id == check_id), None)
    if found is None:
        raise CaseError(f"no check with id {check_id!r} is registered")
    return found


def observations_of(case: Case) -> Observations:
    """The raw observations the case describes, with its OS and environment."""
    raw = copy.deepcopy(case.observations)
    raw["platform"] = dict(raw.get("platform") or {}, os=case.os)
    raw["env"] = dict(case.env)
    return Observations.from_dict(raw)


def apply_overrides(facts: Facts, overrides: dict, where: str) -> Facts:
    """`facts.set` each override; None makes the fact missing (only possible for a fact no interpreter set). The
    facts interpreters derive from an override are derived again (gpu.targets from gpu.inventory)."""
    for key, value in overrides.items():
        if value is not None:
            facts.set(key, copy.deepcopy(value))
        elif facts.has(key):
            raise CaseError(f"{where}: {key} is set by the interpreters from the observations; change those "
                            "instead of overriding it with None")
        else:
            facts.set_missing(key, MISSING_REASON)
    derive_again(facts, [key for key, value in overrides.items() if value is not None])
    return facts


def facts_for(case: Case) -> Facts:
    """The facts a check sees for this case: the observations interpreted, then the case's fact overrides."""
    return apply_overrides(interpret(observations_of(case)), case.facts, f"case {case.name!r}")


def findings_for(case: Case, registry: Checks = None) -> list[Finding]:
    return run_one(check_class(case.check, registry), facts_for(case))


def run_case(case: Case, registry: Checks = None) -> list[Finding]:
    """Run the case and return its findings; AssertionError with a readable diff when they are not as expected."""
    findings = findings_for(case, registry)
    statuses = {f.id: f.status.value for f in findings}
    wrong = {fid: (want, statuses.get(fid)) for fid, want in case.expect.items() if statuses.get(fid) != want}
    blob = "\n".join(text_of(f) for f in findings)
    absent = [t for t in case.text if t not in blob]
    if wrong or absent:
        lines = [f"case {case.name!r} ({case.check} on {case.os}): the findings are not as expected"]
        lines += [f"  {fid}: expected {want}, got {got or 'no such finding'}" for fid, (want, got) in wrong.items()]
        lines += [f"  text not found: {t!r}" for t in absent]
        raise AssertionError("\n".join(lines + ["findings:", *describe(findings)]))
    return findings


def text_of(finding: Finding) -> str:
    """Everything a user reads of a finding, its steps and alternatives included."""
    alternatives = [line for a in finding.alternatives for line in (a.title, *(s.summary() for s in a.steps))]
    return "\n".join([finding.title, finding.message, *finding.evidence, *finding.remediation,
                      *(s.summary() for s in finding.fix), *alternatives])


def describe(findings: Iterable[Finding], indent: str = "  ") -> list[str]:
    """One block per finding: status, id, message, then its remediation and steps."""
    lines = []
    for f in findings:
        lines.append(f"{indent}{f.status.value:<5} {f.id}: {f.message}")
        lines += [f"{indent}      remediation: {r}" for r in f.remediation]
        lines += [f"{indent}      step: {s.summary()}" for s in f.fix]
        for alt in f.alternatives:
            lines.append(f"{indent}      alternative: {alt.title}")
            lines += [f"{indent}        step: {s.summary()}" for s in alt.steps]
    return lines or [f"{indent}(none)"]
