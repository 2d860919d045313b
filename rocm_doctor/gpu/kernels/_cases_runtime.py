"""Cases for the runtime around the kernels: autocast, runtime compilation, streams and events, and every
visible device.

Loaded by _cases.py inside the target interpreter; `case` and what a case returns are described there.
"""

from _doctor_cases import case


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


CASES = [
    case("autocast", "autocast-float16", "float16", _autocast("float16")),
    case("autocast", "autocast-bfloat16", "bfloat16", _autocast("bfloat16")),
    case("jit", "jiterator-float32", "float32", _jiterator, gpu_only=True),
    case("jit", "jiterator-float16", "float16", _jiterator, gpu_only=True),
    case("streams", "stream-event-timing", "float32", _streams_events, gpu_only=True),
    case("streams", "event-query", "float32", _event_query, gpu_only=True, tf32=True),
]


def dynamic_cases(torch, device_type, device_count):
    """Cases that depend on the machine: one per visible device."""
    if device_type == "cpu":
        return [case("devices", "device-0", "float32", _cpu_devices, gpu_only=True)]
    return [case("devices", "device-%d" % i, "float32", _on_device(i), tf32=True) for i in range(max(device_count, 1))]


def _cpu_devices(ctx):  # never reached: gpu_only
    ctx.unavailable("per-device cases need a GPU")
