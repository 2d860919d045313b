"""The one comparison behind `fleet diff` (node against node) and `diff` (run against run): flat summaries side by
side, the fields whose values differ, and the checks whose worst status differs (pure functions)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

STATUS_ORDER = ("fail", "error", "warn", "info", "ok", "skip")
ABSENT = "absent"


def flatten(summary: Mapping[str, Any]) -> dict[str, Any]:
    """One level: `env` and other dicts become `name.key` fields, lists one comma-joined value."""
    flat = {}
    for key, value in summary.items():
        if key == "env" and isinstance(value, Mapping):
            for name, text in value.items():
                flat[f"env.{name}"] = text
        elif isinstance(value, list):
            flat[key] = ", ".join(map(str, value))
        elif isinstance(value, Mapping):
            for sub, text in value.items():
                flat[f"{key}.{sub}"] = text
        else:
            flat[key] = value
    return flat


def key(value: Any) -> str:
    """Values compare by their repr: 1 and "1", None and "" stay different."""
    return repr(value)


def differences(flats: Sequence[Mapping[str, Any]]) -> tuple[list[tuple[str, list[Any]]], list[str]]:
    """([(field, its value in each summary)] where they differ, [fields equal everywhere]), fields sorted."""
    differ, same = [], []
    for field in sorted({k for flat in flats for k in flat}):
        values = [flat.get(field) for flat in flats]
        if len({key(v) for v in values}) <= 1:
            same.append(field)
        else:
            differ.append((field, values))
    return differ, same


def finding_statuses(report: Mapping[str, Any]) -> dict[str, str]:
    """check id -> worst status over its findings."""
    worst: dict[str, str] = {}
    for f in report.get("findings") or []:
        check, status = f.get("check") or f.get("id"), f.get("status")
        if check is None or status not in STATUS_ORDER:
            continue
        if check not in worst or STATUS_ORDER.index(status) < STATUS_ORDER.index(worst[check]):
            worst[check] = status
    return worst


def status_differences(statuses: Sequence[Mapping[str, str]]) -> list[tuple[str, list[str]]]:
    """[(check, its worst status in each report, "absent" where it did not run)] where they differ."""
    out = []
    for check in sorted({c for s in statuses for c in s}):
        values = [s.get(check, ABSENT) for s in statuses]
        if len(set(values)) > 1:
            out.append((check, values))
    return out
