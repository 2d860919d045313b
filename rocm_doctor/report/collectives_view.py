"""The local collectives' result (`rocm-doctor bench --collectives`): a readable table of the ranks, the measured
sizes, the peer copies and the findings; in JSON the raw results and the findings."""

from __future__ import annotations

from typing import Any

from rocm_doctor.distributed.results import summary_lines
from rocm_doctor.report.format import Output, Result


class CollectivesResult(Result):
    """What run_local measured in child processes of `python`, and the findings judged from it."""

    kind = "bench-collectives"
    json_indent = 1

    def __init__(self, python: str, results: dict[str, Any], findings: list) -> None:
        self.python, self.results, self.findings = python, results, findings

    def body(self) -> dict[str, Any]:
        return {"python": self.python, "results": self.results, "findings": [f.to_dict() for f in self.findings]}

    def human(self, output: Output, verbose: bool = False) -> None:
        output.write("\n".join(render_lines(self.results, self.findings, verbose)))


def render_lines(results: dict[str, Any], findings: list, verbose: bool = False) -> list[str]:
    """The ranks, backend and devices, the measured sizes, the peer copies and the findings."""
    lines = []
    if results.get("ran"):
        names = ", ".join(sorted({str(d.get("name")) for d in results.get("devices") or []})) or results.get("device")
        lines.append(f"Collectives: {results.get('world_size')} ranks, {results.get('backend')} "
                     f"(torch {results.get('torch')}, NCCL/RCCL {results.get('nccl_version') or '-'}) on {names}")
        lines.append(f"state: {results.get('state')} - {results.get('detail')}")
        lines.append("busbw: all_reduce x 2(n-1)/n, all_gather x (n-1)/n, broadcast x 1 (nccl-tests); 1 GB/s = 1e9 B/s")
        lines.extend("  " + line for line in summary_lines(results))
        random = results.get("random_check")
        if random:
            lines.append(f"  random all_reduce {random.get('size')} vs CPU reference: "
                         f"{'ok' if random.get('correct') else 'WRONG'} (max error {random.get('max_abs_err'):.3g})")
    else:
        lines.append(f"Collectives did not run: {results.get('detail')}")
    peers = results.get("peers") or {}
    if peers.get("copies"):
        lines.append("Peer copies (" + str(peers.get("convention")) + "):")
        for c in peers["copies"]:
            access = (peers.get("matrix") or [[None]])[c["src"]][c["dst"]] if peers.get("matrix") else None
            rate = f"{c['gbs']:.1f} GB/s" if c.get("gbs") else f"error: {c.get('error')}"
            lines.append(f"  GPU {c['src']} -> GPU {c['dst']}: {rate}  peer access: {access}")
    lines.append("Findings:")
    for f in findings:
        if f.status.value == "skip" and not verbose:
            continue
        lines.append(f"  [{f.status.value}] {f.id}: {f.message}")
        if verbose or f.status.value in ("warn", "fail", "error"):
            lines.extend(f"      {e}" for e in f.evidence)
            lines.extend(f"      fix: {r}" for r in f.remediation)
    return lines
