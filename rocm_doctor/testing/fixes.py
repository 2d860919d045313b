"""The fix makes the check pass: apply the steps a check attached to its problems to the case's machine, run the
check again, and assert that the problems are gone and no new one appeared.

Environment steps are simulated (every scope reaches the environment of a new shell; on Windows the user and
machine scopes also change the recorded registry Environment keys; a service's or kernel's step changes what its
recorded settings say, see program_steps.py). Installs, group changes, installer components,
commands and advice cannot be simulated on facts: the case says what the machine looks like after them (`after`),
and a step without one fails the test rather than passing unchecked.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Iterable, Optional

from rocm_doctor.engine import steps as S
from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.facts.keys import MACHINE_ENV_KEY, REGISTRY_PREFIX, USER_ENV_KEY
from rocm_doctor.fix import pathlist
from rocm_doctor.interpret import interpret
from rocm_doctor.testing.cases import SIMULATED_KINDS, Case, CaseError
from rocm_doctor.testing.program_steps import KINDS as PROGRAM_KINDS, apply_program_step
from rocm_doctor.testing.run import Checks, apply_overrides, check_class, describe, observations_of, run_case

PROBLEM = (Status.FAIL, Status.WARN)
BAD = (Status.FAIL, Status.WARN, Status.ERROR)
REGISTRY_KEYS = {"user": "\\".join(USER_ENV_KEY), "machine": "\\".join(MACHINE_ENV_KEY)}


def problems_of(case: Case, findings: list[Finding]) -> list[Finding]:
    """The findings whose steps the fix case applies: `case.problems`, else every fail/warn finding."""
    if not case.problems:
        return [f for f in findings if f.status in PROBLEM]
    by_id = {f.id: f for f in findings}
    unknown = [p for p in case.problems if p not in by_id]
    if unknown:
        raise CaseError(f"case {case.name!r}: problems {', '.join(unknown)} are not among the findings")
    return [by_id[p] for p in case.problems]


def steps_of(case: Case, problems: Iterable[Finding]) -> list[S.Step]:
    """The steps to apply, each once (two findings often ask for the same change): every problem's preferred
    steps, or those of its alternative whose title contains `case.alternative`."""
    steps: list[S.Step] = []
    for finding in problems:
        chosen = finding.fix
        if case.alternative:
            matching = [a for a in finding.alternatives if case.alternative in a.title]
            if len(matching) != 1:
                titles = "; ".join(a.title for a in finding.alternatives) or "none"
                raise CaseError(f"case {case.name!r}: {len(matching)} alternatives of {finding.id} match "
                                f"{case.alternative!r} (its alternatives: {titles})")
            chosen = matching[0].steps
        if not chosen:
            raise AssertionError(f"case {case.name!r}: {finding.id} carries no fix step"
                                 + (f" in the alternative {case.alternative!r}" if case.alternative else ""))
        steps += [s for s in chosen if s.to_dict() not in [t.to_dict() for t in steps]]
    return steps


def edit_env(env: dict, step: S.Step, os_name: str) -> dict:
    """`env` after an environment step; a list variable keeps its other entries in their order."""
    windows = os_name == "windows"
    out = dict(env)
    name = next((k for k in out if k.lower() == step.name.lower()), step.name) if windows else step.name
    if isinstance(step, S.SetEnv):
        out[name] = step.value
    elif isinstance(step, S.UnsetEnv):
        out.pop(name, None)
    elif isinstance(step, S.PathPrepend):
        out[name] = pathlist.prepend(out.get(name), step.entry, pathlist.separator_for(os_name), windows)
    elif name in out:
        out[name] = pathlist.remove(out[name], step.entry, pathlist.separator_for(os_name), windows)
    return out


def _edit_registry(probes: dict, step: S.Step) -> None:
    """The recorded registry Environment key of the step's scope, as the step leaves it (Windows only)."""
    wanted = REGISTRY_KEYS[step.scope].lower()
    for probe, record in probes.items():
        if not probe.startswith(REGISTRY_PREFIX) or not isinstance(record, dict):
            continue
        for key, entry in record.items():
            if key.lower() != wanted or not isinstance(entry, dict) or "values" not in entry:
                continue
            values = entry["values"]
            plain = {name: str((item or {}).get("value", "")) for name, item in values.items()}
            new = edit_env(plain, step, "windows")
            for name in set(values) - set(new):
                del values[name]
            for name, text in new.items():
                kind = (values.get(name) or {}).get("type") or ("REG_EXPAND_SZ" if "%" in text else "REG_SZ")
                values[name] = {"value": text, "type": kind}


def apply_steps(case: Case, steps: list[S.Step]) -> Case:
    """The case as the machine is after `steps`: the environment edited, the `after` overrides of the other kinds."""
    env, observations, facts = dict(case.env), copy.deepcopy(case.observations), dict(case.facts)
    kinds = {step.kind for step in steps}
    missing = sorted(kinds - set(case.after) - set(SIMULATED_KINDS))
    if missing:
        raise CaseError(f"case {case.name!r}: the fix has {', '.join(missing)} step(s), which cannot be simulated; "
                        "give `after: {KIND: {fact: value}}`, what the machine looks like once they were carried out")
    unused = sorted(set(case.after) - kinds)
    if unused:
        raise CaseError(f"case {case.name!r}: `after` names {', '.join(unused)}, but the fix has no such step")
    for step in steps:
        if step.kind in PROGRAM_KINDS:
            apply_program_step(observations, step, case.name)
        elif step.kind in SIMULATED_KINDS:
            env = edit_env(env, step, case.os)
            if case.os == "windows" and step.scope in REGISTRY_KEYS:
                _edit_registry(observations.setdefault("probes", {}), step)
    for kind in sorted(kinds & set(case.after)):
        facts.update(case.after[kind])
    return replace(case, env=env, observations=observations, facts=facts, after={})


def _hidden_by_overrides(case: Case, fixed: Case) -> list[str]:
    """Overridden facts that the interpreters would compute differently after the steps: the override would hide
    the very change the steps make."""
    before, after = interpret(observations_of(case)), interpret(observations_of(fixed))
    described = {key for overrides in case.after.values() for key in overrides}
    return [key for key in case.facts if key not in described
            and (before.has(key), before.get(key)) != (after.has(key), after.get(key))]


def assert_fix_passes(case: Case, registry: Checks = None) -> list[Finding]:
    """Run the case (its expectations must hold), apply the steps of its problems (or of the alternative the case
    names), run the check again: every problem must be gone (ok/skip, info for a former fail/warn, or no such
    finding) and no new problem may appear. Returns the findings after the fix."""
    before = run_case(case, registry)
    problems = problems_of(case, before)
    if not problems:
        raise AssertionError(f"case {case.name!r}: {case.check} reports no fail/warn finding, so there is no fix "
                             "to try\nfindings:\n" + "\n".join(describe(before)))
    steps = steps_of(case, problems)
    fixed = apply_steps(case, steps)
    hidden = _hidden_by_overrides(case, fixed)
    if hidden:
        raise CaseError(f"case {case.name!r}: the fact override(s) {', '.join(hidden)} hide what the steps change; "
                        "describe them with observations instead")
    facts = apply_overrides(interpret(observations_of(fixed)), fixed.facts, f"case {case.name!r} after the fix")
    after = run_one(check_class(case.check, registry), facts)
    still = [(p, _same(after, p.id)) for p in problems if not _gone(p, _same(after, p.id))]
    known = {f.id for f in before if f.status in BAD}
    new = [f for f in after if f.status in BAD and f.id not in known]
    if still or new:
        which = f"the alternative {case.alternative!r}" if case.alternative else "the fix"
        lines = [f"case {case.name!r}: applying {which} did not make {case.check} pass", "steps applied:"]
        lines += [f"  {s.kind}: {s.summary()}" for s in steps]
        lines += [f"still reported: {p.id} ({p.status.value} -> {a.status.value})" for p, a in still]
        lines += [f"new problem: {f.id} ({f.status.value})" for f in new]
        raise AssertionError("\n".join(lines + ["findings after the fix:", *describe(after)]))
    return after


def _same(findings: list[Finding], finding_id: str) -> Optional[Finding]:
    return next((f for f in findings if f.id == finding_id), None)


def _gone(before: Finding, after: Optional[Finding]) -> bool:
    return after is None or after.status in (Status.OK, Status.SKIP) or (
        after.status is Status.INFO and before.status in PROBLEM)
