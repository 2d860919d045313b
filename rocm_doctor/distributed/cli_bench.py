"""`rocm-doctor bench --collectives`: the local collectives as a benchmark (JSON or a readable table)."""

from __future__ import annotations

import json
import os
from typing import Any

import click


EXIT_OK, EXIT_PROBLEMS, EXIT_CANNOT_RUN = 0, 1, 2


def bench_collectives(python: str, preset: str, device: str, as_json: bool = False, verbose: bool = False,
                      world_size=None) -> int:
    from rocm_doctor.distributed.local import LocalOptions, run_local
    from rocm_doctor.distributed.stage import _progress_printer, judge
    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations

    results = run_local(python, LocalOptions(device=device, preset=preset, world_size=world_size,
                                             on_record=None if as_json else _progress_printer()))
    observations = Observations()
    observations.env = dict(os.environ)
    findings = judge(results, Facts(observations), ids=None)
    if as_json:
        from rocm_doctor.report.envelope import envelope

        click.echo(json.dumps(envelope("bench-collectives", python=python, results=results,
                                       findings=[f.to_dict() for f in findings]), indent=1, default=str))
    else:
        click.echo("\n".join(render_lines(results, findings, verbose)))
    if not results.get("ran"):
        if not as_json:
            click.echo(f"rocm-doctor: error: the collectives could not run: {results.get('detail')}", err=True)
        return EXIT_CANNOT_RUN
    problems = [f for f in findings if f.status.value in ("warn", "fail", "error")]
    return EXIT_PROBLEMS if problems else EXIT_OK


def render_lines(results: dict[str, Any], findings: list, verbose: bool = False) -> list[str]:
    from rocm_doctor.distributed.results import summary_lines

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
