"""Plain torch.distributed all-reduce loop, timed the way rocm-doctor's collectives are, for a cross-check.

Stand-alone (torch only; no rocm-doctor import). Launch one process per GPU with torchrun:

    python3 -m torch.distributed.run --standalone --nproc-per-node 2 benchmarks/allreduce_reference.py

Timing (the nccl-tests default, non-blocking): per size, all-reduce `--warmup` times, synchronize, barrier, then
the host clock around N back-to-back all-reduces and one synchronize, N = max(--iters, min(1000, 16 MiB / size))
so that small, latency-bound sizes are timed over a loop long enough to read; time = elapsed / N, the median of
five such loops, averaged over ranks. algbw = bytes / time (1 GB/s = 1e9 B/s), busbw = algbw x 2(n-1)/n (nccl-tests PERFORMANCE.md).
Prints one line per size on rank 0 and, with --json FILE, writes the rows.
"""

import argparse
import json
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-bytes", type=int, default=1024)
    parser.add_argument("--max-bytes", type=int, default=1 << 30)
    parser.add_argument("--factor", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--json", help="write the rows to this file (rank 0)")
    parser.add_argument("--compare", help="a `rocm-doctor bench --collectives --json` output: print the ratio per size")
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", timeout=timedelta(seconds=300), device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=timedelta(seconds=300))
    rank, world = dist.get_rank(), dist.get_world_size()

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def barrier():
        flag = torch.ones(1, device=device)
        dist.all_reduce(flag)
        sync()

    rows = []
    size = args.min_bytes
    while size <= args.max_bytes:
        count = max(1, size // 4)
        data = torch.ones(count, dtype=torch.float32, device=device)
        barrier()
        for _ in range(args.warmup):
            dist.all_reduce(data)
        sync()
        iters = max(args.iters, min(1000, (16 << 20) // size))  # the same count rocm-doctor uses per size
        loops = []
        for _ in range(5):  # the median of five timed loops, as rocm-doctor does on GPUs
            barrier()
            started = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(data)
            sync()
            loops.append((time.perf_counter() - started) / iters)
        seconds = torch.tensor([sorted(loops)[2]], dtype=torch.float64, device=device)
        dist.all_reduce(seconds)  # mean over ranks
        mean = float(seconds.item()) / world
        nbytes = count * 4
        algbw = nbytes / mean / 1e9
        busbw = algbw * 2 * (world - 1) / world
        rows.append({"op": "all_reduce", "bytes": nbytes, "time_us": mean * 1e6, "algbw_gbs": algbw, "busbw_gbs": busbw})
        if rank == 0:
            print(f"all_reduce {nbytes:>12} B  {mean * 1e6:12.1f} us  algbw {algbw:9.2f} GB/s  busbw {busbw:9.2f} GB/s",
                  flush=True)
        del data
        size *= args.factor
    if rank == 0 and args.json:
        with open(args.json, "w") as handle:
            json.dump({"world_size": world, "torch": torch.__version__, "rows": rows}, handle, indent=1)
    if rank == 0 and args.compare:
        compare(args.compare, rows)
    dist.destroy_process_group()


def compare(path, rows):
    """rocm-doctor's all_reduce busbw against this loop's, size by size (the "within 10%" cross-check)."""
    with open(path) as handle:
        doctor = json.load(handle)
    theirs = {r["bytes"]: r for r in (doctor.get("results") or {}).get("results") or [] if r.get("op") == "all_reduce"}
    print("size (B)      reference busbw   rocm-doctor busbw   ratio", flush=True)
    for row in rows:
        other = theirs.get(row["bytes"])
        if not other or not other.get("busbw_gbs"):
            continue
        ratio = other["busbw_gbs"] / row["busbw_gbs"] if row["busbw_gbs"] else float("nan")
        flag = "within 10%" if abs(ratio - 1) <= 0.10 else "DIFFERS"
        print(f"{row['bytes']:>12}  {row['busbw_gbs']:12.2f}      {other['busbw_gbs']:12.2f}       {ratio:6.3f}  {flag}",
              flush=True)


if __name__ == "__main__":
    main()
