#!/usr/bin/env python3
"""Plain reference figures to check `rocm-doctor bench` against (torch only; triton if importable).

Measures bf16 torch.mm at 8192^3 (TFLOP/s = 2*n^3 / time) and copy_ of a 4 GiB buffer
(GB/s = 2 * bytes / time: every byte is read once and written once), with triton.testing.do_bench
(median, its own 256 MB L2 flush between runs) when triton is importable, else CUDA/HIP events
over warmed-up iterations.

    python benchmarks/bench_reference.py [--n 8192] [--copy-gib 4] [--device-index 0]
"""

import argparse
import statistics
import sys

import torch


def events_median_ms(fn, iters=50, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--copy-gib", type=float, default=4.0)
    parser.add_argument("--device-index", type=int, default=0)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no GPU visible to torch")
    torch.cuda.set_device(args.device_index)
    try:
        from triton.testing import do_bench

        def timed(fn):
            try:
                return float(do_bench(fn, warmup=25, rep=200, return_mode="median"))
            except TypeError:  # older triton
                return float(do_bench(fn, warmup=25, rep=200))

        method = "triton.testing.do_bench (median)"
    except Exception as exc:  # noqa: BLE001
        timed, method = events_median_ms, f"CUDA/HIP events, median of 50 (triton unavailable: {exc})"

    name = torch.cuda.get_device_name()
    print(f"device: {name}; torch {torch.__version__} (cuda {torch.version.cuda}, hip {torch.version.hip})")
    print(f"method: {method}")
    n = args.n
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = timed(lambda: torch.mm(a, b))
    print(f"bf16 mm {n}x{n}x{n}: {ms:.3f} ms  {2 * n ** 3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
    a = b = None  # release them before the copy test
    torch.cuda.empty_cache()
    nbytes = int(args.copy_gib * (1 << 30)) // 4 * 4
    src = torch.ones(nbytes // 4, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src))
    print(f"copy_ {nbytes / (1 << 30):.2f} GiB: {ms:.3f} ms  {2 * nbytes / (ms * 1e-3) / 1e9:.1f} GB/s (read + write)"
          f"  [{nbytes / (ms * 1e-3) / 1e9:.1f} GB/s counting bytes copied once]")


if __name__ == "__main__":
    main()
