"""Where the time of a repeated call goes, from torch's profiler: device-busy time (the union of kernel intervals),
kernels per call, the top host- and device-side operators and kernels, and the host time inside named regions (an
optimizer's step). Loaded by path by _bench_child.py inside the target interpreter.

The figures are read from the profiler's raw Kineto events: torch's own post-processing (`function_events`, then
`key_averages`) builds a Python object per event and took about 4 s for the decoder's 8 profiled tokens (some 50,000
events) on an H200, against a few hundredths of a second here for the same sums. Where the raw events cannot be read
(another torch), torch's own tables give the same figures.
"""

import time

import _doctor_childlib as childlib

DEVICE_TYPES = ("CUDA", "PrivateUse1", "HIP")
# What torch's own tables leave out (torch.autograd.profiler_util._filter_name).
SKIPPED = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter", "profiler::_record_function_enter_new",
           "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr", "aten::_version"}


class Digest:
    """What the sections read from one profiler session. `device`: (name, start_us, end_us) of each device event;
    `rows`: per (name, kind) [count, self host us, self device us, host us in all]; `host_names`: host-side names."""

    def __init__(self):
        self.device, self.rows, self.host_names = [], {}, set()

    def add(self, name, kind, count, self_cpu, self_device, cpu_total):
        row = self.rows.setdefault((name, kind), [0, 0.0, 0.0, 0.0])
        row[0] += count
        row[1] += self_cpu
        row[2] += self_device
        row[3] += cpu_total


def _on_device(event):
    return str(getattr(event, "device_type", "")).rsplit(".", 1)[-1] in DEVICE_TYPES


def _device_us(avg):
    return float(getattr(avg, "self_device_time_total", getattr(avg, "self_cuda_time_total", 0.0)) or 0.0)


def _kind(device_type):
    return str(device_type).rsplit(".", 1)[-1]


class _Range:
    """One host-side event of the raw trace, with its place in the tree torch builds from them."""

    __slots__ = ("name", "start", "end", "thread", "asynchronous", "id", "corr", "parent", "children", "kernel_us")

    def __init__(self, name, start, end, thread, asynchronous, id_, corr):
        self.name, self.start, self.end, self.thread, self.asynchronous = name, start, end, thread, asynchronous
        self.id, self.corr, self.parent, self.children, self.kernel_us = id_, corr, None, [], 0.0


def _nest(ranges):
    """torch's tree (profiler_util.EventList): per thread, each range is a child of the innermost range holding
    it; then a range that is the only child of one with its name is folded into it (it gives it its children and
    kernels)."""
    threads = {}
    for r in ranges:
        if not r.asynchronous:
            threads.setdefault(r.thread, []).append(r)
    for rows in threads.values():
        rows.sort(key=lambda r: (r.start, -r.end))
        stack = []
        for r in rows:
            while stack and (r.start >= stack[-1].end or r.end > stack[-1].end):
                stack.pop()
            if stack:
                r.parent = stack[-1]
                stack[-1].children.append(r)
            stack.append(r)
    kept = list(ranges)
    while True:
        folded = set()
        for r in kept:
            parent = r.parent
            if parent is not None and parent.name == r.name and len(parent.children) == 1:
                parent.children, parent.kernel_us = r.children, r.kernel_us
                for child in r.children:
                    child.parent = parent
                folded.add(id(r))
        if not folded:
            return kept
        kept = [r for r in kept if id(r) not in folded]


def from_raw(torch, prof):
    """The digest from the Kineto events, with torch's rules: an operator's self host time is its time less that of
    the host events nested in it on its thread (runtime calls count on the thread of the operator that made them);
    its self device time is the kernels whose correlation id names it."""
    result = prof.kineto_results
    origin = result.trace_start_ns()  # times relative to it keep their nanoseconds in a float
    demangled, host, device = {}, [], []
    for event in result.events():
        name = event.name()
        if name in SKIPPED or (hasattr(event, "is_hidden_event") and event.is_hidden_event()):
            continue
        if name not in demangled:
            demangled[name] = torch._C._demangle(name) if len(name) > 1 else name
        name = demangled[name]
        start, end = (event.start_ns() - origin) / 1000.0, (event.end_ns() - origin) / 1000.0
        if _kind(event.device_type()) in DEVICE_TYPES:
            device.append((name, start, end, event.linked_correlation_id()))
            continue
        asynchronous = event.is_async() or event.start_thread_id() != event.end_thread_id()
        host.append(_Range(name, start, end, event.start_thread_id(), asynchronous, event.correlation_id(),
                           event.linked_correlation_id()))
    frontend = {}  # correlation id -> the operators that carry it (torch credits a kernel to each of them)
    for r in host:
        if r.corr == 0 and not r.asynchronous:
            frontend.setdefault(r.id, []).append(r)
    for r in host:
        if r.corr > 0 and r.corr in frontend:
            r.thread = frontend[r.corr][-1].thread
    digest = Digest()
    for name, start, end, corr in device:
        digest.device.append((name, start, end))
        for op in frontend.get(corr, ()) if corr > 0 else ():
            op.kernel_us += end - start
    for r in _nest(host):
        digest.host_names.add(r.name)
        took = r.end - r.start
        if r.asynchronous:  # no self time in torch's tables, but its host time counts
            digest.add(r.name, "op", 1, 0.0, 0.0, took)
        else:
            digest.add(r.name, "op", 1, took - sum(c.end - c.start for c in r.children), r.kernel_us, took)
    for name, start, end in digest.device:
        digest.add(name, "kernel", 1, 0.0, end - start, 0.0)
    return digest


def from_tables(prof):
    """The same digest from torch's own tables (function_events, key_averages)."""
    digest = Digest()
    for event in prof.function_events:
        if _on_device(event):
            digest.device.append((event.name, event.time_range.start, event.time_range.end))
        else:
            digest.host_names.add(event.name)
    for avg in prof.key_averages():
        kind = "kernel" if _on_device(avg) else "op"
        digest.add(avg.key, kind, avg.count, float(getattr(avg, "self_cpu_time_total", 0.0)), _device_us(avg), 0.0)
    for event in prof.function_events:
        if not _on_device(event):
            digest.rows[(event.name, "op")][3] += float(event.cpu_time_total)
    return digest


def digest_of(torch, prof):
    try:
        return from_raw(torch, prof)
    except Exception:  # a torch whose raw events read otherwise
        return from_tables(prof)


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


def tops(digest, calls, top=8, skip=(), unit="call", kernels_named_like_ops=False):
    """The top host ops (self host time), device ops and kernels (self device time), per call."""
    rows = []
    for (name, kind), (count, self_cpu, self_device, _total) in digest.rows.items():
        if kind == "kernel" and name in digest.host_names and not kernels_named_like_ops:
            continue  # a record_function range mirrored on the device timeline
        rows.append({"name": name, "kind": kind, "count_per_" + unit: count / calls,
                     "self_cpu_us_per_" + unit: self_cpu / calls, "self_device_us_per_" + unit: self_device / calls})
    cpu, dev = "self_cpu_us_per_" + unit, "self_device_us_per_" + unit
    ops = [r for r in rows if r["kind"] == "op" and not any(r["name"].startswith(p) for p in skip)]
    return {"top_host_ops": sorted(ops, key=lambda r: -r[cpu])[:top],
            "top_device_ops": [r for r in sorted(ops, key=lambda r: -r[dev]) if r[dev] > 0][:top],
            "top_kernels": sorted([r for r in rows if r["kind"] == "kernel"], key=lambda r: -r[dev])[:top]}


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
    digest = digest_of(ctx.torch, prof)
    # A record_function range is mirrored on the device timeline under the same name: it is not a kernel.
    kernels = [(start, end) for name, start, end in digest.device if name not in digest.host_names]
    out = {"calls": calls, "profiled_wall_ms_per_call": wall_ms / calls}
    if device.type == "cuda":
        out["device_busy_us_per_call"] = busy_us(kernels) / calls
        out["kernels_per_call"] = len(kernels) / calls
    out["regions_host_us_per_call"] = {
        prefix: sum(row[3] for (name, kind), row in digest.rows.items() if kind == "op" and name.startswith(prefix))
        / calls for prefix in regions
    }
    out.update(tops(digest, calls, top=top, skip=regions))
    return out
