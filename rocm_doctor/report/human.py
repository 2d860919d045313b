"""Human-readable report: grouped by area, one marker per finding, worst first, evidence under -v."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from rocm_doctor.engine.model import Finding, Status
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

    areas: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.status is Status.SKIP and not verbose:
            continue
        areas.setdefault(finding.area, []).append(finding)
    for area, findings in areas.items():
        console.print(Text(area.upper(), style="bold underline"))
        for finding in findings:
            _render_finding(console, finding, plain, verbose)
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
    fixable = sum(1 for f in report.findings if getattr(f, "fix", None) and f.status in (Status.FAIL, Status.WARN))
    if fixable:
        console.print(f"{fixable} finding(s) have a fix plan: `rocm-doctor fix --dry-run` shows the exact changes.")


def _render_finding(console: Console, finding: Finding, plain: bool, verbose: bool) -> None:
    line = Text("  ")
    line.append_text(_marker(finding.status, plain))
    line.append(f" {finding.title}: ", style="bold")
    line.append(finding.message)
    if verbose:
        line.append(f"  ({finding.id})", style="dim")
    console.print(line)
    if finding.status in (Status.FAIL, Status.WARN, Status.ERROR) or verbose:
        for step in finding.remediation:
            console.print(Text(f"      → {step}" if not plain else f"      fix: {step}", style="cyan"))
    if verbose:
        for item in finding.evidence:
            console.print(Text(f"      · {item}" if not plain else f"      evidence: {item}", style="dim"))
