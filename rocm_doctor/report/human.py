"""Human-readable report: the verdict, what is wrong and what to do first, then every finding by area."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.plan import step_id
from rocm_doctor.report import diagnosis_view
from rocm_doctor.report.model import Report
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
    counts = report.summary()
    order = (Status.FAIL, Status.ERROR, Status.WARN, Status.INFO, Status.OK, Status.SKIP)
    parts = [f"{counts[s.value]} {s.value}" for s in order if counts[s.value]]
    worst = report.worst()
    verdict = {
        Status.FAIL: "Problems found",
        Status.ERROR: "Some checks could not run",
        Status.WARN: "Works, with warnings",
    }.get(worst, "No problems found")
    return f"{verdict}: {', '.join(parts) or 'no findings'}"


def render(report: Report, console: Console, verbose: bool = False) -> None:
    """Verdict, then "What is wrong" (root causes with their plan and symptoms), then the per-area detail."""
    plain = console.no_color or not console.is_terminal
    target = report.target
    header = f"rocm-doctor — {report.platform.get('system') or report.platform.get('os', '')} {report.platform.get('release') or ''}".rstrip()
    console.print(Text(header, style="bold"))
    if target.get("python"):
        # The reason often holds parentheses of its own ("the active virtual environment (VIRTUAL_ENV=...)").
        reason = str(target.get("reason") or "")
        console.print(f"Diagnosing {escape(str(target['python']))}" + (f" — {escape(reason)}" if reason else ""))
    if report.source != "live":
        console.print(f"Replayed from {escape(report.source)}")
    console.print()
    data = report.to_dict()
    console.print(Text(report.diagnosis.headline, style="bold"))
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
        console.print(Text(area.upper(), style="bold underline"))
        for finding in findings:
            _render_finding(console, finding, plain, verbose, finding.id in folded, diagnosis_view.shell_of(data))
        console.print()
    for name, lines in stage_lines(report.stages):
        console.print(Text(name.upper(), style="bold underline"))
        for line in lines:
            console.print(Text(f"  {line}"))
        console.print()
    skipped = report.summary()["skip"]
    if skipped and not verbose:
        console.print(Text(f"{skipped} check(s) skipped; -v shows why.", style="dim"))
    console.print(Text(summary_line(report), style="bold"))
    if report.diagnosis.plan:
        console.print("`rocm-doctor fix --dry-run` shows every change of this plan; `rocm-doctor fix` applies it.")


def _render_root(console: Console, root, plain: bool, verbose: bool) -> None:
    finding = root.finding
    status = Status(finding.get("status", "fail"))
    line = Text(f" {root.number}. ")
    line.append_text(_marker(status, plain))
    line.append(f" {finding.get('title', '')}: ", style="bold")
    line.append(str(finding.get("message", "")))
    console.print(line)
    for item in (finding.get("evidence") or [])[: None if verbose else 2]:
        console.print(Text(f"      evidence: {item}", style="dim"))
    for item in root.confirmed:
        console.print(Text(f"      confirmed by {item}", style="green"))
    for item in root.refuted:
        console.print(Text(f"      not seen: {item}", style="dim"))
    if root.new_since:
        console.print(Text(f"      {root.new_since[0]}", style="yellow"))
        for item in root.new_since[1:]:
            console.print(Text(f"        {item}", style="yellow"))
    if root.steps:
        console.print(Text("    Do this:", style="bold cyan"))
        for n, step in enumerate(root.steps, 1):
            _render_step(console, f"{n}.", step)
    for advice in finding.get("remediation") or []:
        console.print(Text(f"    advice: {advice}" if plain else f"    → {advice}", style="cyan"))
    for alt in root.alternatives:
        label = "workaround" if alt.workaround else "alternative"
        console.print(Text(f"    Or ({label}): {alt.title}", style="cyan"))
        if alt.why_not_first:
            console.print(Text(f"      second because: {alt.why_not_first}", style="dim"))
        for step in alt.steps:
            _render_step(console, "-", step)
    if root.symptoms:
        console.print(Text("    This also explains:", style="bold"))
        for symptom in root.symptoms:
            mark = PLAIN_MARKERS[Status(symptom.get("status", "warn"))].strip()
            console.print(Text(f"      {mark} {symptom.get('title', '')}: {symptom.get('message', '')}"))


def _render_step(console: Console, bullet: str, step) -> None:
    line = Text(f"      {bullet} {step.summary}" + (f" ({step.how})" if step.how else ""), style="cyan")
    line.append(f"  [{step.id}]", style="dim")
    console.print(line)
    for command in step.commands:
        # printed whole on its own line: a wrapped command breaks when pasted
        console.print(Text(f"          {command}"), soft_wrap=True, overflow="ignore", crop=False)


def _render_finding(console: Console, finding: Finding, plain: bool, verbose: bool, diagnosed: bool,
                    shell: str) -> None:
    line = Text("  ")
    line.append_text(_marker(finding.status, plain))
    line.append(f" {finding.title}: ", style="bold")
    line.append(finding.message)
    if verbose:
        line.append(f"  ({finding.id})", style="dim")
    console.print(line)
    if diagnosed and not verbose:
        return  # its advice is under "What is wrong"
    if verbose and not diagnosed:  # a root cause's steps are under "What is wrong"; these are an info's
        for step in finding.fix:
            _render_step(console, "-", diagnosis_view.step_view(step, shell, step_id(step), planned=False))
    if finding.status in (Status.FAIL, Status.WARN, Status.ERROR) or verbose:
        for step in finding.remediation:
            console.print(Text(f"      → {step}" if not plain else f"      fix: {step}", style="cyan"))
    if verbose:
        for item in finding.evidence:
            console.print(Text(f"      · {item}" if not plain else f"      evidence: {item}", style="dim"))
