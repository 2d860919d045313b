"""Two runs compared: the facts that changed, most relevant first, the checks whose verdict changed and the fix
runs in between — the document `rocm-doctor diff` prints (human, JSON, Markdown).

Both runs are judged again from their observations by today's parsers and checks, so a difference is a change
of the machine, not of rocm-doctor. Values are redacted as reports redact them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from rocm_doctor.compare import engine, fields, relevance
from rocm_doctor.engine.model import Check
from rocm_doctor.facts.facts import Facts
from rocm_doctor.history import store
from rocm_doctor.history.sides import Side, describe
from rocm_doctor.report.redact import Redactor, local_identities
from rocm_doctor.report.envelope import envelope

COUNTED = (relevance.NEW_PROBLEM, relevance.PROBLEM, relevance.GPU_STACK)  # what makes the exit code 1


@dataclass
class Judged:
    side: Side
    report: Any  # rocm_doctor.report.model.Report
    facts: Facts

    @property
    def statuses(self) -> dict[str, str]:
        return statuses(self.report)


def statuses(report: Any) -> dict[str, str]:
    """check id -> its worst status in a report."""
    return engine.finding_statuses({"findings": [{"check": f.check, "status": f.status.value}
                                                 for f in report.findings]})


def judge(side: Side) -> Judged:
    from rocm_doctor.diagnose import replay

    report, facts = replay(side.observations, side.source if side.source != "history" else f"history:{side.run_id}")
    return Judged(side, report, facts)


def changes(older: Facts, newer: Facts, before: Mapping[str, str], now: Mapping[str, str],
            checks: Sequence[type[Check]], only: Optional[str] = None) -> tuple[list[dict[str, Any]], list[str]]:
    """(the fields that differ, ranked and tied to the checks now reporting a problem; the fields that do not).
    With `only`, just that check is tied."""
    required = {key for check in checks for key in check.requires}
    old_summary, old_meta = fields.summary(older, required)
    new_summary, new_meta = fields.summary(newer, required)
    meta = {**old_meta, **new_meta}
    differing, same = engine.differences([engine.flatten(old_summary), engine.flatten(new_summary)])
    items = _whole_items([{"field": name, "group": meta[name].group, "before": old_summary.get(name),
                           "after": new_summary.get(name), "sources": list(meta[name].sources)}
                          for name, _ in differing], meta, older, newer)
    suspects = relevance.suspects(checks, now, before, newer, only)
    relevance.relate(items, suspects, older, newer, meta)
    _redact(items, meta, older.observations.env, newer.observations.env)
    for item in items:
        _entries(item)
    return relevance.ranked(items), same


def _whole_items(items: list[dict[str, Any]], meta: dict[str, fields.Field], older: Facts,
                 newer: Facts) -> list[dict[str, Any]]:
    """The leaves of a list item that only one run has (a process that came, a GPU that went) as one change."""
    out, seen = [], set()
    for item in items:
        field = meta[item["field"]]
        path = _lone_item(field, older, newer)
        if path is None:
            out.append(item)
            continue
        key = field.sources[0]
        name = fields.leaf_name(key, path)
        if name not in seen:
            seen.add(name)
            meta[name] = fields.Field(name, field.group, field.sources, path=path)
            out.append(dict(item, field=name, before=_compact(fields.at(older.get(key), path)),
                            after=_compact(fields.at(newer.get(key), path))))
    return out


def _lone_item(field: fields.Field, older: Facts, newer: Facts) -> Optional[tuple]:
    """The path of the list item holding this leaf when only one of the runs has that item."""
    if not field.path:
        return None
    key = field.sources[0]
    for n, step in enumerate(field.path, 1):
        if isinstance(step, int) and fields.MISSING in (fields.at(older.get(key), field.path[:n]),
                                                        fields.at(newer.get(key), field.path[:n])):
            return field.path[:n]
    return None


def _compact(value: Any) -> Any:
    if value is fields.MISSING:
        return None
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items() if not isinstance(v, (dict, list))
                         and str(k) not in fields.VOLATILE_LEAVES)
    return value


def _entries(item: dict[str, Any]) -> None:
    """For a list, or a variable holding a path list: the entries that came (`added`) and went (`removed`)."""
    before, after = item["before"], item["after"]
    if item["field"].upper().endswith("PATH") and isinstance(before, str) and isinstance(after, str):
        sep = ";" if ";" in before + after else ":"
        before, after = before.split(sep), after.split(sep)
    if isinstance(before, list) and isinstance(after, list):
        item["added"] = [x for x in after if x not in before]
        item["removed"] = [x for x in before if x not in after]


def _redact(items: list[dict[str, Any]], meta: Mapping[str, fields.Field], old_env: Mapping[str, str],
            new_env: Mapping[str, str]) -> None:
    """Values as a report shows them, each read where it sits (a variable of a service's environment is a variable,
    an argv an argv: `run.env.env.AWS_SECRET_ACCESS_KEY` is masked by its name); a change whose values are hidden
    on both sides says only that it changed."""
    places = [_place(item, meta) for item in items]
    masked = Redactor(local_identities()).redact({
        "environments": [{"env": dict(old_env)}, {"env": dict(new_env)}],
        "items": [{"before": _nest(keys, item["before"]), "after": _nest(keys, item["after"])}
                  for keys, item in zip(places, items)]})
    for keys, item, both in zip(places, items, masked["items"]):
        before, after = _unnest(keys, both["before"]), _unnest(keys, both["after"])
        if before == after and item["before"] != item["after"]:
            item["hidden"] = True
        item["before"], item["after"] = before, after


def _place(item: Mapping[str, Any], meta: Mapping[str, fields.Field]) -> tuple[str, ...]:
    """The keys above a change's value: `env` and the variable, or the fact key and the keys inside the fact."""
    if item["group"] == "environment":
        return ("env", item["field"][len(fields.ENV_PREFIX):])
    field = meta.get(item["field"])
    if field is None or not field.sources:
        return (str(item["field"]),)
    if not field.path:
        return (field.sources[0], field.name)
    return (field.sources[0], *(str(step) for step in field.path if not isinstance(step, int)))


def _nest(keys: tuple[str, ...], value: Any) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


def _unnest(keys: tuple[str, ...], value: Any) -> Any:
    """The value back from its nest (by position: a key that names a user comes back redacted too)."""
    for _ in keys:
        value = next(iter(value.values()), None) if isinstance(value, dict) else None
    return value


def fix_runs(state: Path, older: Side, newer: Side) -> Optional[list[dict[str, Any]]]:
    """The fix runs started between the two runs (None when a run's time is unknown)."""
    from rocm_doctor.fix import journal

    start, end = store.parse_time(older.created_at), store.parse_time(newer.created_at)
    if start is None or end is None:
        return None
    try:
        recorded = [journal.summarise(j) for j in journal.runs(state)]
    except OSError:
        return []
    out = []
    for summary in recorded:
        started = store.parse_time(summary.started)
        if started is not None and start < started <= end:
            out.append(summary.to_dict())
    return out


def document(older: Judged, newer: Judged, checks: Sequence[type[Check]], state: Path) -> dict[str, Any]:
    """The diff of two judged runs."""
    items, same = changes(older.facts, newer.facts, older.statuses, newer.statuses, checks)
    findings = [{"check": check, "before": values[0], "after": values[1]}
                for check, values in engine.status_differences([older.statuses, newer.statuses])]
    findings.sort(key=lambda f: (-relevance.rank_of(f["after"]) + relevance.rank_of(f["before"]), f["check"]))
    counted = sum(1 for item in items if item["relevance"] in COUNTED)
    apart = older.side.subject != newer.side.subject
    a, b, between = Redactor(local_identities()).redact([_side(older), _side(newer),
                                                        fix_runs(state, older.side, newer.side)])
    return envelope("diff", redacted=True, a=a, b=b, changes=items, same=same, findings=findings,
                    different_subjects=apart, fix_runs=between,
                    summary={"relevant": counted, "other": len(items) - counted, "findings": len(findings)})


def _side(judged: Judged) -> dict[str, Any]:
    side, diagnosis = judged.side, judged.report.diagnosis
    return {"run": side.run_id, "source": side.source, "created_at": side.created_at, "chosen": side.chosen,
            "verdict": diagnosis.verdict, "verdict_then": side.verdict, "headline": diagnosis.headline,
            "root_causes": [r.finding.id for r in diagnosis.root_causes], "subject": side.subject,
            "diagnosed": describe(side.subject)}


def has_changes(doc: Mapping[str, Any]) -> bool:
    summary = doc.get("summary") or {}
    return bool(summary.get("relevant") or summary.get("findings"))
