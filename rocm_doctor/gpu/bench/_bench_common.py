"""What every benchmark section uses: the record emitter, the device context and the timing helpers.

Loaded by path by _bench_child.py inside the target interpreter (standard library and torch only), as
`_doctor_bench_common`; the section modules beside it import it under that name.
"""

import functools
import gc
import statistics
import time

import _doctor_childlib as childlib

DTYPES = {"fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}
GIB = 1 << 30
MIB = 1 << 20

# Every record names the section it belongs to: the child sets context["section"] around each one.
emit = childlib.Emitter("bench", context={"section": None})
error_text = functools.partial(childlib.error_text, limit=500, last_line=True)


class Ctx:
    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        self.is_cuda = device.type == "cuda"
        self.is_hip = bool(getattr(torch.version, "hip", None))
        self.arch = ""
        self.major = 0
        self.sections_run = []  # the kinds of the sections this process began, in order
        if self.is_cuda:
            props = torch.cuda.get_device_properties(device)
            self.arch = str(getattr(props, "gcnArchName", "") or "")
            self.major = int(getattr(props, "major", 0) or 0)

    def sync(self, device=None):
        device = device or self.device
        if device.type == "cuda":
            self.torch.cuda.synchronize(device)

    def dtype(self, name):
        return getattr(self.torch, DTYPES[name])


def summarize(times_ms):
    times = sorted(times_ms)
    return {
        "best_ms": times[0],
        "median_ms": statistics.median(times),
        "mean_ms": sum(times) / len(times),
        "iters": len(times),
    }


def measure(ctx, fn, device=None, rep_ms=100.0, warmup_ms=25.0, min_iters=3, max_iters=200):
    """Per-iteration times (ms) of fn after warm-up: device events on a GPU, perf_counter on the CPU.

    Like triton's do_bench: a short estimate picks how many iterations fit in rep_ms.
    """
    torch = ctx.torch
    device = device or ctx.device
    fn()
    ctx.sync(device)
    t0 = time.perf_counter()
    for _ in range(2):
        fn()
    ctx.sync(device)
    estimate = max((time.perf_counter() - t0) * 1000.0 / 2, 1e-4)
    for _ in range(max(1, min(100, int(warmup_ms / estimate)))):
        fn()
    ctx.sync(device)
    iters = max(min_iters, min(max_iters, int(rep_ms / estimate)))
    times = []
    if device.type == "cuda":
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for i in range(iters):
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize(device)
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    else:
        for _ in range(iters):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1000.0)
    return summarize(times)


def wall(ctx, fn, reps, device=None):
    """Wall-clock times (ms) with a sync before and after each call: what a user waits for."""
    device = device or ctx.device
    fn()
    ctx.sync(device)
    times = []
    for _ in range(max(1, reps)):
        ctx.sync(device)
        t = time.perf_counter()
        fn()
        ctx.sync(device)
        times.append((time.perf_counter() - t) * 1000.0)
    return summarize(times)


def free_memory(ctx):
    """Release what the last measurement held: cyclic garbage, then the allocator's cached blocks. What survives is
    frozen, so each later collection scans only the objects made since: a full one took 80-155 ms once torch (and
    its compiler stack, which torch.optim imports) was loaded, and sections call this after each configuration."""
    gc.collect()
    if hasattr(gc, "freeze"):
        gc.freeze()
    if ctx.is_cuda:
        ctx.torch.cuda.empty_cache()


def device_free_bytes(ctx):
    if not ctx.is_cuda:
        return None
    try:
        free, _total = ctx.torch.cuda.mem_get_info(ctx.device)
        return int(free)
    except Exception:
        return None
