"""The fleet worker: `torchrun --nnodes N --nproc-per-node 1 ... -m rocm_doctor.distributed -o fleet.json`.

Every node runs the normal diagnosis (rocm_doctor.diagnose; torch is still probed in a child of the target
interpreter), optionally the local collectives of its own GPUs (--local-collectives) and the collectives over the
whole world (--collectives: each worker starts one rank child on its GPU, LOCAL_RANK), then rank 0 gathers every
node's report over gloo (an all-gather of JSON bytes: gather_object without its numpy need; no GPU needed)
and writes the fleet report: JSON
to -o FILE and a readable table to stdout (and to FILE's .txt sibling).

This module is the torchrun worker, not the doctor CLI: it imports torch in-process by design, only for the
gloo process group that carries the reports.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Optional

from rocm_doctor import safefile
from rocm_doctor.cli.app import EXIT_CANNOT_RUN, EXIT_OK


def _seconds(text: str) -> float:
    """A finite, positive number of seconds: a wait of nan or inf seconds never ends."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite, positive number of seconds")
    return value


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m rocm_doctor.distributed",
                                     description="Diagnose every node of a torchrun job and write one fleet report.")
    parser.add_argument("-o", "--output", type=Path, default=Path("rocm-doctor-fleet.json"),
                        help="fleet report (JSON); the table goes to stdout and to the same name with .txt")
    parser.add_argument("--python", help="interpreter whose torch to diagnose (default: as rocm-doctor check)")
    parser.add_argument("--collectives", action="store_true",
                        help="also run all-reduce/all-gather/broadcast over the whole world (one rank per worker)")
    parser.add_argument("--local-collectives", action="store_true",
                        help="also run the local collectives over each node's GPUs (like check --collectives)")
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                        help="device for the collectives (auto: the GPU when the worker sees one)")
    parser.add_argument("--preset", choices=["full", "quick", "tiny"], default="quick",
                        help="sizes of the collectives sweep")
    parser.add_argument("--no-diagnose", action="store_true", help="skip the diagnosis (collectives only)")
    parser.add_argument("--timeout", type=_seconds, default=900.0,
                        help="seconds the gloo group waits for the slowest node (default 900)")
    parser.add_argument("--op-timeout", type=_seconds, default=60.0,
                        help="seconds without progress before a collective counts as hung (default 60)")
    parser.add_argument("--startup-timeout", type=_seconds, default=300.0,
                        help="seconds a collectives rank may take to import torch and join the group (default 300)")
    parser.add_argument("--torch-timeout", type=_seconds, default=60.0, help="torch probe timeout (default 60)")
    return parser.parse_args(argv)


def all_gather_json(dist, obj: Any) -> list:
    """Every rank's `obj` on every rank, as JSON bytes in uint8 tensors over the gloo group.

    The same job as torch.distributed.gather_object / broadcast_object_list, without their pickle + numpy path
    (numpy is not always installed next to torch, and JSON is what the reports are anyway).
    """
    import torch

    world = dist.get_world_size()
    data = json.dumps(obj, default=str).encode("utf-8")
    size = torch.tensor([len(data)], dtype=torch.int64)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(sizes, size)
    longest = max(1, max(int(s.item()) for s in sizes))
    buf = torch.zeros(longest, dtype=torch.uint8)
    if data:
        buf[: len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    bufs = [torch.zeros(longest, dtype=torch.uint8) for _ in range(world)]
    dist.all_gather(bufs, buf)
    return [json.loads(bytes(b[: int(n.item())].tolist()).decode("utf-8")) for b, n in zip(bufs, sizes)]


def nvidia_driver() -> Optional[str]:
    try:
        text = Path("/proc/driver/nvidia/version").read_text(errors="replace")
    except OSError:
        return None
    for token in text.split():
        parts = token.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts):
            return token
    return None


def diagnose_node(args) -> tuple[dict, dict]:
    """(report dict, summary) of this node."""
    from rocm_doctor.diagnose import Options, diagnose

    report, facts = diagnose(Options(python=args.python, torch_timeout_s=args.torch_timeout))
    return report, facts


def world_collectives(args, dist, rank: int, world: int, local_rank: int, python: str) -> dict[str, Any]:
    """Each worker runs one rank child; rank 0 picks the port; returns this rank's rank dict."""
    from rocm_doctor.distributed import launch as launcher
    from rocm_doctor.distributed.local import plan_for

    device = args.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    backend = "nccl" if device == "cuda" else "gloo"
    addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    mine = [launcher.free_port("0.0.0.0") if rank == 0 else None, device, backend, int(time.time())]
    port, device, backend, seed = all_gather_json(dist, mine)[0]  # rank 0's choice for everyone
    plan = plan_for(device, args.preset)
    payload = {"mode": "rank", "device": device, "backend": backend, "ops": plan["ops"], "sizes": plan["sizes"],
               "warmup": plan["warmup"], "iters": plan["iters"], "random_check_bytes": plan.get("random_check_bytes"),
               "seed": seed, "pg_timeout_s": max(30.0, args.op_timeout * 4)}
    spec = {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(local_rank),
            "MASTER_ADDR": addr, "MASTER_PORT": str(port), **launcher.OWN_STORE}
    outcome = launcher.launch(python, payload, [spec],
                              watchdogs=launcher.Watchdogs(op_s=args.op_timeout, startup_s=args.startup_timeout,
                                                           grace_s=10.0))
    mine = outcome.ranks[0].to_dict()
    mine["watchdog"], mine["watchdog_kind"] = outcome.watchdog, outcome.watchdog_kind
    mine["plan"], mine["device"], mine["backend"] = {k: v for k, v in plan.items()}, device, backend
    return mine


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch.distributed as dist

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    node_rank = int(os.environ.get("GROUP_RANK", os.environ.get("NODE_RANK", "0")))
    if not dist.is_available():
        print("rocm-doctor: error: this torch has no torch.distributed", file=sys.stderr)
        return EXIT_CANNOT_RUN
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    try:
        return _run(args, dist, rank, world, local_rank, node_rank)
    finally:
        try:
            dist.destroy_process_group()
        except Exception:
            pass


def _run(args, dist, rank, world, local_rank, node_rank) -> int:
    from rocm_doctor.distributed import fleet
    from rocm_doctor.distributed.results import assemble
    from rocm_doctor.report.fleet_view import render_table
    from rocm_doctor.probes import choose_python

    started = time.monotonic()
    python = choose_python(args.python, os.environ)[0]
    node = {"hostname": socket.gethostname(), "node_rank": node_rank, "rank": rank, "local_rank": local_rank,
            "world_size": world}
    mine: Optional[dict] = None
    if local_rank == 0:  # one report per node
        report_dict, summary, local = {}, {"note": "diagnosis skipped (--no-diagnose)"}, None
        facts = None
        if not args.no_diagnose:
            try:
                report, facts = diagnose_node(args)
                report_dict = report.to_dict()
            except Exception as exc:  # never leave the others waiting in the gather
                report_dict = {"error": f"the diagnosis failed: {type(exc).__name__}: {exc}", "findings": []}
        if args.local_collectives:
            from rocm_doctor.distributed.local import LocalOptions, run_local

            local = run_local(python, LocalOptions(device=args.device, preset=args.preset))
        nccl = None
        try:
            import torch

            nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None
        except Exception:
            pass
        summary = fleet.summarize(facts, os.environ, {"driver_nvidia": nvidia_driver(), "nccl": nccl}) \
            if facts is not None else summary
        mine = fleet.node_report(report_dict, summary, node, local)
    rank_dict = world_collectives(args, dist, rank, world, local_rank, python) if args.collectives else None

    gathered = all_gather_json(dist, {"node": mine, "rank": rank_dict})
    if rank != 0:
        return EXIT_OK
    nodes = [g["node"] for g in gathered if g and g.get("node")]
    world_results = None
    if args.collectives:
        ranks = [g["rank"] for g in gathered if g and g.get("rank")]
        first = ranks[0] if ranks else {}
        kinds = [r.get("watchdog_kind") for r in ranks if r.get("watchdog_kind")]
        world_results = assemble(ranks, world_size=world, device=first.get("device"), backend=first.get("backend"),
                                 watchdog="; ".join(r["watchdog"] for r in ranks if r.get("watchdog")) or None,
                                 watchdog_kind=kinds[0] if kinds else None, plan=first.get("plan"),
                                 env=None, scope="world", seconds=round(time.monotonic() - started, 3))
        from rocm_doctor.distributed.stage import judge

        world_results["findings"] = [f.to_dict() for f in judge(world_results)]
    report = fleet.diff(nodes, world=world_results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    table = render_table(report)
    try:
        safefile.write(args.output, json.dumps(report, indent=1, default=str))
        safefile.write(args.output.with_suffix(".txt"), table + "\n")
    except safefile.WriteError as exc:
        print(f"rocm-doctor: error: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    print(table)
    print(f"\nfleet report: {args.output} (table: {args.output.with_suffix('.txt')})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
