"""Algorithm and bus bandwidth, exactly as nccl-tests and rccl-tests compute them.

Source: NVIDIA/nccl-tests doc/PERFORMANCE.md and src/*.cu (`AllReduceGetBw`, `AllGatherGetBw`,
`BroadcastGetBw`); ROCm/rccl-tests carries the identical functions. See docs/distributed.md.

- algbw = S / t, with S the operation's size in bytes as nccl-tests counts it and 1 GB/s = 1e9 B/s:
  all-reduce, broadcast, reduce: the buffer; all-gather, reduce-scatter: the *whole* array (recvcount x n for
  all-gather, i.e. n times each rank's contribution).
- busbw = algbw x factor: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast and
  reduce 1.
"""

from __future__ import annotations

from typing import Optional

OPS = ("all_reduce", "all_gather", "broadcast")


def bus_factor(op: str, world_size: int) -> float:
    n = int(world_size)
    if n < 1:
        raise ValueError("world size must be at least 1")
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    if op in ("broadcast", "reduce"):
        return 1.0
    raise ValueError(f"unknown collective {op!r}")


def algbw_gbs(nbytes: float, seconds: float) -> Optional[float]:
    """Bytes per second in GB/s (1e9); None when the time is not a positive number."""
    if not seconds or seconds <= 0:
        return None
    return nbytes / seconds / 1e9


def busbw_gbs(op: str, nbytes: float, seconds: float, world_size: int) -> Optional[float]:
    alg = algbw_gbs(nbytes, seconds)
    return None if alg is None else alg * bus_factor(op, world_size)


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{int(n)} B"
