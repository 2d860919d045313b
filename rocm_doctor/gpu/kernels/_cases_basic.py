"""Cases for memory (allocation, copies), elementwise arithmetic and reductions.

Loaded by _cases.py inside the target interpreter; `case` and what a case returns are described there.
"""

from _doctor_cases import FLOATS, case


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
    return cases


CASES = _build_cases()
