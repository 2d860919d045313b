"""Human-readable report: the verdict, what is wrong and what to do first, then one line per area with its problems
(every finding, and the versions block, with -v)."""

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
from rocm_doctor.report.versions import summary
from rocm_doctor.report.wrapping import quoted_parts, wrap

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


PROBLEMS = (Status.FAIL, Status.ERROR, Status.WARN)
AREA_VERSIONS = {"torch": ("torch", "numpy"), "platform": ("OS", "Python"), "amd": ("ROCm (HIP)", "GPUs"),
                 "gpu-state": ("GPU driver", "GPUs"), "windows-hip": ("ROCm (HIP)",), "windows": ("GPU driver",)}


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
    """Verdict, then "What is wrong" (root causes with their plan and symptoms), then the areas. `again`: the
    options that chose what was diagnosed, which the footer's commands repeat."""
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
    _render_areas(console, report, data, plain, verbose)
    for name, lines in stage_lines(report.stages):
        console.print(Text(name.upper(), style="bold underline"))
        for line in lines:
            _hang(console, "  ", words(line))
        console.print()
    if screen_note(report):
        _hang(console, "", words(screen_note(report)), "dim")
    skipped = report.summary()["skip"]
    if not verbose:
        shows = ["every check", *(["the versions found"] if report.versions else []),
                 *([f"why {skipped} were skipped"] if skipped else [])]
        listed = " and ".join([", ".join(shows[:-1]), shows[-1]] if len(shows) > 1 else shows)
        _hang(console, "", Text(f"-v shows {listed}."), "dim")
    console.print(Text(summary_line(report), style="bold"))
    if report.diagnosis.plan:
        for line in next_commands(report, again):
            if line.startswith("rocm-doctor "):
                _command(console, line)
            else:
                _hang(console, "", Text(line))


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
    for n, part in enumerate(quoted_parts(text)):
        out.append(part, style="bold" if n % 2 else "")
    return out


def _render_areas(console: Console, report: Report, data: dict, plain: bool, verbose: bool) -> None:
    """By default one line per area and its problems in full (a root cause or symptom by its title: it is in full
    under "What is wrong"); with -v the versions block, then every finding of each area under its heading."""
    folded = diagnosis_view.symptom_ids(data)
    areas: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.status is not Status.SKIP or verbose:
            areas.setdefault(finding.area, []).append(finding)
    if verbose:
        if report.versions:
            _render_versions(console, report.versions)
        for area, findings in areas.items():
            console.print(Text(heading(area), style="bold underline"))
            for finding in findings:
                _render_finding(console, finding, plain, True, finding.id in folded, diagnosis_view.shell_of(data))
            console.print()
        return
    for area, findings in areas.items():
        _render_area_line(console, area, findings, report.versions, plain)
        for finding in filter(_in_full, findings):
            if finding.id in folded:
                _hang(console, Text("  ") + _marker(finding.status, plain) + Text(" "),
                      words(f"{finding.title} (under What is wrong)"))
            else:
                _render_finding(console, finding, plain, False, False, diagnosis_view.shell_of(data))  # a note
    if areas:
        console.print()


def _render_versions(console: Console, versions: list[dict]) -> None:
    """The versions block (report/versions.py), one name and its value a line."""
    console.print(Text("VERSIONS", style="bold underline"))
    width = max(len(str(v.get("name", ""))) for v in versions)
    for item in versions:
        _hang(console, f"  {str(item.get('name', '')):<{width}}  ", words(str(item.get("value", ""))),
              "" if item.get("found") else "dim")
    console.print()


def _render_area_line(console: Console, area: str, findings: list[Finding], versions: list[dict], plain: bool) -> None:
    """The default view's one line for an area: its worst mark, what it found (from the versions block) and how
    many checks passed (notes with nothing to do count as passed); its problems follow in full."""
    worst = max((f.status for f in findings if _in_full(f)), key=lambda s: s.rank, default=Status.OK)
    passed = sum(1 for f in findings if not _in_full(f))
    found = summary(versions, AREA_VERSIONS.get(area, ()))
    body = Text(heading(area), style="bold")
    if found:
        body.append(": ")
        body.append_text(words(found))
    if passed:
        body.append(f" ({passed} {'check' if passed == 1 else 'checks'} passed)", style="dim")
    _hang(console, _marker(worst, plain) + Text(" "), body)


def _in_full(finding: Finding) -> bool:
    """Shown in full in the default view: a problem, or a note with something to do."""
    return finding.status in PROBLEMS or (finding.status is Status.INFO and bool(finding.remediation or finding.fix))


def _render_root(console: Console, root, plain: bool, verbose: bool) -> None:
    finding = root.finding
    status = Status(finding.get("status", "fail"))
    lead = Text(f" {root.number}. ")
    lead.append_text(_marker(status, plain))
    body = words(f"{finding.get('title', '')}: ", "bold")
    body.append_text(words(str(finding.get("message", ""))))
    _hang(console, lead + Text(" "), body)
    for item in (finding.get("evidence") or [])[: None if verbose else 2]:
        _hang(console, "      evidence: ", words(str(item)), "dim")
    for item in root.confirmed:
        _hang(console, "      confirmed by ", words(item), "green")
    for item in root.refuted:
        _hang(console, "      not seen: ", words(item), "dim")
    if root.new_since:
        _hang(console, "      ", words(root.new_since[0]), "yellow")
        for item in root.new_since[1:]:
            _hang(console, "        ", words(item), "yellow")
    if root.steps:
        console.print(Text("    Do this:", style="bold cyan"))
        for n, step in enumerate(root.steps, 1):
            _render_step(console, f"{n}.", step)
    for advice in finding.get("remediation") or []:
        _hang(console, "    advice: " if plain else "    → ", words(str(advice)), "cyan")
    for alt in root.alternatives:
        label = "workaround" if alt.workaround else "alternative"
        _hang(console, f"    Or ({label}): ", words(alt.title), "cyan")
        if alt.why_not_first:
            _hang(console, "      second because: ", words(alt.why_not_first), "dim")
        for step in alt.steps:
            _render_step(console, "-", step)
    if root.symptoms:
        console.print(Text("    This also explains:", style="bold"))
        for symptom in root.symptoms:
            mark = _marker(Status(symptom.get("status", "warn")), plain)  # the marks the rest of the screen uses
            _hang(console, Text("      ") + mark + Text(" "),
                  words(f"{symptom.get('title', '')}: {symptom.get('message', '')}"))


def _render_step(console: Console, bullet: str, step) -> None:
    body = words(step.summary + (f" ({step.how})" if step.how else ""), "cyan")
    body.append(f"  [{step.id}]", style="dim")
    _hang(console, f"      {bullet} ", body)
    for command in step.commands:
        _command(console, command)


def _command(console: Console, command: str) -> None:
    """A command printed whole on its own line, past the terminal's edge if need be: a wrapped command breaks
    when pasted."""
    console.print(Text(f"          {command}"), soft_wrap=True, overflow="ignore", crop=False)


def _hang(console: Console, lead, body: Text, style: str = "") -> None:
    """`lead` then `body`, wrapped at spaces with the continuation lines indented under the body's start (a
    terminal wrapping a long line itself would start them at column 0); a path or URL is never split."""
    lead = Text(lead, style=style) if isinstance(lead, str) else lead
    if style:
        body.stylize(style)
    if console.soft_wrap:  # not a terminal: one line per item, the reader's pager or editor wraps it
        console.print(lead + body)
        return
    indent = Text(" " * lead.cell_len, style=style)
    for n, line in enumerate(wrap(body, max(20, console.width - lead.cell_len))):
        console.print((lead if n == 0 else indent) + line, soft_wrap=True, overflow="ignore", crop=False)


def _render_finding(console: Console, finding: Finding, plain: bool, verbose: bool, diagnosed: bool,
                    shell: str) -> None:
    lead = Text("  ")
    lead.append_text(_marker(finding.status, plain))
    body = words(f"{finding.title}: ", "bold")
    body.append_text(words(finding.message))
    _hang(console, lead + Text(" "), body)
    if not diagnosed:  # a root cause's steps are under "What is wrong" (with -v its finding is shown here too)
        for step in finding.fix:
            _render_step(console, "-", diagnosis_view.step_view(step, shell, step_id(step), planned=False))
    for step in finding.remediation:
        _hang(console, "      fix: " if plain else "      → ", words(step), "cyan")
    if verbose:
        for item in finding.evidence:
            _hang(console, "      evidence: " if plain else "      · ", words(item), "dim")
        about = f"      about this check: rocm-doctor explain {finding.check}"
        if console.soft_wrap or len(about) <= console.width:
            console.print(Text(about, style="dim"), soft_wrap=True)
        else:  # the command whole on a line of its own, as every command is
            console.print(Text("      about this check:", style="dim"))
            _command(console, f"rocm-doctor explain {finding.check}")
