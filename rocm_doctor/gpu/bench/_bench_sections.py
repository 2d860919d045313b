"""The benchmark sections that time plain operations: matmul, memory bandwidth, launch overhead, CPU against GPU,
and a reference measured the plain way. Loaded by path by _bench_child.py inside the target interpreter.
"""

import gc
import math
import sys
import time

from _doctor_bench_common import GIB, MIB, device_free_bytes, emit, error_text, free_memory, measure, wall


# ---------------------------------------------------------------------------------------------------------
# Matmul throughput


def tf32_support(ctx):
    """None when TF32 can run on this device, else why not."""
    if not ctx.is_cuda:
        return "TF32 is a GPU matrix-unit format; not applicable on the CPU"
    if ctx.is_hip:
        if ctx.arch.startswith(("gfx94", "gfx95")):
            return None
        return "no TF32/XF32 matrix path on %s (CDNA3 and newer only)" % (ctx.arch or "this AMD GPU")
    if ctx.major < 8:
        return "TF32 needs compute capability 8.0 or newer"
    return None


def section_matmul(ctx, params):
    torch = ctx.torch
    backends = torch.backends.cuda.matmul
    saved_tf32 = getattr(backends, "allow_tf32", None)
    rotate_bytes = int(params.get("rotate_bytes", 512 * MIB))
    for dname in params.get("dtypes", ["fp32", "tf32", "fp16", "bf16"]):
        if dname == "tf32":
            why_not = tf32_support(ctx)
            if why_not:
                emit("matmul", dtype=dname, skipped=why_not)
                continue
        dtype = ctx.dtype(dname)
        if ctx.is_cuda:
            backends.allow_tf32 = dname == "tf32"
        for m, n, k in params.get("shapes", [[4096, 4096, 4096]]):
            try:
                size = dtype.itemsize if hasattr(dtype, "itemsize") else torch.empty((), dtype=dtype).element_size()
                set_bytes = (m * k + k * n) * size
                sets = max(1, min(8, math.ceil(rotate_bytes / max(set_bytes, 1))))
                a = [torch.randn(m, k, device=ctx.device, dtype=dtype) for _ in range(sets)]
                b = [torch.randn(k, n, device=ctx.device, dtype=dtype) for _ in range(sets)]
                c = torch.empty(m, n, device=ctx.device, dtype=dtype)
                turn = [0]

                def step():
                    i = turn[0] % sets
                    turn[0] += 1
                    torch.mm(a[i], b[i], out=c)

                stats = measure(ctx, step, rep_ms=params.get("rep_ms", 100.0), warmup_ms=params.get("warmup_ms", 25.0),
                                max_iters=params.get("max_iters", 100))
                flops = 2.0 * m * n * k
                emit(
                    "matmul", dtype=dname, m=m, n=n, k=k, flops=flops, buffers=sets,
                    best_tflops=flops / (stats["best_ms"] * 1e-3) / 1e12,
                    median_tflops=flops / (stats["median_ms"] * 1e-3) / 1e12,
                    allow_tf32=bool(getattr(backends, "allow_tf32", False)) if ctx.is_cuda else None,
                    **stats,
                )
            except Exception as exc:
                emit("matmul", dtype=dname, m=m, n=n, k=k, error=error_text(exc))
            finally:
                a = b = c = None
                free_memory(ctx)
    if ctx.is_cuda and saved_tf32 is not None:
        backends.allow_tf32 = saved_tf32


# ---------------------------------------------------------------------------------------------------------
# Memory bandwidth


def pcie_link(ctx):
    """The GPU's PCIe link from sysfs (Linux), read right after the host copies while the link is busy."""
    if not sys.platform.startswith("linux"):
        return {"error": "link details are read from sysfs on Linux only"}
    props = ctx.torch.cuda.get_device_properties(ctx.device)
    bus = getattr(props, "pci_bus_id", None)
    dev = getattr(props, "pci_device_id", None)
    dom = getattr(props, "pci_domain_id", 0) or 0
    if bus is None or dev is None:
        return {"error": "this torch does not report the PCI address"}
    address = "%04x:%02x:%02x.0" % (int(dom), int(bus), int(dev))
    info = {"address": address}
    for name in ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width"):
        try:
            with open("/sys/bus/pci/devices/%s/%s" % (address, name)) as handle:
                info[name] = handle.read().strip()
        except OSError as exc:
            info[name + "_error"] = error_text(exc)
    return info


def section_memory(ctx, params):
    torch = ctx.torch
    nbytes = int(params.get("copy_bytes", GIB))
    free = device_free_bytes(ctx)
    if free is not None and 2 * nbytes > 0.6 * free:
        nbytes = int(0.3 * free) // MIB * MIB
    n = nbytes // 4
    rep = params.get("rep_ms", 100.0)
    src = torch.empty(n, device=ctx.device, dtype=torch.float32).fill_(1.0)
    dst = torch.empty_like(src)
    stats = measure(ctx, lambda: dst.copy_(src), rep_ms=rep)
    moved = 2.0 * n * 4  # bytes read + bytes written
    emit("memory", op="copy", bytes=n * 4, bytes_counted=moved,
         best_gbs=moved / (stats["best_ms"] * 1e-3) / 1e9, median_gbs=moved / (stats["median_ms"] * 1e-3) / 1e9,
         **stats)
    stats = measure(ctx, lambda: torch.sum(src), rep_ms=rep)
    emit("memory", op="read", bytes=n * 4, bytes_counted=n * 4.0,
         best_gbs=n * 4 / (stats["best_ms"] * 1e-3) / 1e9, median_gbs=n * 4 / (stats["median_ms"] * 1e-3) / 1e9,
         **stats)
    stats = measure(ctx, lambda: dst.fill_(0.5), rep_ms=rep)
    emit("memory", op="write", bytes=n * 4, bytes_counted=n * 4.0,
         best_gbs=n * 4 / (stats["best_ms"] * 1e-3) / 1e9, median_gbs=n * 4 / (stats["median_ms"] * 1e-3) / 1e9,
         **stats)
    src = dst = None
    free_memory(ctx)
    if not ctx.is_cuda:
        return
    hbytes = int(params.get("host_bytes", 256 * MIB))
    reps = int(params.get("host_reps", 10))
    gpu = torch.empty(hbytes, dtype=torch.uint8, device=ctx.device).fill_(1)
    for kind in ("pinned", "pageable"):
        try:
            host = torch.empty(hbytes, dtype=torch.uint8, pin_memory=(kind == "pinned")).fill_(1)  # pinned once
        except Exception as exc:
            emit("host_copy", memory=kind, error=error_text(exc))
            continue
        for direction, fn in (
            ("h2d", lambda: gpu.copy_(host, non_blocking=(kind == "pinned"))),
            ("d2h", lambda: host.copy_(gpu, non_blocking=(kind == "pinned"))),
        ):
            try:
                stats = wall(ctx, fn, reps)
                emit("host_copy", memory=kind, direction=direction, bytes=hbytes,
                     best_gbs=hbytes / (stats["best_ms"] * 1e-3) / 1e9,
                     median_gbs=hbytes / (stats["median_ms"] * 1e-3) / 1e9, **stats)
            except Exception as exc:
                emit("host_copy", memory=kind, direction=direction, error=error_text(exc))
        host = None
        gc.collect()
    emit("pcie", **pcie_link(ctx))
    gpu = None
    free_memory(ctx)


# ---------------------------------------------------------------------------------------------------------
# Launch overhead


def section_launch(ctx, params):
    torch = ctx.torch
    iters = int(params.get("iters", 2000))
    x = torch.zeros(1, device=ctx.device)
    for _ in range(20):
        x.add_(1)
    ctx.sync()

    t = time.perf_counter()
    for _ in range(iters // 4 or 1):
        x.add_(1)
        ctx.sync()
    per = (time.perf_counter() - t) / (iters // 4 or 1) * 1e6
    emit("launch", mode="sync_each", us_per_launch=per, launches=iters // 4 or 1)

    ctx.sync()
    start = end = None
    if ctx.is_cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
    t = time.perf_counter()
    for _ in range(iters):
        x.add_(1)
    submit = (time.perf_counter() - t) / iters * 1e6
    if end is not None:
        end.record()
    ctx.sync()
    per = (time.perf_counter() - t) / iters * 1e6
    device_us = start.elapsed_time(end) * 1e3 / iters if end is not None else None
    emit("launch", mode="back_to_back", us_per_launch=per, submit_us=submit, device_us=device_us, launches=iters)

    if not ctx.is_cuda:
        emit("launch", mode="graph", skipped="CUDA/HIP graphs need a GPU")
        return
    ops = int(params.get("graph_ops", 100))
    replays = int(params.get("graph_replays", 20))
    try:
        graph = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                x.add_(1)
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(graph):
            for _ in range(ops):
                x.add_(1)
        graph.replay()
        ctx.sync()
        t = time.perf_counter()
        for _ in range(replays):
            graph.replay()
        ctx.sync()
        per = (time.perf_counter() - t) / (replays * ops) * 1e6
        emit("launch", mode="graph", us_per_launch=per, launches=replays * ops, ops_per_graph=ops)
    except Exception as exc:
        emit("launch", mode="graph", error=error_text(exc))


# ---------------------------------------------------------------------------------------------------------
# CPU vs GPU on what users compare


def build_cnn(torch):
    """The SimpleCNN users time against their CPU (the RX 6650 XT troubleshooting post's script), layer for layer:
    two 3x3 convs (3->16, 16->32) with ReLU and 2x2 pooling, and a linear layer on the 32x8x8 features."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 10),
    )


def time_one_call(ctx, a, b, device):
    """One product timed the way users' scripts time it (that post's does): time.time() around a single call, the
    GPU warmed up by one product first and the CPU not, with a sync after."""
    if device.type == "cuda":
        a @ b
        ctx.sync(device)
    t = time.time()
    a @ b
    ctx.sync(device)
    return (time.time() - t) * 1000.0


def cnn_steps(ctx, device, steps, warmup, batch):
    torch = ctx.torch
    model = build_cnn(torch).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(batch, 3, 32, 32, device=device)
    y = torch.randint(0, 10, (batch,), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()
    ctx.sync(device)
    t = time.perf_counter()
    for _ in range(steps):
        step()
    ctx.sync(device)
    return (time.perf_counter() - t) * 1000.0 / steps


def section_compare(ctx, params):
    torch = ctx.torch
    cpu = torch.device("cpu")
    targets = [("gpu", ctx.device)] if ctx.is_cuda else []
    targets.append(("cpu", cpu))
    for target, device in targets:
        n = int(params.get("matmul_n_gpu" if target == "gpu" else "matmul_n_cpu", 1024))
        try:
            a = torch.randn(n, n, device=device)
            b = torch.randn(n, n, device=device)
            one_call = time_one_call(ctx, a, b, device)
            stats = measure(ctx, lambda: torch.mm(a, b), device=device, rep_ms=params.get("rep_ms", 100.0),
                            min_iters=2, max_iters=50)
            flops = 2.0 * n ** 3
            emit("compare_matmul", target=target, dtype="fp32", n=n, flops=flops, one_call_ms=one_call,
                 best_tflops=flops / (stats["best_ms"] * 1e-3) / 1e12,
                 median_tflops=flops / (stats["median_ms"] * 1e-3) / 1e12, **stats)
        except Exception as exc:
            emit("compare_matmul", target=target, error=error_text(exc))
        a = b = None
        steps = int(params.get("cnn_steps_gpu" if target == "gpu" else "cnn_steps_cpu", 10))
        batch = int(params.get("batch", 64))
        try:
            ms = cnn_steps(ctx, device, steps, int(params.get("cnn_warmup", 3)), batch)
            emit("compare_cnn", target=target, steps=steps, batch=batch, ms_per_step=ms,
                 images_per_s=batch / (ms * 1e-3))
        except Exception as exc:
            emit("compare_cnn", target=target, error=error_text(exc))
        free_memory(ctx)
    nbytes = int(params.get("cpu_read_bytes", 256 * MIB))
    src = torch.ones(nbytes // 4)
    stats = measure(ctx, lambda: torch.sum(src), device=cpu, rep_ms=params.get("rep_ms", 100.0), max_iters=50)
    emit("cpu_memory", op="read", bytes=nbytes, best_gbs=nbytes / (stats["best_ms"] * 1e-3) / 1e9,
         median_gbs=nbytes / (stats["median_ms"] * 1e-3) / 1e9, **stats)


# ---------------------------------------------------------------------------------------------------------
# Plain reference: triton.testing.do_bench when importable, else device events


def section_reference(ctx, params):
    torch = ctx.torch
    n = int(params.get("mm_n", 8192))
    nbytes = int(params.get("copy_bytes", GIB))
    method, do_bench = "events" if ctx.is_cuda else "perf_counter", None
    if ctx.is_cuda:
        try:
            from triton.testing import do_bench

            method = "triton.testing.do_bench"
        except Exception as exc:
            emit("reference_note", note="triton not usable, falling back to events: " + error_text(exc))
            do_bench = None

    def bench(fn):
        if do_bench is None:
            return measure(ctx, fn, rep_ms=100.0)["median_ms"]
        try:
            return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))
        except TypeError:  # older triton has no return_mode
            return float(do_bench(fn, warmup=25, rep=100))

    dtype = torch.bfloat16
    a = torch.randn(n, n, device=ctx.device, dtype=dtype)
    b = torch.randn(n, n, device=ctx.device, dtype=dtype)
    ms = bench(lambda: torch.mm(a, b))
    emit("reference", what="mm", method=method, dtype="bf16", n=n, median_ms=ms,
         tflops=2.0 * n ** 3 / (ms * 1e-3) / 1e12)
    a = b = None
    free_memory(ctx)
    free = device_free_bytes(ctx)
    if free is not None and 2 * nbytes > 0.6 * free:
        nbytes = int(0.3 * free) // MIB * MIB
    src = torch.empty(nbytes // 4, device=ctx.device, dtype=torch.float32).fill_(1.0)
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src))
    emit("reference", what="copy", method=method, bytes=nbytes, median_ms=ms,
         gbs=2.0 * nbytes / (ms * 1e-3) / 1e9)


def section_hang(ctx, params):
    """Test aid: never returns, so the watchdog / parent timeout path can be exercised."""
    emit("hang", note="sleeping forever")
    while True:
        time.sleep(0.05)
