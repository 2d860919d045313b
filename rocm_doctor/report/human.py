"""Human-readable report: the verdict, what is wrong and what to do first, then every finding by area."""

from __future__ import annotations

import shlex
from typing import Sequence

from rich.console import Console
from rich.text import Text

from rocm_doctor.engine.diagnosis import hint, verdict_word
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.plan import step_id
from rocm_doctor.engine.steps import FLAG
from rocm_doctor.report import diagnosis_view
from rocm_doctor.report.model import Report
from rocm_doctor.report.sharing import screen_note
from rocm_doctor.report.stage_summary import stage_lines

MARKERS = {
    Status.OK: ("✓", "green"),
    Status.INFO: ("i", "blue"),
    Status.WARN: ("!", "yellow"),
    Status.FAIL: ("✗", "bold red"),
    Status.ERROR: ("E", "magenta"),
    Status.SKIP: ("-", "dim"),
}
PLAIN_MARKERS = {
    Status.OK: "[ok]  ",
    Status.INFO: "[info]",
    Status.WARN: "[warn]",
    Status.FAIL: "[FAIL]",
    Status.ERROR: "[ERR] ",
    Status.SKIP: "[skip]",
}


def _marker(status: Status, plain: bool) -> Text:
    if plain:
        return Text(PLAIN_MARKERS[status])
    symbol, style = MARKERS[status]
    return Text(f"[{symbol}]", style=style)


def summary_line(report: Report) -> str:
    """The footer: the headline's verdict word with the counts, so the two never disagree."""
    counts = report.summary()
    order = (Status.FAIL, Status.ERROR, Status.WARN, Status.INFO, Status.OK, Status.SKIP)
    parts = [f"{counts[s.value]} {s.value}" for s in order if counts[s.value]]
    return f"{verdict_word(report.diagnosis.verdict)}: {', '.join(parts) or 'no findings'}"


def render(report: Report, console: Console, verbose: bool = False, again: Sequence[str] = ()) -> None:
    """Verdict, then "What is wrong" (root causes with their plan and symptoms), then the per-area detail. `again`:
    the options that chose what was diagnosed, which the footer's commands repeat."""
    plain = console.no_color or not console.is_terminal
    target = report.target
    header = f"rocm-doctor — {report.platform.get('system') or report.platform.get('os', '')} {report.platform.get('release') or ''}".rstrip()
    console.print(Text(header, style="bold"))
    if target.get("python"):
        reason = str(target.get("reason") or "")
        _hang(console, "Diagnosing ", Text(str(target["python"]) + (f" — {reason}" if reason else "")))
    if target.get("environment"):
        _hang(console, "Judging ", Text(str(target["environment"])))
    if report.source != "live":
        _hang(console, "Replayed from ", Text(report.source))
    console.print()
    data = report.to_dict()
    _hang(console, "", Text(report.diagnosis.headline), "bold")
    if hint(report.diagnosis.verdict):
        _hang(console, "", Text(hint(report.diagnosis.verdict)))
    roots = diagnosis_view.build(data)
    if roots:
        console.print()
        console.print(Text("WHAT IS WRONG", style="bold underline"))
        for root in roots:
            _render_root(console, root, plain, verbose)
    console.print()
    folded = diagnosis_view.symptom_ids(data)
    areas: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.status is Status.SKIP and not verbose:
            continue
        areas.setdefault(finding.area, []).append(finding)
    for area, findings in areas.items():
        console.print(Text(heading(area), style="bold underline"))
        for finding in findings:
            _render_finding(console, finding, plain, verbose, finding.id in folded, diagnosis_view.shell_of(data))
        console.print()
    for name, lines in stage_lines(report.stages):
        console.print(Text(name.upper(), style="bold underline"))
        for line in lines:
            _hang(console, "  ", Text(line))
        console.print()
    if screen_note(report):
        _hang(console, "", words(screen_note(report)), "dim")
    skipped = report.summary()["skip"]
    if skipped and not verbose:
        console.print(Text(f"{skipped} check(s) skipped; -v shows why.", style="dim"))
    console.print(Text(summary_line(report), style="bold"))
    if report.diagnosis.plan:
        for line in next_commands(report, again):
            if line.startswith("rocm-doctor "):
                _command(console, line)
            else:
                console.print(Text(line))


def next_commands(report: Report, again: Sequence[str] = ()) -> list[str]:
    """The footer under a plan: preview it, then apply it. A replayed report's plan is for the machine it was
    recorded on, so only its preview is offered: `fix` here would act on this machine."""
    args = " ".join(shlex.quote(a) for a in again)
    tail = f" {args}" if args else ""
    if report.source != "live":
        return ["To see every change of this plan (for the machine it was recorded on; run fix there):",
                f"rocm-doctor fix --dry-run{tail}"]
    installs = any(item.step.mode == FLAG for item in report.diagnosis.plan.items)
    return ["To see every change of this plan, then apply it:", f"rocm-doctor fix --dry-run{tail}",
            f"rocm-doctor fix{' --allow-install' if installs else ''}{tail}"]


def heading(area: str) -> str:
    """An area's heading in words ("kernel-log" -> "KERNEL LOG"), not its key."""
    return area.replace("-", " ").upper()


def words(text: str, style: str = "") -> Text:
    """Prose for the terminal: a `quoted` name (Markdown in the checks' texts, for the Markdown report) loses its
    backticks and is shown in bold instead."""
    out = Text(style=style)
    for n, part in enumerate(text.split("`") if text.count("`") % 2 == 0 else [text]):
        out.append(part, style="bold" if n % 2 else "")
    return out


def _render_root(console: Console, root, plain: bool, verbose: bool) -> None:
    finding = root.finding
    status = Status(finding.get("status", "fail"))
    lead = Text(f" {root.number}. ")
    lead.append_text(_marker(status, plain))
    body = words(f"{finding.get('title', '')}: ", "bold")
    body.append_text(words(str(finding.get("message", ""))))
    _hang(console, lead + Text(" "), body)
    for item in (finding.get("evidence") or [])[: None if verbose else 2]:
        _hang(console, "      evidence: ", Text(str(item)), "dim")
    for item in root.confirmed:
        _hang(console, "      confirmed by ", Text(item), "green")
    for item in root.refuted:
        _hang(console, "      not seen: ", Text(item), "dim")
    if root.new_since:
        _hang(console, "      ", Text(root.new_since[0]), "yellow")
        for item in root.new_since[1:]:
            _hang(console, "        ", Text(item), "yellow")
    if root.steps:
        console.print(Text("    Do this:", style="bold cyan"))
        for n, step in enumerate(root.steps, 1):
            _render_step(console, f"{n}.", step)
    for advice in finding.get("remediation") or []:
        _hang(console, "    advice: " if plain else "    → ", words(str(advice)), "cyan")
    for alt in root.alternatives:
        label = "workaround" if alt.workaround else "alternative"
        _hang(console, f"    Or ({label}): ", Text(alt.title), "cyan")
        if alt.why_not_first:
            _hang(console, "      second because: ", Text(alt.why_not_first), "dim")
        for step in alt.steps:
            _render_step(console, "-", step)
    if root.symptoms:
        console.print(Text("    This also explains:", style="bold"))
        for symptom in root.symptoms:
            mark = _marker(Status(symptom.get("status", "warn")), plain)  # the marks the rest of the screen uses
            _hang(console, Text("      ") + mark + Text(" "),
                  words(f"{symptom.get('title', '')}: {symptom.get('message', '')}"))


def _render_step(console: Console, bullet: str, step) -> None:
    body = Text(step.summary + (f" ({step.how})" if step.how else ""), style="cyan")
    body.append(f"  [{step.id}]", style="dim")
    _hang(console, f"      {bullet} ", body)
    for command in step.commands:
        _command(console, command)


def _command(console: Console, command: str) -> None:
    """A command printed whole on its own line, past the terminal's edge if need be: a wrapped command breaks
    when pasted."""
    console.print(Text(f"          {command}"), soft_wrap=True, overflow="ignore", crop=False)


def _hang(console: Console, lead, body: Text, style: str = "") -> None:
    """`lead` then `body`, wrapped at word boundaries with the continuation lines indented under the body's start
    (a terminal wrapping a long line itself would start them at column 0)."""
    lead = Text(lead, style=style) if isinstance(lead, str) else lead
    if style:
        body.stylize(style)
    if console.soft_wrap:  # not a terminal: one line per item, the reader's pager or editor wraps it
        console.print(lead + body)
        return
    indent = Text(" " * lead.cell_len, style=style)
    for n, line in enumerate(body.wrap(console, max(20, console.width - lead.cell_len))):
        line.rstrip()
        console.print((lead if n == 0 else indent) + line, no_wrap=True, crop=False)


def _render_finding(console: Console, finding: Finding, plain: bool, verbose: bool, diagnosed: bool,
                    shell: str) -> None:
    lead = Text("  ")
    lead.append_text(_marker(finding.status, plain))
    body = words(f"{finding.title}: ", "bold")
    body.append_text(words(finding.message))
    _hang(console, lead + Text(" "), body)
    if diagnosed and not verbose:
        return  # its advice is under "What is wrong"
    if verbose and not diagnosed:  # a root cause's steps are under "What is wrong"; these are an info's
        for step in finding.fix:
            _render_step(console, "-", diagnosis_view.step_view(step, shell, step_id(step), planned=False))
    if finding.status in (Status.FAIL, Status.WARN, Status.ERROR) or verbose:
        for step in finding.remediation:
            _hang(console, "      fix: " if plain else "      → ", words(step), "cyan")
    if verbose:
        for item in finding.evidence:
            _hang(console, "      evidence: " if plain else "      · ", Text(item), "dim")
        _hang(console, "      about this check: ", Text(f"rocm-doctor explain {finding.check}"), "dim")
