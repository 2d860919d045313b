"""Where the time of a repeated call goes, from torch's profiler: device-busy time (the union of kernel intervals),
kernels per call, the top host- and device-side operators and kernels, and the host time inside named regions (an
optimizer's step). Loaded by path by _bench_child.py inside the target interpreter.
"""

import time

import _doctor_childlib as childlib

DEVICE_TYPES = ("CUDA", "PrivateUse1", "HIP")


def _on_device(event):
    return str(getattr(event, "device_type", "")).rsplit(".", 1)[-1] in DEVICE_TYPES


def busy_us(intervals):
    """Length of the union of (start, end) intervals: kernels on several streams may overlap."""
    busy, end = 0.0, None
    for start, stop in sorted(intervals):
        if end is None or start >= end:
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    return busy


def _device_us(avg):
    return float(getattr(avg, "self_device_time_total", getattr(avg, "self_cuda_time_total", 0.0)) or 0.0)


def profile(ctx, fn, calls, device=None, regions=(), top=8):
    """Run fn `calls` times under the profiler; figures per call. `regions` are name prefixes of host-side ranges
    (record_function names such as 'Optimizer.step') whose host time is summed."""
    device = device or ctx.device
    with childlib.profiler(ctx.torch, device.type == "cuda") as prof:
        ctx.sync(device)
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        ctx.sync(device)
        wall_ms = (time.perf_counter() - t) * 1000.0
    events = prof.function_events
    host_names = {e.name for e in events if not _on_device(e)}
    # A record_function range is mirrored on the device timeline under the same name: it is not a kernel.
    kernels = [e for e in events if _on_device(e) and e.name not in host_names]
    out = {"calls": calls, "profiled_wall_ms_per_call": wall_ms / calls}
    if device.type == "cuda":
        intervals = [(e.time_range.start, e.time_range.end) for e in kernels]
        out["device_busy_us_per_call"] = busy_us(intervals) / calls
        out["kernels_per_call"] = len(intervals) / calls
    out["regions_host_us_per_call"] = {
        prefix: sum(float(e.cpu_time_total) for e in events if not _on_device(e) and e.name.startswith(prefix)) / calls
        for prefix in regions
    }
    rows = []
    for avg in prof.key_averages():
        kind = "kernel" if _on_device(avg) else "op"
        if kind == "kernel" and avg.key in host_names:
            continue
        rows.append({"name": avg.key, "kind": kind, "count_per_call": avg.count / calls,
                     "self_cpu_us_per_call": float(getattr(avg, "self_cpu_time_total", 0.0)) / calls,
                     "self_device_us_per_call": _device_us(avg) / calls})
    ops = [r for r in rows if r["kind"] == "op" and not any(r["name"].startswith(p) for p in regions)]
    out["top_host_ops"] = sorted(ops, key=lambda r: -r["self_cpu_us_per_call"])[:top]
    out["top_device_ops"] = [r for r in sorted(ops, key=lambda r: -r["self_device_us_per_call"])
                             if r["self_device_us_per_call"] > 0][:top]
    out["top_kernels"] = sorted([r for r in rows if r["kind"] == "kernel"],
                                key=lambda r: -r["self_device_us_per_call"])[:top]
    return out
