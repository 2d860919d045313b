"""The operator suite's result (`rocm-doctor kernels`): in the terminal the outcomes, the cases that failed and the
libraries that served them; in JSON the stage results, the diagnosis and the findings."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from rocm_doctor.gpu.kernels.attribution import short_label
from rocm_doctor.report.format import Output, Result
from rocm_doctor.report.human import PLAIN_MARKERS


class KernelsResult(Result):
    """The stage's results and its linked findings; `output`: the file the JSON was also written to."""

    kind = "kernels"

    def __init__(self, stage: dict[str, Any], findings: list, output=None) -> None:
        self.stage, self.findings, self.output = stage, findings, output

    def body(self) -> dict[str, Any]:
        from rocm_doctor.engine import diagnosis

        return {"stage": self.stage, "diagnosis": diagnosis.build(self.findings).to_dict(),
                "findings": [f.to_dict() for f in self.findings]}

    def human(self, output: Output, verbose: bool = False) -> None:
        render(output.out, self.stage, self.findings, verbose=verbose, output=self.output)


def render(out: Console, stage: dict[str, Any], findings: list, verbose: bool = False, output=None) -> None:
    """The torch and device, the outcomes by category, every case that is not ok (all with `verbose`), the
    libraries that served them, the library log, the override A/B and the findings."""
    suite = stage.get("suite") or {}
    hello = suite.get("hello") or {}
    devices = ", ".join(f"{d.get('index')}: {d.get('name')} ({d.get('arch')})" for d in hello.get("devices") or [])
    if hello:
        build = 'HIP ' + str(hello['hip']) if hello.get('hip') else 'CUDA ' + str(hello['cuda']) if hello.get('cuda') else 'CPU'
        about_torch = f"torch {escape(str(hello.get('torch')))} ({build})"
    else:  # the child stopped before it said which torch it has
        about_torch = "torch not reported"
    out.print(f"Kernels in {escape(str(stage.get('python')))} — {about_torch}, "
              f"device {escape(str(suite.get('device')))}" + (f" [{escape(devices)}]" if devices else ""))
    if suite.get("fatal"):
        fatal = suite["fatal"]
        out.print(f"[FAIL] the suite could not run ({fatal.get('stage')}): {escape(str(fatal.get('error')))}")
        for line in fatal.get("stderr_tail") or []:
            out.print(f"       {escape(line)}")
    counts = suite.get("counts") or {}
    out.print("Outcomes: " + (", ".join(f"{v} {k}" for k, v in counts.items() if v) or "no case ran")
              + f" — {suite.get('seconds', 0):.1f} s in {len(suite.get('children') or [])} child process(es)")
    out.print()
    for category, row in (suite.get("by_category") or {}).items():
        out.print(f"  {category:<12} " + ", ".join(f"{v} {k}" for k, v in sorted(row.items())))
    out.print()
    for record in suite.get("results") or []:
        outcome = record.get("outcome")
        if outcome == "ok" and not verbose:
            continue
        detail = {
            "ok": f"rel err {record.get('rel_err_text')} (tol {record.get('tol')})",
            "wrong": f"rel err {record.get('rel_err_text')} > tol {record.get('tol')}",
            "error": record.get("error"),
            "crashed": record.get("detail"),
            "hung": record.get("detail"),
            "unavailable": record.get("reason"),
            "not-run": record.get("reason"),
        }.get(outcome, "")
        label = short_label(record.get("attribution"))
        line = f"  {outcome:<11} {record.get('case'):<36} {str(detail or '').splitlines()[0] if detail else ''}"
        if label:
            line += f"  [{label}]"
        out.print(escape(line[:400]))
    attributed = [r for r in suite.get("results") or [] if short_label(r.get("attribution"))]
    if attributed:
        out.print()
        out.print("Libraries (from device kernel names):")
        for record in attributed:
            kernels = [k["name"] for k in record["attribution"]["kernels"]][:3 if verbose else 1]
            out.print(escape(f"  {record['case']:<36} {short_label(record['attribution']) or '?':<32} "
                             f"{'; '.join(k[:80] for k in kernels)}"))
    logs = stage.get("library_logs") or {}
    if logs.get("ran"):
        out.print()
        out.print(escape(f"Library log ({logs.get('bytes', 0)} bytes, {', '.join(f'{k}: {v} lines' for k, v in (logs.get('lines_by_library') or {}).items()) or 'no library lines'})"))
    ab = stage.get("override_ab") or {}
    if ab.get("variants"):
        out.print()
        out.print("HSA_OVERRIDE_GFX_VERSION A/B:")
        for row in ab["variants"]:
            out.print(escape(f"  {row['label']:<12} {str(row['value']):<10} {'works' if row['works'] else 'fails'}"))
        if ab.get("advice"):
            out.print(escape(f"  → {ab['advice']}"))
    out.print()
    for finding in findings:
        out.print(escape(f"{PLAIN_MARKERS[finding.status]} {finding.title}: {finding.message}"))
        if verbose or finding.status.rank >= 3:
            for line in finding.evidence[:8]:
                out.print(escape(f"         {line}"))
    if output is not None:
        out.print(f"\nJSON written to {escape(str(output))}")
