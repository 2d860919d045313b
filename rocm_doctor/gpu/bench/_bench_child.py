"""Runs inside the *target* interpreter and measures; prints one JSON object per line, one per measurement.

Stand-alone on purpose (standard library and torch only): the target environment need not have rocm-doctor
installed. The payload comes as JSON on stdin:

    {"device": "auto"|"cuda"|"cpu", "device_index": 0, "progress_file": PATH|null, "watchdog": true,
     "sections": [{"name": "matmul", "timeout_s": 60, "params": {...}}, ...]}

Every record carries "bench" (its kind) and "section"; each section is framed by "section_start" and
"section_end" records, and the run ends with {"bench": "done"}. A watchdog thread ends the process with a
"section_timeout" record when a section overruns its budget, so the parent can start a fresh child for the
sections that are left. Nothing here decides whether a figure is good: the parent does that.
"""

import gc
import json
import math
import os
import platform
import statistics
import sys
import threading
import time
import traceback
import warnings

# The script's own folder must not shadow anything the target imports.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

_LOCK = threading.Lock()
_STATE = {"section": None, "progress": None}

DTYPES = {"fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}
GIB = 1 << 30
MIB = 1 << 20


def emit(kind, **values):
    values["bench"] = kind
    values.setdefault("section", _STATE["section"])
    line = json.dumps(values, default=str) + "\n"
    with _LOCK:
        sys.stdout.write(line)
        sys.stdout.flush()
        progress = _STATE["progress"]
        if progress is not None:
            try:
                progress.write(line)
                progress.flush()
            except OSError:
                pass


def error_text(exc):
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1][:500]


class Watchdog:
    """Ends the process when a section runs past its budget (the parent then restarts the rest)."""

    def __init__(self, section, timeout_s):
        self.timer = threading.Timer(timeout_s, self.fire, args=(section, timeout_s))
        self.timer.daemon = True
        self.timer.start()

    @staticmethod
    def fire(section, timeout_s):
        emit("section_timeout", section=section, timeout_s=timeout_s)
        os._exit(124)

    def cancel(self):
        self.timer.cancel()


# ---------------------------------------------------------------------------------------------------------
# Timing


class Ctx:
    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        self.is_cuda = device.type == "cuda"
        self.is_hip = bool(getattr(torch.version, "hip", None))
        self.arch = ""
        self.major = 0
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
    gc.collect()
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


# ---------------------------------------------------------------------------------------------------------
# 1. Matmul throughput


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
# 2. Memory bandwidth


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
# 3. Launch overhead


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
# 4. Scaled dot-product attention


def sdpa_reasons(torch, q, k, v, causal):
    """Why each fused backend cannot run for these inputs (torch's own debug messages), by backend name."""
    cuda = torch.backends.cuda
    if not hasattr(cuda, "SDPAParams") or q.device.type != "cuda":
        return {}
    try:
        params = cuda.SDPAParams(q, k, v, None, 0.0, causal, False)
    except TypeError:
        params = cuda.SDPAParams(q, k, v, None, 0.0, causal)
    reasons = {}
    for name, fn in (
        ("FLASH_ATTENTION", "can_use_flash_attention"),
        ("EFFICIENT_ATTENTION", "can_use_efficient_attention"),
        ("CUDNN_ATTENTION", "can_use_cudnn_attention"),
    ):
        if not hasattr(cuda, fn):
            reasons[name] = "this torch has no %s()" % fn
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                ok = getattr(cuda, fn)(params, True)
            except Exception as exc:
                ok, caught = False, list(caught) + [error_text(exc)]
        if not ok:
            reasons[name] = "; ".join(str(getattr(w, "message", w)) for w in caught)[:600] or "not usable (no reason given)"
    return reasons


def section_sdpa(ctx, params):
    torch = ctx.torch
    import torch.nn.functional as F

    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as exc:
        emit("sdpa", error="torch.nn.attention is missing (torch < 2.3): " + error_text(exc))
        return
    enabled = {}
    for name in ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled"):
        fn = getattr(torch.backends.cuda, name, None)
        if fn is not None:
            enabled[name] = bool(fn())
    emit("sdpa_switches", **enabled)
    names = [b for b in params.get("backends", ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"])
             if b in SDPBackend.__members__]
    for dname in params.get("dtypes", ["fp16", "bf16"]):
        dtype = ctx.dtype(dname)
        for shape in params.get("shapes", []):
            b, h, sq, skv, d = shape["b"], shape["h"], shape["sq"], shape["skv"], shape["d"]
            causal = bool(shape.get("causal", False))
            q = torch.randn(b, h, sq, d, device=ctx.device, dtype=dtype)
            k = torch.randn(b, h, skv, d, device=ctx.device, dtype=dtype)
            v = torch.randn(b, h, skv, d, device=ctx.device, dtype=dtype)
            default = None
            try:
                default = SDPBackend(int(torch._fused_sdp_choice(q, k, v, None, 0.0, causal))).name
            except Exception as exc:
                default = "unknown (" + error_text(exc) + ")"
            reasons = sdpa_reasons(torch, q, k, v, causal)
            flops = 4.0 * b * h * sq * skv * d * (0.5 if causal and sq == skv else 1.0)
            nbytes = float((q.numel() * 2 + k.numel() + v.numel()) * q.element_size())  # q, k, v read; out written
            for backend in names:
                record = dict(shape=shape.get("name"), dtype=dname, backend=backend, b=b, h=h, sq=sq, skv=skv, d=d,
                              causal=causal, default_backend=default, flops=flops, bytes=nbytes)
                try:
                    with sdpa_kernel([getattr(SDPBackend, backend)]):
                        stats = measure(ctx, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                        rep_ms=params.get("rep_ms", 50.0), max_iters=params.get("max_iters", 100))
                    record.update(stats, available=True,
                                  tflops=flops / (stats["median_ms"] * 1e-3) / 1e12,
                                  gbs=nbytes / (stats["median_ms"] * 1e-3) / 1e9)
                except Exception as exc:
                    record.update(available=False, reason=reasons.get(backend) or error_text(exc))
                emit("sdpa", **record)
            q = k = v = None
            free_memory(ctx)


# ---------------------------------------------------------------------------------------------------------
# 5. CPU vs GPU on what users compare


def build_cnn(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 10),
    )


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
            stats = measure(ctx, lambda: torch.mm(a, b), device=device, rep_ms=params.get("rep_ms", 100.0),
                            min_iters=2, max_iters=50)
            flops = 2.0 * n ** 3
            emit("compare_matmul", target=target, dtype="fp32", n=n, flops=flops,
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
# 5b/6. An LLM-shaped decoder (Qwen3-0.6B layer shapes, random weights) and where its time goes

QWEN3_0_6B = {"hidden": 1024, "layers": 28, "heads": 16, "kv_heads": 8, "head_dim": 128, "intermediate": 3072,
              "vocab": 151936, "rope_theta": 1e6, "eps": 1e-6}


class Decoder:
    """Qwen3-style decoder written like Hugging Face eager code (RMSNorm in fp32, RoPE, SDPA, SwiGLU)."""

    def __init__(self, torch, cfg, device, dtype, max_len):
        self.torch, self.cfg, self.device, self.dtype = torch, cfg, device, dtype
        hid, hd, nq, nkv, inter = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"], cfg["intermediate"]
        pool = (torch.randn(1 << 20, device=device) * 0.02).to(dtype)
        self._pool, self._turn = pool, 0
        ones = lambda n: torch.ones(n, device=device, dtype=dtype)  # noqa: E731
        self.layers = []
        for _ in range(cfg["layers"]):
            self.layers.append({
                "ln1": ones(hid), "q": self.rnd(nq * hd, hid), "k": self.rnd(nkv * hd, hid),
                "v": self.rnd(nkv * hd, hid), "o": self.rnd(hid, nq * hd), "qn": ones(hd), "kn": ones(hd),
                "ln2": ones(hid), "gate": self.rnd(inter, hid), "up": self.rnd(inter, hid), "down": self.rnd(hid, inter),
            })
        self.embed = self.rnd(cfg["vocab"], hid)  # tied: also the lm_head
        self.norm = ones(hid)
        self._pool = None
        inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
        freqs = torch.outer(torch.arange(max_len, device=device, dtype=torch.float32), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos().to(dtype), emb.sin().to(dtype)
        shape = (1, nkv, max_len, hd)
        self.kc = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg["layers"])]
        self.vc = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg["layers"])]
        self.gqa = True
        size = torch.empty((), dtype=dtype).element_size()
        layer_elems = sum(t.numel() for layer in self.layers for t in layer.values())
        self.params = layer_elems + self.embed.numel() + self.norm.numel()
        self.weight_bytes_per_token = (layer_elems + self.embed.numel() + self.norm.numel() + hid) * size
        self.kv_bytes_per_position = cfg["layers"] * 2 * nkv * hd * size
        self.layer_flops_per_token = 2.0 * layer_elems

    def rnd(self, *shape):
        """Distinct storage filled from a small random pool (cheap to build, no cache reuse across layers)."""
        t = self.torch.empty(*shape, device=self.device, dtype=self.dtype)
        flat, pool = t.view(-1), self._pool
        size = pool.numel()
        for start in range(0, flat.numel(), size):
            m = min(size, flat.numel() - start)
            off = (self._turn * 7919) % (size - m + 1)
            self._turn += 1
            flat[start:start + m].copy_(pool[off:off + m])
        return t

    def rms(self, x, w):
        dtype = x.dtype
        x = x.float()
        x = x * self.torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.cfg["eps"])
        return w * x.to(dtype)

    @staticmethod
    def rotate(x, torch):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    def forward(self, tokens, pos):
        torch, cfg = self.torch, self.cfg
        F = torch.nn.functional
        t = tokens.shape[1]
        nq, nkv, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        x = F.embedding(tokens, self.embed)
        cos, sin = self.cos[pos:pos + t], self.sin[pos:pos + t]
        for i, w in enumerate(self.layers):
            h = self.rms(x, w["ln1"])
            q = self.rms(F.linear(h, w["q"]).view(1, t, nq, hd), w["qn"]).transpose(1, 2)
            k = self.rms(F.linear(h, w["k"]).view(1, t, nkv, hd), w["kn"]).transpose(1, 2)
            v = F.linear(h, w["v"]).view(1, t, nkv, hd).transpose(1, 2)
            q = q * cos + self.rotate(q, torch) * sin
            k = k * cos + self.rotate(k, torch) * sin
            self.kc[i][:, :, pos:pos + t] = k
            self.vc[i][:, :, pos:pos + t] = v
            keys, values = self.kc[i][:, :, :pos + t], self.vc[i][:, :, :pos + t]
            causal = t > 1
            if self.gqa:
                try:
                    a = F.scaled_dot_product_attention(q, keys, values, is_causal=causal, enable_gqa=True)
                except TypeError:
                    self.gqa = False
            if not self.gqa:
                rep = nq // nkv
                a = F.scaled_dot_product_attention(q, keys.repeat_interleave(rep, 1), values.repeat_interleave(rep, 1),
                                                   is_causal=causal)
            x = x + F.linear(a.transpose(1, 2).reshape(1, t, nq * hd), w["o"])
            h = self.rms(x, w["ln2"])
            x = x + F.linear(F.silu(F.linear(h, w["gate"])) * F.linear(h, w["up"]), w["down"])
        x = self.rms(x[:, -1:], self.norm)
        return F.linear(x, self.embed)


def profile_decode(ctx, model, token, pos, steps):
    """Device-busy time, kernel count and the top operators per decoded token, from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if model.device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        ctx.sync(model.device)
        t = time.perf_counter()
        for i in range(steps):
            token = model.forward(token, pos + i)[:, -1].argmax(-1, keepdim=True)
        ctx.sync(model.device)
        wall_ms = (time.perf_counter() - t) * 1000.0
    out = {"steps": steps, "profiled_wall_ms_per_token": wall_ms / steps}
    intervals, kernels, names = [], 0, {}
    for event in prof.events():
        dtype = str(getattr(event, "device_type", "")).rsplit(".", 1)[-1]
        if dtype in ("CUDA", "PrivateUse1", "HIP"):
            tr = event.time_range
            intervals.append((tr.start, tr.end))
            kernels += 1
        if event.name.startswith("aten::_scaled_dot_product") or event.name.startswith("aten::_efficient_attention"):
            names[event.name] = names.get(event.name, 0) + 1
    if model.device.type == "cuda":
        if not intervals:  # older profilers attach kernels to the CPU op instead
            for event in prof.events():
                for kernel in getattr(event, "kernels", []) or []:
                    intervals.append((0, getattr(kernel, "duration", 0)))
                    kernels += 1
        busy, end = 0.0, None
        for start, stop in sorted(intervals):
            if end is None or start >= end:
                busy += stop - start
                end = stop
            elif stop > end:
                busy += stop - end
                end = stop
        out["device_busy_us_per_token"] = busy / steps
        out["kernels_per_token"] = kernels / steps
    out["sdpa_ops"] = names
    rows = []
    for avg in prof.key_averages():
        dtype = str(getattr(avg, "device_type", "")).rsplit(".", 1)[-1]
        rows.append({
            "name": avg.key, "kind": "kernel" if dtype in ("CUDA", "PrivateUse1", "HIP") else "op",
            "count_per_token": avg.count / steps,
            "self_cpu_us_per_token": float(getattr(avg, "self_cpu_time_total", 0.0)) / steps,
            "self_device_us_per_token": float(getattr(avg, "self_device_time_total",
                                                      getattr(avg, "self_cuda_time_total", 0.0)) or 0.0) / steps,
        })
    ops = [r for r in rows if r["kind"] == "op"]
    out["top_host_ops"] = sorted(ops, key=lambda r: -r["self_cpu_us_per_token"])[:8]
    out["top_device_ops"] = [r for r in sorted(ops, key=lambda r: -r["self_device_us_per_token"])
                             if r["self_device_us_per_token"] > 0][:8]
    out["top_kernels"] = sorted([r for r in rows if r["kind"] == "kernel"],
                                key=lambda r: -r["self_device_us_per_token"])[:8]
    return out


def time_decode(ctx, model, token, start, steps, device):
    """Decode `steps` tokens greedily from position `start`, timed between device syncs: (ms, the last token)."""
    ctx.sync(device)
    t = time.perf_counter()
    for i in range(steps):
        token = model.forward(token, start + i)[:, -1].argmax(-1, keepdim=True)
    ctx.sync(device)
    return (time.perf_counter() - t) * 1000.0, token


def run_decoder(ctx, target, device, dtype_name, cfg, prefill, decode, reps, profile_steps):
    torch = ctx.torch
    dtype = ctx.dtype(dtype_name)
    t = time.perf_counter()
    model = Decoder(torch, cfg, device, dtype, prefill + decode + 8)
    ctx.sync(device)
    emit("decoder_model", target=target, dtype=dtype_name, params=model.params,
         weight_bytes_per_token=model.weight_bytes_per_token, kv_bytes_per_position=model.kv_bytes_per_position,
         layer_flops_per_token=model.layer_flops_per_token, lm_head_flops_per_token=2.0 * model.embed.numel(),
         build_s=time.perf_counter() - t, config=cfg)
    gen = torch.Generator(device="cpu").manual_seed(0)
    prompt = torch.randint(0, cfg["vocab"], (1, prefill), generator=gen).to(device)
    with torch.inference_mode():
        model.forward(prompt, 0)  # warm-up: kernel selection, lazy init
        ctx.sync(device)
        times = []
        for _ in range(max(1, reps)):
            ctx.sync(device)
            t = time.perf_counter()
            logits = model.forward(prompt, 0)
            ctx.sync(device)
            times.append((time.perf_counter() - t) * 1000.0)
        ms = statistics.median(times)
        emit("decoder_prefill", target=target, dtype=dtype_name, tokens=prefill, ms=ms, best_ms=min(times),
             tokens_per_s=prefill / (ms * 1e-3))
        token = logits[:, -1].argmax(-1, keepdim=True)
        for i in range(2):  # warm-up the decode shapes
            model.forward(token, prefill + i)
        ms, token = time_decode(ctx, model, token, prefill, decode, device)
        # The same positions again: what is left once per-shape setup (plans, autotuning per KV length) is cached.
        repeat, token = time_decode(ctx, model, token, prefill, decode, device)
        emit("decoder_decode", target=target, dtype=dtype_name, tokens=decode, context_start=prefill, ms=ms,
             ms_per_token=ms / decode, tokens_per_s=decode / (ms * 1e-3),
             repeat_ms_per_token=repeat / decode, mean_context=prefill + (decode + 1) / 2.0)
        if profile_steps:
            try:
                emit("decoder_profile", target=target, **profile_decode(ctx, model, token, prefill, profile_steps))
            except Exception as exc:
                emit("decoder_profile", target=target, error=error_text(exc))
    model = None
    free_memory(ctx)


def section_decoder(ctx, params):
    cfg = dict(QWEN3_0_6B)
    cfg.update(params.get("config") or {})
    if ctx.is_cuda:
        run_decoder(ctx, "gpu", ctx.device, params.get("dtype", "bf16"), cfg, int(params.get("prefill_tokens", 512)),
                    int(params.get("decode_tokens", 64)), int(params.get("prefill_reps", 3)),
                    int(params.get("profile_steps", 8)))
    cpu = params.get("cpu") or {}
    if cpu.get("enabled", True):
        run_decoder(ctx, "cpu", ctx.torch.device("cpu"), cpu.get("dtype", "fp32"), cfg,
                    int(cpu.get("prefill_tokens", 64)), int(cpu.get("decode_tokens", 8)), 1,
                    int(cpu.get("profile_steps", 0 if ctx.is_cuda else 4)))


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


SECTIONS = {
    "matmul": section_matmul,
    "memory": section_memory,
    "launch": section_launch,
    "sdpa": section_sdpa,
    "compare": section_compare,
    "decoder": section_decoder,
    "reference": section_reference,
    "hang": section_hang,
}


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(torch, device):
    info = {"type": device.type, "index": device.index}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        for name in ("name", "gcnArchName", "total_memory", "major", "minor", "multi_processor_count",
                     "L2_cache_size", "pci_bus_id", "pci_device_id", "pci_domain_id", "is_integrated"):
            value = getattr(props, name, None)
            if value is not None:
                info[name] = value
    else:
        info["name"] = cpu_name()
    return info


def main():
    payload = json.loads(sys.stdin.read() or "{}")
    if payload.get("progress_file"):
        try:
            _STATE["progress"] = open(payload["progress_file"], "a", encoding="utf-8")
        except OSError:
            pass
    emit("start", python=sys.version.split()[0], executable=sys.executable, pid=os.getpid())
    started = time.monotonic()
    try:
        import torch
    except BaseException as exc:  # torch's import can raise anything, including SystemExit
        emit("import", ok=False, error=error_text(exc))
        emit("done")
        return
    emit("import", ok=True, seconds=round(time.monotonic() - started, 3), version=torch.__version__,
         cuda=getattr(torch.version, "cuda", None), hip=getattr(torch.version, "hip", None))

    try:
        threads = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    emit("cpu", name=cpu_name(), threads=torch.get_num_threads(), cpu_count=os.cpu_count(), affinity=threads)

    wanted = payload.get("device", "auto")
    index = int(payload.get("device_index", 0) or 0)
    try:
        available = bool(torch.cuda.is_available())
        count = torch.cuda.device_count() if available else 0
    except Exception as exc:
        available, count = False, 0
        emit("device_note", note="torch.cuda.is_available() raised: " + error_text(exc))
    if wanted == "cpu" or (wanted == "auto" and not available):
        device = torch.device("cpu")
    elif not available:
        emit("device", error="no GPU is usable from this torch (torch.cuda.is_available() is False)")
        emit("done")
        return
    elif index >= count:
        emit("device", error="device index %d out of range: this torch sees %d GPU(s)" % (index, count))
        emit("done")
        return
    else:
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
    try:
        ctx = Ctx(torch, device)
        emit("device", **describe(torch, device))
    except Exception as exc:
        emit("device", error=error_text(exc))
        emit("done")
        return

    for section in payload.get("sections", []):
        name = section["name"]
        kind = section.get("kind", name)
        _STATE["section"] = name
        timeout = float(section.get("timeout_s", 60))
        emit("section_start", timeout_s=timeout)
        watchdog = Watchdog(name, timeout) if payload.get("watchdog", True) else None
        t = time.monotonic()
        state, error = "ok", None
        try:
            SECTIONS[kind](ctx, section.get("params") or {})
        except Exception as exc:
            state, error = "error", error_text(exc)
            emit("section_error", error=error, traceback=traceback.format_exc(limit=6))
        finally:
            if watchdog is not None:
                watchdog.cancel()
        try:
            free_memory(ctx)
        except Exception:
            pass
        emit("section_end", state=state, error=error, seconds=round(time.monotonic() - t, 3))
        _STATE["section"] = None
    emit("done", seconds=round(time.monotonic() - started, 3))


if __name__ == "__main__":
    main()
