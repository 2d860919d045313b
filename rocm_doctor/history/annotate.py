"""What `check` does with the run history: says of each root cause that an earlier run did not have when it was
last absent and what changed since in the facts its check needs, then adds this run to the history."""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from rocm_doctor.engine.engine import run_one
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.snapshot import SnapshotError
from rocm_doctor.history import rundiff, store
from rocm_doctor.interpret import interpret

SHOWN = ("field", "before", "after", "added", "removed", "hidden")


def after_check(report: Any, facts: Facts, add: bool) -> Optional[str]:
    """Annotate the report's root causes from the history and (with `add`) record this run; returns the one
    thing to tell the user when the history could not be read or written."""
    from rocm_doctor.engine.registry import load_registry
    from rocm_doctor.fix.journal import JournalError, trusted_state_dir

    try:
        state = trusted_state_dir()
    except JournalError as exc:  # as root, a user's folder is neither read nor written
        return f"the run history was not used: {exc}"
    note = None
    if report.diagnosis.root_causes and store.folder(state).is_dir():
        try:
            mine = store.subject(facts.observations)
            runs = (r for r in store.newest_first(store.folder(state)) if r.subject == mine)  # like with like
            annotate(report, facts, runs, load_registry().checks)
        except Exception as exc:  # the history is an aid: a bug in reading it must not cost the user the report
            note = f"the run history could not be compared with this run ({type(exc).__name__}: {exc})"
    if add:
        note = store.record(state, report, facts.observations) or note
    return note


def annotate(report: Any, facts: Facts, runs: Iterable[store.StoredRun], checks: Sequence[type]) -> None:
    """Set `new_since` on each root cause from the newest earlier run without it, walking back through `runs`
    (newest first); a run that cannot tell (it lacks a fact the check requires) is passed over."""
    by_id = {c.id: c for c in checks}
    now = rundiff.statuses(report)
    pending = {r.finding.id: r for r in report.diagnosis.root_causes if r.finding.check in by_id}
    for run in runs:
        if not pending:
            return
        absent = [root for finding_id, root in pending.items() if finding_id not in run.problems]
        if not absent:
            continue
        try:
            older = interpret(run.observations())
        except SnapshotError:
            continue
        for root in absent:
            check = by_id[root.finding.check]
            if not all(older.has(key) for key in check.requires):
                continue  # that run cannot tell: the check had not the facts it needs (a stage that did not run)
            outcome = run_one(check, older)
            if any(f.id == root.finding.id and f.is_problem for f in outcome):
                continue  # today's check finds it there: it is older than that run
            pending.pop(root.finding.id)
            before = {check.id: max(outcome, key=lambda f: f.status.rank).status.value}
            items, _ = rundiff.changes(older, facts, before, now, [check], only=check.id)
            root.new_since = {"date": run.created_at, "run": run.id,
                              "changes": [{**{k: item[k] for k in SHOWN if k in item},
                                           "how": item["checks"][0]["how"], "clears": item["checks"][0]["clears"]}
                                          for item in items if item["checks"]]}
