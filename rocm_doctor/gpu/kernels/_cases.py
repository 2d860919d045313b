"""The operator suite, as data. Loaded by _child.py inside the target interpreter: standard library and torch only.

Each case is a dict made by `case(category, name, dtype, build, ...)`. `build(ctx)` runs the operator on
`ctx.device` and returns what to compare with a float64 CPU reference:

  (out, ref)                         one output
  [(out, ref), ...]                  several outputs (forward and gradients)
  {"pairs": [...], "info": {...}}    with extra facts for the report
  {"error": x, "tol": t, "info": {}} an error figure computed by the case itself (RNG statistics)

Inputs come from `ctx.randn`/`ctx.rand`: float64 CPU tensors already rounded to the case's dtype, so the device
and the reference see exactly the same numbers; `ctx.dev(x)` moves one to the device in the case's dtype.
`ctx.unavailable(reason)` ends a case as unavailable (for instance a GPU-only feature on the CPU device).

Options: gpu_only (unavailable on the CPU device), profile (run under torch.profiler for library attribution),
tf32 (fp32 results may come from TF32 tensor cores on a GPU, so the fp32 tolerance is 5e-3), tol (override).
"""

import math
import warnings


def case(category, name, dtype, build, tol=None, gpu_only=False, profile=False, tf32=False, core=False, log=False):
    return {
        "category": category,
        "name": name,
        "dtype": dtype,
        "build": build,
        "tol": tol,
        "gpu_only": gpu_only,
        "profile": profile,
        "tf32": tf32,
        "core": core,  # part of the short core set used by the HSA_OVERRIDE_GFX_VERSION A/B runs
        "log": log,  # part of the set run again with the math libraries' logging on
    }


FLOATS = ("float32", "float16", "bfloat16")


# -- memory: allocation and copies ---------------------------------------------------------------------------


def _alloc_fill(ctx):
    torch = ctx.torch
    x = torch.empty((1024, 1024), device=ctx.device, dtype=ctx.dtype)
    x.fill_(1.5)
    a = ctx.randn(1024, 1024)
    x.add_(ctx.dev(a))
    return x, a + 1.5


def _h2d_d2h(ctx):
    a = ctx.randn(513, 257)
    on_device = ctx.dev(a)
    back = on_device.cpu()
    return back, a


def _d2d_copy(ctx):
    a = ctx.randn(2048, 129)
    x = ctx.dev(a)
    y = ctx.torch.empty_like(x)
    y.copy_(x)
    z = y.t().contiguous().t()  # a strided copy kernel as well
    return z, a


def _pinned_copy(ctx):
    torch = ctx.torch
    a = ctx.randn(4096, 256)
    host = a.to(ctx.dtype).pin_memory()
    x = host.to(ctx.device, non_blocking=True)
    out = torch.empty(x.shape, dtype=x.dtype).pin_memory()
    out.copy_(x * 2, non_blocking=True)
    torch.cuda.synchronize()
    return out, a * 2


def _large_alloc(ctx):
    torch = ctx.torch
    n = 64 * 1024 * 1024  # 256 MB of fp32
    x = torch.ones(n, device=ctx.device, dtype=ctx.dtype)
    total = x.sum(dtype=torch.float64)
    del x
    return torch.tensor([float(total)]), torch.tensor([float(n)], dtype=torch.float64)


# -- elementwise ---------------------------------------------------------------------------------------------


def _arith(ctx):
    a, b, c = ctx.randn(4096, 257), ctx.randn(4096, 257), ctx.randn(4096, 257)
    x, y, z = ctx.dev(a), ctx.dev(b), ctx.dev(c)
    out = (x * y + z) - x / (y.abs() + 1.0)
    ref = (a * b + c) - a / (b.abs() + 1.0)
    return out, ref


def _transcendental(ctx):
    F = ctx.F
    a = ctx.randn(4096, 257)
    x = ctx.dev(a)
    out = ctx.torch.exp(x * 0.5) + ctx.torch.tanh(x) + ctx.torch.sigmoid(x) + F.gelu(x)
    ref = ctx.torch.exp(a * 0.5) + ctx.torch.tanh(a) + ctx.torch.sigmoid(a) + F.gelu(a)
    return out, ref


def _where_clamp(ctx):
    a, b = ctx.randn(1000, 333), ctx.randn(1000, 333)
    x, y = ctx.dev(a), ctx.dev(b)
    out = ctx.torch.where(x > y, x.clamp(-0.5, 0.5), y * 2)
    ref = ctx.torch.where(a > b, a.clamp(-0.5, 0.5), b * 2)
    return out, ref


def _int_arith(ctx):
    torch = ctx.torch
    a = ctx.randint(-1000, 1000, (4096, 64))
    b = ctx.randint(1, 100, (4096, 64))
    x, y = a.to(ctx.device), b.to(ctx.device)
    out = x * 3 + torch.div(x, y, rounding_mode="floor") - (x % y)
    ref = a * 3 + torch.div(a, b, rounding_mode="floor") - (a % b)
    return out, ref


# -- reductions ----------------------------------------------------------------------------------------------


def _sum(ctx):
    a = ctx.randn(512, 4099)
    return ctx.dev(a).sum(dim=1), a.sum(dim=1)


def _mean(ctx):
    a = ctx.randn(64, 8191, scale=2.0)
    return ctx.dev(a).mean(dim=1) * 100, a.mean(dim=1) * 100


def _max_argmax(ctx):
    a = ctx.randn(256, 3001)
    x = ctx.dev(a)
    values, index = x.max(dim=1)
    return [(values, a.max(dim=1).values), (index, a.argmax(dim=1))]


def _var_std(ctx):
    a = ctx.randn(128, 2048, scale=3.0)
    x = ctx.dev(a)
    return [(x.var(dim=1), a.var(dim=1)), (x.std(dim=0), a.std(dim=0))]


def _norm(ctx):
    a = ctx.randn(300, 1024)
    return ctx.torch.linalg.vector_norm(ctx.dev(a), dim=1), ctx.torch.linalg.vector_norm(a, dim=1)


# -- matmul family -------------------------------------------------------------------------------------------


def _mm(ctx):
    a, b = ctx.randn(512, 384), ctx.randn(384, 640)
    return ctx.dev(a) @ ctx.dev(b), a @ b


def _bmm(ctx):
    a, b = ctx.randn(8, 128, 256), ctx.randn(8, 256, 96)
    return ctx.torch.bmm(ctx.dev(a), ctx.dev(b)), ctx.torch.bmm(a, b)


def _addmm(ctx):
    c, a, b = ctx.randn(256, 512), ctx.randn(256, 320), ctx.randn(320, 512)
    out = ctx.torch.addmm(ctx.dev(c), ctx.dev(a), ctx.dev(b), beta=0.5, alpha=2.0)
    return out, ctx.torch.addmm(c, a, b, beta=0.5, alpha=2.0)


def _linear_fwd_bwd(ctx):
    F = ctx.F
    x, w, b, g = ctx.randn(64, 256), ctx.randn(384, 256, scale=0.1), ctx.randn(384), ctx.randn(64, 384)
    xd, wd, bd = (ctx.dev(t).requires_grad_() for t in (x, w, b))
    y = F.linear(xd, wd, bd)
    y.backward(ctx.dev(g))
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    yr = F.linear(xr, wr, br)
    yr.backward(g)
    return [(y, yr), (xd.grad, xr.grad), (wd.grad, wr.grad), (bd.grad, br.grad)]


# -- convolution, normalisation, pooling ---------------------------------------------------------------------


def _conv2d_fwd_bwd(ctx):
    F = ctx.F
    x, w, b = ctx.randn(4, 16, 32, 32), ctx.randn(32, 16, 3, 3, scale=0.2), ctx.randn(32)
    g = ctx.randn(4, 32, 32, 32)
    xd, wd, bd = (ctx.dev(t).requires_grad_() for t in (x, w, b))
    y = F.conv2d(xd, wd, bd, padding=1)
    y.backward(ctx.dev(g))
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    yr = F.conv2d(xr, wr, br, padding=1)
    yr.backward(g)
    return [(y, yr), (xd.grad, xr.grad), (wd.grad, wr.grad), (bd.grad, br.grad)]


def _conv2d_strided_cl(ctx):
    torch = ctx.torch
    x, w = ctx.randn(2, 32, 28, 28), ctx.randn(64, 32, 5, 5, scale=0.1)
    xd = ctx.dev(x).to(memory_format=torch.channels_last)
    wd = ctx.dev(w).to(memory_format=torch.channels_last)
    y = ctx.F.conv2d(xd, wd, stride=2, padding=2)
    return y, ctx.F.conv2d(x, w, stride=2, padding=2)


def _batch_norm(ctx):
    F = ctx.F
    x = ctx.randn(8, 32, 16, 16, scale=2.0)
    w, b = ctx.rand(32) + 0.5, ctx.randn(32)
    rm, rv = ctx.torch.zeros(32, dtype=ctx.torch.float64), ctx.torch.ones(32, dtype=ctx.torch.float64)
    # Low-precision inputs use fp32 statistics and affine parameters, as torch.nn.BatchNorm2d under autocast.
    param = ctx.torch.float32 if ctx.dtype != ctx.torch.float64 else ctx.dtype
    rmd, rvd = rm.to(ctx.device, param), rv.to(ctx.device, param)
    y = F.batch_norm(ctx.dev(x), rmd, rvd, ctx.dev(w, param), ctx.dev(b, param), training=True, momentum=0.1)
    yr = F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=True, momentum=0.1)
    rmr, rvr = rm.clone(), rv.clone()
    F.batch_norm(x, rmr, rvr, w, b, training=True, momentum=0.1)
    return [(y, yr), (rmd, rmr), (rvd, rvr)]


def _layer_norm(ctx):
    x, w, b = ctx.randn(64, 768, scale=3.0), ctx.randn(768), ctx.randn(768)
    y = ctx.F.layer_norm(ctx.dev(x), (768,), ctx.dev(w), ctx.dev(b))
    return y, ctx.F.layer_norm(x, (768,), w, b)


def _group_norm(ctx):
    x, w, b = ctx.randn(4, 32, 16, 16, scale=2.0), ctx.randn(32), ctx.randn(32)
    y = ctx.F.group_norm(ctx.dev(x), 8, ctx.dev(w), ctx.dev(b))
    return y, ctx.F.group_norm(x, 8, w, b)


def _rms_norm(ctx):
    F = ctx.F
    if not hasattr(F, "rms_norm"):
        ctx.unavailable("torch.nn.functional.rms_norm needs torch 2.4 or later")
    x, w = ctx.randn(64, 1024, scale=2.0), ctx.randn(1024)
    y = F.rms_norm(ctx.dev(x), (1024,), ctx.dev(w), eps=1e-6)
    ref = x * ctx.torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return y, ref


def _max_pool(ctx):
    x = ctx.randn(4, 16, 64, 64)
    return ctx.F.max_pool2d(ctx.dev(x), 3, stride=2, padding=1), ctx.F.max_pool2d(x, 3, stride=2, padding=1)


def _avg_pool(ctx):
    x = ctx.randn(4, 16, 64, 64)
    return ctx.F.avg_pool2d(ctx.dev(x), 4), ctx.F.avg_pool2d(x, 4)


def _adaptive_pool(ctx):
    x = ctx.randn(4, 64, 17, 23)
    return ctx.F.adaptive_avg_pool2d(ctx.dev(x), (5, 7)), ctx.F.adaptive_avg_pool2d(x, (5, 7))


# -- softmax and losses --------------------------------------------------------------------------------------


def _softmax(ctx):
    x = ctx.randn(256, 1000, scale=4.0)
    return ctx.torch.softmax(ctx.dev(x), dim=-1), ctx.torch.softmax(x, dim=-1)


def _log_softmax(ctx):
    x = ctx.randn(128, 4096, scale=2.0)
    return ctx.torch.log_softmax(ctx.dev(x), dim=-1), ctx.torch.log_softmax(x, dim=-1)


def _cross_entropy(ctx):
    F = ctx.F
    logits, target = ctx.randn(256, 100, scale=2.0), ctx.randint(0, 100, (256,))
    ld = ctx.dev(logits).requires_grad_()
    loss = F.cross_entropy(ld, target.to(ctx.device))
    loss.backward()
    lr = logits.clone().requires_grad_()
    lossr = F.cross_entropy(lr, target)
    lossr.backward()
    return [(loss, lossr), (ld.grad, lr.grad)]


# -- embedding, indexing -------------------------------------------------------------------------------------


def _embedding(ctx):
    F = ctx.F
    weight, idx, g = ctx.randn(1000, 64), ctx.randint(0, 1000, (32, 50)), ctx.randn(32, 50, 64)
    wd = ctx.dev(weight).requires_grad_()
    y = F.embedding(idx.to(ctx.device), wd)
    y.backward(ctx.dev(g))
    wr = weight.clone().requires_grad_()
    yr = F.embedding(idx, wr)
    yr.backward(g)
    return [(y, yr), (wd.grad, wr.grad)]


def _index_select(ctx):
    a, idx = ctx.randn(2000, 33), ctx.randint(0, 2000, (777,))
    x = ctx.dev(a)
    i = idx.to(ctx.device)
    return [(x.index_select(0, i), a.index_select(0, idx)), (x[i, 5:20], a[idx, 5:20]), (x[x[:, 0] > 0], a[a[:, 0] > 0])]


def _index_put(ctx):
    a, v, idx = ctx.randn(500, 16), ctx.randn(1000, 16), ctx.randint(0, 500, (1000,))
    x = ctx.dev(a)
    x.index_put_((idx.to(ctx.device),), ctx.dev(v), accumulate=True)
    ref = a.clone().index_put_((idx,), v, accumulate=True)
    return x, ref


def _gather(ctx):
    a, idx = ctx.randn(300, 400), ctx.randint(0, 400, (300, 50))
    return ctx.dev(a).gather(1, idx.to(ctx.device)), a.gather(1, idx)


def _scatter_add(ctx):
    src, idx = ctx.randn(300, 200), ctx.randint(0, 64, (300, 200))
    base = ctx.randn(300, 64)
    out = ctx.dev(base).scatter_add(1, idx.to(ctx.device), ctx.dev(src))
    return out, base.scatter_add(1, idx, src)


# -- sort, topk, cumsum --------------------------------------------------------------------------------------


def _sort(ctx):
    a = ctx.randn(64, 5000)
    values, index = ctx.torch.sort(ctx.dev(a), dim=1, descending=True)
    ref_values = ctx.torch.sort(a, dim=1, descending=True).values
    picked = a.gather(1, index.cpu())  # indices must point at the values they claim
    return [(values, ref_values), (picked, ref_values)]


def _topk(ctx):
    a = ctx.randn(128, 10000)
    values, index = ctx.torch.topk(ctx.dev(a), 20, dim=1)
    ref = ctx.torch.topk(a, 20, dim=1).values
    return [(values, ref), (a.gather(1, index.cpu()), ref)]


def _cumsum(ctx):
    a = ctx.randn(64, 4096)
    return ctx.torch.cumsum(ctx.dev(a), dim=1), ctx.torch.cumsum(a, dim=1)


def _argsort(ctx):
    a = ctx.randn(32, 2048)
    index = ctx.torch.argsort(ctx.dev(a), dim=1)
    return a.gather(1, index.cpu()), ctx.torch.sort(a, dim=1).values


# -- FFT -----------------------------------------------------------------------------------------------------


def _fft(ctx):
    torch = ctx.torch
    re, im = ctx.randn(64, 1024), ctx.randn(64, 1024)
    x = torch.complex(ctx.dev(re), ctx.dev(im))
    return torch.fft.fft(x, dim=-1), torch.fft.fft(torch.complex(re, im), dim=-1)


def _rfft(ctx):
    a = ctx.randn(32, 3000)  # not a power of two: another code path
    return ctx.torch.fft.rfft(ctx.dev(a), dim=-1), ctx.torch.fft.rfft(a, dim=-1)


def _fft2(ctx):
    a = ctx.randn(8, 128, 96)
    return ctx.torch.fft.fft2(ctx.dev(a)), ctx.torch.fft.fft2(a)


# -- RNG: statistics, not equality ---------------------------------------------------------------------------


def _rng_stats(kind):
    def build(ctx):
        torch = ctx.torch
        n = 1 << 21
        if kind == "uniform":
            x, mean, var = torch.rand(n, device=ctx.device, dtype=ctx.dtype), 0.5, 1.0 / 12.0
        elif kind == "normal":
            x, mean, var = torch.randn(n, device=ctx.device, dtype=ctx.dtype), 0.0, 1.0
        else:
            p = torch.full((n,), 0.3, device=ctx.device, dtype=ctx.dtype)
            x, mean, var = torch.bernoulli(p), 0.3, 0.21
        values = x.double().cpu()
        if not bool(torch.isfinite(values).all()):
            return {"error": float("nan"), "info": {"note": "non-finite random numbers"}}
        m, v = float(values.mean()), float(values.var())
        distinct = int(torch.unique(values[:4096]).numel())
        if distinct < 2:
            return {"error": float("inf"), "info": {"note": "all random numbers are equal", "mean": m, "var": v}}
        # Error figure: how far the sample mean and variance are from the distribution's, relative to its spread.
        error = max(abs(m - mean) / math.sqrt(var), abs(v - var) / var)
        return {"error": error, "tol": 1e-2, "info": {"mean": round(m, 6), "var": round(v, 6), "n": n}}

    return build


# -- scaled_dot_product_attention ----------------------------------------------------------------------------


def _sdpa_reference(torch, q, k, v, causal=False):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _sdpa_inputs(ctx):
    q, k, v = ctx.randn(2, 8, 256, 64), ctx.randn(2, 8, 256, 64), ctx.randn(2, 8, 256, 64)
    return (q, k, v), tuple(ctx.dev(t) for t in (q, k, v))


def _sdpa_forced(backend_name):
    def build(ctx):
        torch = ctx.torch
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError:
            ctx.unavailable("torch.nn.attention.sdpa_kernel needs torch 2.3 or later")
        backend = getattr(SDPBackend, backend_name, None)
        if backend is None:
            ctx.unavailable("this torch has no SDPBackend." + backend_name)
        (q, k, v), (qd, kd, vd) = _sdpa_inputs(ctx)
        reasons = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reasons.extend(_sdpa_eligibility(torch, backend_name, qd, kd, vd))
            try:
                with sdpa_kernel([backend]):
                    out = ctx.F.scaled_dot_product_attention(qd, kd, vd, is_causal=True)
                ctx.sync()
            except RuntimeError as exc:
                text = str(exc)
                reasons.extend(str(w.message) for w in caught)
                if "No available kernel" in text or "No viable backend" in text or reasons:
                    ctx.unavailable(_sdpa_reason(backend_name, reasons, text))
                raise
        return {
            "pairs": [(out, _sdpa_reference(torch, q, k, v, causal=True))],
            "info": {"backend": backend_name, "notes": _dedupe(str(w.message) for w in caught)[:5]},
        }

    return build


def _sdpa_eligibility(torch, backend_name, q, k, v):
    """Reasons torch gives for not using a backend (CUDA/ROCm only; emitted as warnings with debug=True)."""
    if q.device.type != "cuda":
        return []
    checker = {
        "FLASH_ATTENTION": "can_use_flash_attention",
        "EFFICIENT_ATTENTION": "can_use_efficient_attention",
        "CUDNN_ATTENTION": "can_use_cudnn_attention",
    }.get(backend_name)
    backends = torch.backends.cuda
    if checker is None or not hasattr(backends, checker) or not hasattr(backends, "SDPAParams"):
        return []
    try:
        try:
            params = backends.SDPAParams(q, k, v, None, 0.0, True, False)
        except TypeError:  # torch < 2.5: no enable_gqa argument
            params = backends.SDPAParams(q, k, v, None, 0.0, True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            usable = getattr(backends, checker)(params, True)
        if usable:
            return []
        return [str(w.message) for w in caught] or [checker + " returned False"]
    except Exception as exc:  # private-ish API; never let it decide the case
        return ["eligibility check failed: %s" % exc]


def _sdpa_reason(backend_name, reasons, text):
    reasons = _dedupe(r.strip() for r in reasons if r.strip())
    if reasons:
        return "%s not usable here: %s" % (backend_name, " | ".join(reasons[:4]))
    return "%s not usable here: %s" % (backend_name, text.splitlines()[0] if text else "no reason given")


def _dedupe(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _sdpa_default(ctx):
    torch = ctx.torch
    (q, k, v), (qd, kd, vd) = _sdpa_inputs(ctx)
    chosen = None
    try:
        from torch.nn.attention import SDPBackend

        chosen = SDPBackend(torch._fused_sdp_choice(qd, kd, vd, None, 0.0, True)).name
    except Exception as exc:
        chosen = "unknown (%s)" % type(exc).__name__
    out = ctx.F.scaled_dot_product_attention(qd, kd, vd, is_causal=True)
    return {"pairs": [(out, _sdpa_reference(torch, q, k, v, causal=True))], "info": {"chosen": chosen}}


# -- autocast, runtime compilation, streams ------------------------------------------------------------------


def _autocast(low):
    def build(ctx):
        torch = ctx.torch
        dtype = getattr(torch, low)
        a, b = ctx.randn(256, 512), ctx.randn(512, 128, scale=0.05)
        # The reference rounds the inputs as autocast will, then multiplies in float64.
        ar, br = a.to(dtype).double(), b.to(dtype).double()
        with torch.autocast(device_type=ctx.device_type, dtype=dtype):
            y = ctx.dev(a, torch.float32) @ ctx.dev(b, torch.float32)
            s = torch.softmax(y, dim=-1)  # autocast runs softmax in fp32
        if y.dtype != dtype:
            return {"error": float("inf"), "info": {"note": "autocast produced %s, expected %s" % (y.dtype, dtype)}}
        return {"pairs": [(y, ar @ br), (s, torch.softmax(ar @ br, dim=-1))], "info": {"softmax_dtype": str(s.dtype)}}

    return build


JIT_CODE = "template <typename T> T doctor_fma(T x, T y, T alpha) { return x * y + alpha * x - y; }"


def _jiterator(ctx):
    torch = ctx.torch
    jiterator = getattr(torch.cuda, "jiterator", None)
    if jiterator is None or not hasattr(jiterator, "_create_jit_fn"):
        ctx.unavailable("torch.cuda.jiterator is not in this torch")
    fn = jiterator._create_jit_fn(JIT_CODE, alpha=0.5)
    a, b = ctx.randn(1024, 513), ctx.randn(1024, 513)
    out = fn(ctx.dev(a), ctx.dev(b), alpha=0.5)
    return out, a * b + 0.5 * a - b


def _streams_events(ctx):
    torch = ctx.torch
    a = ctx.randn(2048, 2048)
    x = ctx.dev(a)
    side = torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        start.record()
        y = x * 2.0 + 1.0
        z = y.sum(dim=1)
        end.record()
    torch.cuda.current_stream().wait_stream(side)
    end.synchronize()
    elapsed = start.elapsed_time(end)
    if not (elapsed >= 0.0):
        return {"error": float("inf"), "info": {"note": "event elapsed time is %r" % elapsed}}
    return {"pairs": [(z, (a * 2.0 + 1.0).sum(dim=1))], "info": {"elapsed_ms": round(elapsed, 4)}}


def _event_query(ctx):
    torch = ctx.torch
    ev = torch.cuda.Event()
    a = ctx.randn(1024, 1024)
    x = ctx.dev(a)
    y = x @ x
    ev.record()
    ev.synchronize()
    if not ev.query():
        return {"error": float("inf"), "info": {"note": "event not complete after synchronize()"}}
    return y, a @ a


# -- every visible device -------------------------------------------------------------------------------------


def _on_device(index):
    def build(ctx):
        torch = ctx.torch
        device = "cuda:%d" % index
        a, b = ctx.randn(256, 256), ctx.randn(256, 256)
        x = a.to(device, ctx.dtype)
        y = b.to(device, ctx.dtype)
        out = (x @ y).relu()
        moved = out.to("cuda:0") if index != 0 else out
        name = torch.cuda.get_device_name(index)
        return {"pairs": [(moved, (a @ b).relu())], "info": {"device": device, "name": name}}

    return build


# -- the suite ----------------------------------------------------------------------------------------------


def _build_cases():
    cases = [
        case("memory", "alloc-fill", "float32", _alloc_fill, core=True),
        case("memory", "host-device-roundtrip", "float32", _h2d_d2h),
        case("memory", "device-copy-strided", "float32", _d2d_copy),
        case("memory", "pinned-async-copy", "float32", _pinned_copy, gpu_only=True),
        case("memory", "alloc-256mb", "float32", _large_alloc),
        case("elementwise", "int-arith", "int64", _int_arith),
    ]
    for dtype in FLOATS:
        cases += [
            case("elementwise", "arith-" + dtype, dtype, _arith, core=dtype == "float32"),
            case("elementwise", "transcendental-" + dtype, dtype, _transcendental),
        ]
    cases += [
        case("elementwise", "where-clamp-float32", "float32", _where_clamp),
        case("reduction", "sum-float32", "float32", _sum),
        case("reduction", "sum-bfloat16", "bfloat16", _sum),
        case("reduction", "mean-float16", "float16", _mean),
        case("reduction", "max-argmax-float32", "float32", _max_argmax),
        case("reduction", "var-std-float32", "float32", _var_std),
        case("reduction", "norm-bfloat16", "bfloat16", _norm),
    ]
    for dtype in FLOATS:
        fp32 = dtype == "float32"
        cases += [
            case("matmul", "mm-" + dtype, dtype, _mm, profile=True, tf32=fp32, core=dtype != "bfloat16", log=dtype != "bfloat16"),
            case("matmul", "bmm-" + dtype, dtype, _bmm, profile=True, tf32=fp32),
            case("matmul", "addmm-" + dtype, dtype, _addmm, profile=True, tf32=fp32),
            case("linear", "linear-fwd-bwd-" + dtype, dtype, _linear_fwd_bwd, tf32=fp32),
        ]
    for dtype in FLOATS:
        fp32 = dtype == "float32"
        cases.append(
            case("conv", "conv2d-fwd-bwd-" + dtype, dtype, _conv2d_fwd_bwd, profile=True, tf32=fp32, core=fp32, log=fp32)
        )
    cases += [
        case("conv", "conv2d-strided-channels-last-float16", "float16", _conv2d_strided_cl, profile=True),
        case("norm", "batch-norm-float32", "float32", _batch_norm, profile=True, log=True),
        case("norm", "batch-norm-float16", "float16", _batch_norm, profile=True),
        case("norm", "layer-norm-float32", "float32", _layer_norm),
        case("norm", "layer-norm-bfloat16", "bfloat16", _layer_norm),
        case("norm", "group-norm-float32", "float32", _group_norm),
        case("norm", "rms-norm-float32", "float32", _rms_norm),
        case("norm", "rms-norm-float16", "float16", _rms_norm),
        case("pooling", "max-pool2d-float32", "float32", _max_pool),
        case("pooling", "avg-pool2d-float16", "float16", _avg_pool),
        case("pooling", "adaptive-avg-pool2d-float32", "float32", _adaptive_pool),
        case("softmax", "softmax-float32", "float32", _softmax),
        case("softmax", "softmax-float16", "float16", _softmax),
        case("softmax", "log-softmax-bfloat16", "bfloat16", _log_softmax),
        case("softmax", "cross-entropy-fwd-bwd-float32", "float32", _cross_entropy),
        case("embedding", "embedding-fwd-bwd-float32", "float32", _embedding),
        case("embedding", "embedding-fwd-bwd-float16", "float16", _embedding),
        case("index", "index-select-float32", "float32", _index_select),
        case("index", "index-put-accumulate-float32", "float32", _index_put),
        case("index", "gather-float32", "float32", _gather),
        case("index", "scatter-add-float32", "float32", _scatter_add),
        case("sort", "sort-float32", "float32", _sort),
        case("sort", "topk-float32", "float32", _topk),
        case("sort", "cumsum-float32", "float32", _cumsum, tol=1e-4),
        case("sort", "argsort-float16", "float16", _argsort),
        case("fft", "fft-complex64", "float32", _fft, profile=True),
        case("fft", "rfft-float32", "float32", _rfft, profile=True),
        case("fft", "fft2-float32", "float32", _fft2, profile=True),
        case("rng", "rand-uniform", "float32", _rng_stats("uniform")),
        case("rng", "randn-normal", "float32", _rng_stats("normal")),
        case("rng", "bernoulli", "float32", _rng_stats("bernoulli")),
    ]
    for dtype in ("float16", "bfloat16"):
        for backend in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
            short = backend.split("_")[0].lower()
            cases.append(case("sdpa", "sdpa-%s-%s" % (short, dtype), dtype, _sdpa_forced(backend), profile=True))
    cases += [
        case("sdpa", "sdpa-default-float16", "float16", _sdpa_default, profile=True),
        case("autocast", "autocast-float16", "float16", _autocast("float16")),
        case("autocast", "autocast-bfloat16", "bfloat16", _autocast("bfloat16")),
        case("jit", "jiterator-float32", "float32", _jiterator, gpu_only=True),
        case("jit", "jiterator-float16", "float16", _jiterator, gpu_only=True),
        case("streams", "stream-event-timing", "float32", _streams_events, gpu_only=True),
        case("streams", "event-query", "float32", _event_query, gpu_only=True, tf32=True),
    ]
    return cases


CASES = _build_cases()


def dynamic_cases(torch, device_type, device_count):
    """Cases that depend on the machine: one per visible device."""
    if device_type == "cpu":
        return [case("devices", "device-0", "float32", _cpu_devices, gpu_only=True)]
    return [case("devices", "device-%d" % i, "float32", _on_device(i), tf32=True) for i in range(max(device_count, 1))]


def _cpu_devices(ctx):  # never reached: gpu_only
    ctx.unavailable("per-device cases need a GPU")
