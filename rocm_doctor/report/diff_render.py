"""`rocm-doctor diff` as people read it: the two runs, what changed with the most relevant change first and the
check it bears on, the checks whose verdict changed, and the fix runs in between (human and Markdown). The
wording of one change is shared with the diagnosis, which shows the same lines under a root cause that is new."""

from __future__ import annotations

import datetime as _dt
import html
from typing import Any, Mapping

from rich.console import Console
from rich.text import Text

from rocm_doctor.engine.diagnosis import verdict_word

HOW = {"requires": "it requires this fact", "reads": "it reads this fact",
       "changes its verdict": "with the earlier value its verdict differs"}
SHORT = 160  # a value longer than this is cut in the terminal (the JSON has it whole)


def when(text: Any) -> str:
    """An ISO time as the user's local "YYYY-MM-DD HH:MM"; the text itself when it is no time."""
    try:
        moment = _dt.datetime.fromisoformat(str(text))
    except ValueError:
        return str(text or "an unknown time")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _value(value: Any) -> str:
    if value is None:
        return "(unset)"
    if value == "":
        return "''"
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def change_text(item: Mapping[str, Any]) -> str:
    """One change on one line: `field: before → after`; a list says which entries came (+) and went (-)."""
    name = str(item.get("field"))
    if item.get("hidden"):
        return f"{name}: changed (the values are redacted)"
    if "added" in item or "removed" in item:
        entries = [f"+{x}" for x in item.get("added") or []] + [f"-{x}" for x in item.get("removed") or []]
        return f"{name}: " + (_value(", ".join(entries)) if entries else "the same entries in another order")
    return f"{name}: {_value(item.get('before'))} → {_value(item.get('after'))}"


def _how(relation: Mapping[str, Any]) -> str:
    text = HOW.get(relation.get("how"), str(relation.get("how")))
    return text + (", and undoing only this change clears the problem" if relation.get("clears") else "")


def why_text(item: Mapping[str, Any]) -> str:
    """Which check now reporting a problem the change bears on, and how; else what kind of change it is."""
    related = item.get("checks") or []
    if related:
        return "; ".join(f"{r['check']} (now {r['status']}, was {r['before']}): {_how(r)}" for r in related)
    if item.get("relevance") == "gpu-stack":
        return "part of the GPU stack; no check that now reports a problem needs it"
    return "no check needs it"


def new_since_lines(new_since: Mapping[str, Any]) -> list[str]:
    """The root-cause annotation: when it was last absent, and what changed since in what its check needs."""
    head = f"new since {when(new_since.get('date'))} (run {new_since.get('run')}, the last one without it)"
    changes = new_since.get("changes") or []
    if not changes:
        return [head + "; nothing this check needs changed in what was recorded"]
    return [head + "; changed since, in what this check needs:"] + [
        f"{change_text(c)} ({_how(c)})" for c in changes]


def run_list_lines(rows: list[Mapping[str, Any]], markdown: bool = False) -> list[str]:
    """`diff --list`: one line per stored run, oldest first."""
    if not rows:
        return ["No run is stored yet: each `rocm-doctor check` adds one."]
    lines = []
    for row in rows:
        causes = ", ".join(map(str, row.get("root_causes") or [])) or "-"
        line = (f"{row['run']}  {when(row.get('created_at'))}  {verdict_word(str(row.get('verdict'))):<30} "
                f"{row.get('diagnosed') or '?'}  {causes}")
        lines.append(f"- {_esc(line)}" if markdown else line)
    return lines


def _run_line(label: str, side: Mapping[str, Any]) -> str:
    name = side.get("run") or side.get("source")
    then = side.get("verdict_then")
    verdict = verdict_word(str(side.get("verdict"))) + (
        f" (recorded then: {verdict_word(then)})" if then and then != side.get("verdict") else "")
    chosen = f" — {side['chosen']}" if side.get("chosen") else ""
    return f"  {label}  {name}  {when(side.get('created_at'))}  {verdict}{chosen}"


def apart_lines(doc: Mapping[str, Any]) -> list[str]:
    """Two runs that diagnosed different things (two venvs, a service and a shell, two users): what each was."""
    a, b = doc.get("a") or {}, doc.get("b") or {}
    return ["A and B diagnosed different things, so nearly every fact differs; compare runs of the same one:",
            f"  A diagnosed {a.get('diagnosed')}", f"  B diagnosed {b.get('diagnosed')}"]


def _summary_line(doc: Mapping[str, Any]) -> str:
    summary = doc.get("summary") or {}
    relevant, other, findings = summary.get("relevant", 0), summary.get("other", 0), summary.get("findings", 0)
    if doc.get("different_subjects"):
        return f"A and B diagnosed different things; {findings} check(s) differ in their verdict."
    if not relevant and not findings:
        return "No relevant change" + (f" ({other} other change(s) that no check needs)." if other else ".")
    return f"{relevant} relevant change(s), {other} other; {findings} check(s) changed their verdict."


def render_human(doc: Mapping[str, Any], console: Console) -> None:
    console.print(Text("rocm-doctor diff", style="bold"))
    console.print(Text(_run_line("A", doc.get("a") or {})))
    console.print(Text(_run_line("B", doc.get("b") or {})))
    items = doc.get("changes") or []
    shown = [i for i in items if i.get("relevance") != "other"]
    others = [i for i in items if i.get("relevance") == "other"]
    console.print()
    if doc.get("different_subjects"):  # every fact differs between two environments: a list would say nothing
        for n, line in enumerate(apart_lines(doc)):
            console.print(Text(line, style="bold" if n == 0 else ""), soft_wrap=True)
        shown, others = [], []
    else:
        console.print(Text("WHAT CHANGED, MOST RELEVANT FIRST", style="bold underline"))
    if not shown and not doc.get("different_subjects"):
        console.print(Text("  nothing in torch, ROCm, the driver, the kernel, the GPUs or the GPU variables"))
    for number, item in enumerate(shown, 1):
        style = "bold" if item.get("checks") else ""
        console.print(Text(f" {number}. {change_text(item)}", style=style), soft_wrap=True)
        console.print(Text(f"      {why_text(item)}", style="dim"))
    if others:
        console.print(Text("  Other changes (no check needs them): " + ", ".join(str(i["field"]) for i in others),
                           style="dim"))
    findings = doc.get("findings") or []
    if findings:
        console.print()
        console.print(Text("CHECKS WHOSE VERDICT CHANGED", style="bold underline"))
        for f in findings:
            console.print(Text(f"  {f['check']}: {f['before']} → {f['after']}"))
    fix_runs = doc.get("fix_runs")
    if fix_runs:
        console.print()
        console.print(Text("FIX RUNS IN BETWEEN", style="bold underline"))
        for run in fix_runs:
            console.print(Text(f"  {run.get('run')} ({when(run.get('started'))}): {run.get('status')}, "
                               f"{run.get('applied', 0)} change(s)"))
            for line in run.get("changes") or []:
                console.print(Text(f"    - {line}"))
    console.print()
    console.print(Text(_summary_line(doc), style="bold"))


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def render_markdown(doc: Mapping[str, Any]) -> str:
    lines = ["### rocm-doctor diff", "", "| | Run | Date | Verdict |", "|---|---|---|---|"]
    for label in ("a", "b"):
        side = doc.get(label) or {}
        chosen = f" — {side['chosen']}" if side.get("chosen") else ""
        lines.append(f"| {label.upper()} | {_esc(side.get('run') or side.get('source'))} | "
                     f"{_esc(when(side.get('created_at')))} | {_esc(verdict_word(str(side.get('verdict'))))}{_esc(chosen)} |")
    items = [] if doc.get("different_subjects") else doc.get("changes") or []
    shown = [i for i in items if i.get("relevance") != "other"]
    if doc.get("different_subjects"):
        lines += [""] + [_esc(line.strip()) for line in apart_lines(doc)]
    elif shown:
        lines += ["", "#### What changed, most relevant first", "", "| # | Change | Why it matters |", "|---|---|---|"]
        lines += [f"| {n} | {_esc(change_text(i))} | {_esc(why_text(i))} |" for n, i in enumerate(shown, 1)]
    else:
        lines += ["", "#### What changed, most relevant first", "",
                  "Nothing in torch, ROCm, the driver, the kernel, the GPUs or the GPU variables."]
    others = [str(i["field"]) for i in items if i.get("relevance") == "other"]
    if others:
        lines += ["", "Other changes (no check needs them): " + _esc(", ".join(others))]
    findings = doc.get("findings") or []
    if findings:
        lines += ["", "#### Checks whose verdict changed", ""]
        lines += [f"- `{f['check']}`: {f['before']} → {f['after']}" for f in findings]
    fix_runs = doc.get("fix_runs")
    if fix_runs:
        lines += ["", "#### Fix runs in between", ""]
        for run in fix_runs:
            lines.append(f"- `{run.get('run')}` ({_esc(when(run.get('started')))}): {_esc(run.get('status'))}, "
                         f"{run.get('applied', 0)} change(s)")
            lines += [f"  - {_esc(line)}" for line in run.get("changes") or []]
    lines += ["", f"**{_esc(_summary_line(doc))}**", ""]
    return "\n".join(lines)
