"""Which change matters: a change in a fact that a check now reporting a problem requires comes first.

A check's facts are what it declares in `requires` and what it reads when it is run again on the newer run's facts
(checks are pure, so running one again costs nothing and touches nothing). Checks read the environment directly,
which no `requires` can name, so a changed variable is tried instead: the newer observations with that one
variable as it was before are interpreted and the check run on them; a different verdict ties the two. Among the
changes a check needs, the one whose undoing alone clears its problem (the same trial, on the facts) is named first.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from rocm_doctor.compare import fields as F
from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Check, Finding, Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret

NEW_PROBLEM, PROBLEM, GPU_STACK, OTHER = "new-problem", "problem", "gpu-stack", "other"
TIERS = (NEW_PROBLEM, PROBLEM, GPU_STACK, OTHER)
GROUP_ORDER = ("torch", "rocm", "driver", "gpu", "live", "system", "python", "facts", "environment")
REQUIRES, READS, VERDICT = "requires", "reads", "changes its verdict"


class _Reads(Facts):
    """A copy of the facts that remembers every key asked for."""

    def __init__(self, facts: Facts) -> None:
        super().__init__(facts.observations)
        for key in facts.keys():
            self.set(key, facts.get(key))
        for key, why in facts.missing_dict().items():
            self.set_missing(key, why)
        self.interpreter_errors = dict(facts.interpreter_errors)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def has(self, key: str) -> bool:
        self.read.add(key)
        return super().has(key)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


@dataclass
class Suspect:
    """A check that reports a problem in the newer run."""

    check: type[Check]
    status: str  # its worst status now
    before: str  # its worst status in the older run, or "absent"
    reads: set[str] = field(default_factory=set)
    verdict: tuple = ()  # its findings on the newer facts, to tell a changed verdict
    problems: frozenset = frozenset()  # (finding id, status) of its problems there

    @property
    def new(self) -> bool:
        return rank_of(self.status) > rank_of(self.before)


def rank_of(status: str) -> int:
    try:
        return Status(status).rank
    except ValueError:
        return -1


def _verdict(findings: Iterable[Finding]) -> tuple:
    return tuple(sorted((f.id, f.status.value, f.message) for f in findings))


def _problems(findings: Iterable[Finding]) -> frozenset:
    return frozenset((f.id, f.status.value) for f in findings if f.is_problem)


def suspects(checks: Sequence[type[Check]], now: Mapping[str, str], before: Mapping[str, str], facts: Facts,
             only: Optional[str] = None) -> list[Suspect]:
    """The checks whose worst status in `now` is a problem (or just `only`), with the facts each reads."""
    found = []
    for check in checks:
        status = now.get(check.id)
        if status not in ("fail", "error", "warn") or (only is not None and check.id != only):
            continue
        tracing = _Reads(facts)
        findings = run_one(check, tracing)
        found.append(Suspect(check, status, before.get(check.id, "absent"), tracing.read | set(check.requires),
                             _verdict(findings), _problems(findings)))
    return found


def relate(changes: list[dict[str, Any]], suspects_now: Sequence[Suspect], older: Facts, newer: Facts,
           meta: Mapping[str, F.Field]) -> None:
    """Sets each change's `checks` (the suspects it bears on, how, and whether undoing it alone clears the
    problem) and its `relevance` tier."""
    for change in changes:
        sources = set(change.get("sources") or ())
        env = [s[len(F.ENV_SOURCE):] for s in sources if s.startswith(F.ENV_SOURCE)]
        undone = _env_undone(newer, older.observations, env[0]) if env else None
        related = []
        for suspect in suspects_now:
            if sources & set(suspect.check.requires):
                how = REQUIRES
            elif sources & suspect.reads:
                how = READS
            elif undone is not None and _verdict(run_one(suspect.check, undone)) != suspect.verdict:
                how = VERDICT
            else:
                continue
            trial = undone if undone is not None else _facts_undone(newer, older, meta[change["field"]])
            related.append({"check": suspect.check.id, "status": suspect.status, "before": suspect.before,
                            "how": how, "new": suspect.new,
                            "clears": not (_problems(run_one(suspect.check, trial)) & suspect.problems)})
        change["checks"] = sorted(related, key=lambda r: (not r["clears"], -rank_of(r["status"]), r["check"]))
        change["relevance"] = _tier(change, related)


def _env_undone(facts: Facts, before: Observations, name: str) -> Facts:
    """The newer facts re-read with one variable as it was in the older run (unset if it was)."""
    observations = facts.observations
    env = dict(observations.env)
    if name in before.env:
        env[name] = before.env[name]
    else:
        env.pop(name, None)
    return interpret(Observations(platform=observations.platform, env=env, target=observations.target,
                                  commands=observations.commands, files=observations.files,
                                  probes=observations.probes, probe_errors=observations.probe_errors))


def _facts_undone(newer: Facts, older: Facts, field_: F.Field) -> Facts:
    """The newer facts with this field as it was in the older run: its fact keys, or its one leaf of a fact."""
    values = {key: newer.get(key) for key in newer.keys()}
    if field_.path:
        (key,) = field_.sources
        values[key] = copy.deepcopy(values.get(key))
        _put(values[key], field_.path, F.at(older.get(key), field_.path))
    else:
        for key in field_.sources:
            values[key] = older.get(key) if older.has(key) else F.MISSING
    out = Facts(newer.observations)
    for key, value in values.items():
        if value is not F.MISSING:
            out.set(key, value)
    for key in field_.sources:
        if not older.has(key) and not field_.path:
            out.set_missing(key, older.why_missing(key))
    for key, why in newer.missing_dict().items():
        out.set_missing(key, why)
    return out


def _put(value: Any, path: tuple, new: Any) -> None:
    """Set (or, for F.MISSING, remove) the item at `path` inside `value`, in place."""
    parent, last = F.at(value, path[:-1]), path[-1]
    if isinstance(parent, dict):
        if new is F.MISSING:
            parent.pop(last, None)
        else:
            parent[last] = new
    elif isinstance(parent, list) and isinstance(last, int):
        if new is F.MISSING:
            if last < len(parent):
                parent.pop(last)
        elif last < len(parent):
            parent[last] = new
        else:
            parent.append(new)


def _tier(change: Mapping[str, Any], related: list[dict[str, Any]]) -> str:
    if any(r["new"] for r in related):
        return NEW_PROBLEM
    if related:
        return PROBLEM
    field_name, group = str(change.get("field", "")), change.get("group")
    if group == "live" or (group == "environment" and not F.gpu_env(field_name[len(F.ENV_PREFIX):])):
        return OTHER
    return GPU_STACK


def ranked(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most relevant first: the tier, whether undoing it alone clears a problem, how bad the worst related check
    is now, the group, the name."""
    def order(change):
        related = change.get("checks") or ()
        worst = max((rank_of(r["status"]) for r in related), default=-1)
        group = change.get("group")
        return (TIERS.index(change["relevance"]), not any(r["clears"] for r in related), -worst,
                GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER), change["field"])

    return sorted(changes, key=order)
