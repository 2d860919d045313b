"""Cases that move or reorder data, and random numbers: indexing, sorting, FFT, RNG statistics.

Loaded by _cases.py inside the target interpreter; `case` and what a case returns are described there.
"""

import math

from _doctor_cases import case


# -- indexing ------------------------------------------------------------------------------------------------


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


CASES = [
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
