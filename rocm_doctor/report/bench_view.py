"""A benchmark's result: in the terminal per section, measured vs expected as bar charts, verdicts and
explanations; in JSON the raw results, the lines with their verdicts, the diagnosis and the findings."""

from __future__ import annotations

from typing import Any, Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from rocm_doctor.report.bench_chart import sweep_chart
from rocm_doctor.report.format import Output, Result
from rocm_doctor.gpu.bench.plan import SECTION_ORDER, title as section_title
from rocm_doctor.knowledge.perf_switches import describe

BAR_WIDTH = 20
STYLES = {"good": "green", "low": "yellow", "very low": "bold red", "unknown": "blue", "info": "", "failed": "magenta"}


def bar(fraction: float, width: int = BAR_WIDTH, plain: bool = False, mark: float = None) -> str:
    """`fraction` of `width` filled; a '|' at `mark` (the good threshold) when it falls in the empty part."""
    fraction = max(0.0, min(1.0, fraction))
    full, empty = ("#", ".") if plain else ("█", "░")
    filled = int(round(fraction * width))
    cells = [full] * filled + [empty] * (width - filled)
    if mark is not None and 0 < mark < 1:
        at = min(width - 1, int(round(mark * width)))
        if at >= filled:
            cells[at] = "|"
    return "".join(cells)


def _fmt(value: Any, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "ratio":
        return f"{value:.2f}"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.3g} {unit}"


def _rows(lines: list[dict[str, Any]]) -> Iterable[tuple[dict[str, Any], float, bool]]:
    """(line, bar fraction, relative?) — against the expectation when there is one, else the largest in its unit."""
    largest: dict[str, float] = {}
    for line in lines:
        if line["value"] is not None and not line.get("expected"):
            largest[line["unit"]] = max(largest.get(line["unit"], 0.0), abs(line["value"]))
    for line in lines:
        if line["value"] is None:
            yield line, 0.0, False
        elif line.get("expected"):
            yield line, line["value"] / line["expected"], False
        else:
            top = largest.get(line["unit"]) or 1.0
            yield line, abs(line["value"]) / top, True


def render(console: Console, results: dict[str, Any], analysis: dict[str, Any], findings: list, verbose: bool = False) -> None:
    plain = console.no_color or not console.is_terminal
    header = results.get("header") or {}
    device = analysis.get("device") or {}
    torch_info = header.get("import") or {}
    cpu = header.get("cpu") or {}
    title = device.get("name") or "no device"
    backend = "ROCm/HIP " + str(torch_info.get("hip")) if torch_info.get("hip") else (
        "CUDA " + str(torch_info.get("cuda")) if torch_info.get("cuda") and device.get("type") == "cuda" else "CPU")
    console.print(Text(f"rocm-doctor bench — {title}", style="bold"))
    console.print(f"torch {escape(str(torch_info.get('version')))} ({escape(backend)}), device "
                  f"{escape(str(device.get('type')))}:{device.get('index') or 0}"
                  + (f" {device.get('gcnArchName')}" if device.get("gcnArchName") and torch_info.get("hip") else "")
                  + f"; CPU side: {cpu.get('threads')} threads of {escape(str(cpu.get('name')))}")
    exp = analysis.get("expectation")
    if exp:
        console.print(f"Expected figures: catalog row {escape(str(exp.get('id')))} ({escape(analysis['expectation_match'])}; "
                      f"source {escape(str(exp.get('source')))})")
    else:
        console.print(Text(f"No expectation: {analysis.get('expectation_match')}; raw figures only.", style="yellow"))
    console.print()

    on_cpu = ((results.get("header") or {}).get("device") or {}).get("type") == "cpu"
    by_section: dict[str, list[dict[str, Any]]] = {}
    for line in analysis["lines"]:
        by_section.setdefault(line["section"], []).append(line)
    for name in [*SECTION_ORDER, *[s for s in by_section if s not in SECTION_ORDER]]:
        lines = by_section.get(name)
        if not lines:
            continue
        entry = (results.get("sections") or {}).get(name) or {}
        seconds = entry.get("seconds")
        heading = section_title(name, on_cpu) + (f"  ({seconds:.1f} s)" if seconds else "")
        console.print(Text(heading, style="bold underline"))
        if name == "sweep" and sweep_chart(console, lines, plain, bar):
            lines = [line for line in lines if not line["key"].startswith("sweep.batch.")]
        table = Table(show_header=False, box=None, pad_edge=False, padding=(0, 1))
        table.add_column("what", ratio=1, overflow="fold")
        table.add_column("value", justify="right", no_wrap=True)
        table.add_column("bar", no_wrap=True)
        table.add_column("verdict", overflow="fold")
        notes = []
        for line, fraction, relative in _rows(lines):
            if line["value"] is None and not verbose and line["verdict"] != "failed":
                notes.append(f"{line['label']}: {line['explanation']}")
                continue
            verdict = line["verdict"]
            if line.get("expected"):
                tail = f"{line['fraction']:.0%} of {_fmt(line['expected'], line['unit'])}" if line.get("fraction") is not None else ""
            else:
                tail = ""
            mark = (line.get("details") or {}).get("good_at")
            drawn = bar(fraction, plain=plain, mark=None if relative else mark) if line["value"] is not None else ""
            verdict_text = Text((verdict if verdict not in ("info",) else "")
                                + (" (unreliable)" if line.get("unreliable") else ""), style=STYLES.get(verdict, ""))
            table.add_row(escape(line["label"]), _fmt(line["value"], line["unit"]),
                          Text(drawn, style="dim" if relative else STYLES.get(verdict, "")),
                          Text.assemble(verdict_text, (" " + tail) if tail else ""))
            if line.get("explanation") and (verdict not in ("good", "info") or verbose or name in ("decoder", "compare", "cnn", "sweep")):
                notes.append(f"{line['label']}: {line['explanation']}")
        console.print(table)
        for note in notes:
            console.print(Text(f"   · {note}" if not plain else f"   - {note}", style="dim"))
        console.print()

    _observed(console, analysis.get("observed") or {})
    shown = [f for f in findings if f.status.value in ("warn", "fail", "error")]
    # information that carries a remedy (a workload's own limit, with what was measured to help) is kept on screen
    worth = [f for f in findings if f.status.value == "info" and f.remediation]
    for heading, group in (("Findings", shown), ("Worth knowing", worth)):
        if not group:
            continue
        console.print(Text(heading, style="bold underline"))
        for finding in group:
            caused = f" (explained by {', '.join(finding.caused_by)})" if finding.caused_by else ""
            console.print(Text(f"  [{finding.status.value}] {finding.title}: {finding.message}{caused}"))
            for step in finding.remediation:
                console.print(Text(f"      fix: {step}", style="cyan"))
        console.print()
    measured = results.get("measured_s") or 0.0
    elapsed = results.get("elapsed_s") or 0.0
    console.print(f"Elapsed {elapsed:.1f} s (sections {measured:.1f} s; child start-up incl. torch import "
                  f"{max(0.0, elapsed - measured):.1f} s).")
    if shown:
        console.print("What each finding means, and how to fix it:")
        for check in dict.fromkeys(f.check for f in shown):
            console.print(Text(f"    rocm-doctor explain {check}"), soft_wrap=True)


def _observed(console: Console, observed: dict[str, Any]) -> None:
    """How often the GPU state was sampled (or why not), and what each re-run without a speed switch measured."""
    live = observed.get("live") or {}
    if live.get("sampled"):
        console.print(f"GPU state sampled {live.get('samples')} times around the sections "
                      f"({live.get('seconds') or 0:.2f} s in all).")
    elif live.get("why"):
        console.print(Text(f"GPU state: {live['why']}.", style="dim"))
    for comparison in observed.get("switches") or []:
        console.print(Text(f"Re-run without {comparison['variable']}={comparison['value']}:", style="bold"))
        for figure in comparison["figures"]:
            console.print(Text(f"   - {describe(figure)}"))
    console.print()


class BenchResult(Result):
    """`rocm-doctor bench` on one device: the pipeline's bench summary (the results, every line judged), its
    findings and its Diagnosis."""

    kind = "bench"
    json_indent = 1

    def __init__(self, results: dict[str, Any], analysis: dict[str, Any], findings: list, diagnosis) -> None:
        self.results, self.analysis, self.findings, self.diagnosis = results, analysis, findings, diagnosis

    def body(self) -> dict[str, Any]:
        return {"elapsed_s": self.results.get("elapsed_s"), "results": self.results, "analysis": self.analysis,
                "diagnosis": self.diagnosis.to_dict(), "findings": [f.to_dict() for f in self.findings]}

    def human(self, output: Output, verbose: bool = False) -> None:
        render(output.out, self.results, self.analysis, self.findings, verbose=verbose)
