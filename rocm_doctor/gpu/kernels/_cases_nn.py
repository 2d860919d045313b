"""Cases for the layers of a network: matmul and linear, convolution, normalisation, pooling, softmax and
losses, embedding.

Loaded by _cases.py inside the target interpreter; `case` and what a case returns are described there.
"""

from _doctor_cases import FLOATS, case


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
    ctx.backward(y, ctx.dev(g))
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    yr = F.linear(xr, wr, br)
    ctx.backward(yr, g)
    return [(y, yr), (xd.grad, xr.grad), (wd.grad, wr.grad), (bd.grad, br.grad)]


# -- convolution, normalisation, pooling ---------------------------------------------------------------------


def _conv2d_fwd_bwd(ctx):
    F = ctx.F
    x, w, b = ctx.randn(4, 16, 32, 32), ctx.randn(32, 16, 3, 3, scale=0.2), ctx.randn(32)
    g = ctx.randn(4, 32, 32, 32)
    xd, wd, bd = (ctx.dev(t).requires_grad_() for t in (x, w, b))
    y = F.conv2d(xd, wd, bd, padding=1)
    ctx.backward(y, ctx.dev(g))
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    yr = F.conv2d(xr, wr, br, padding=1)
    ctx.backward(yr, g)
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


# -- embedding -----------------------------------------------------------------------------------------------


def _embedding(ctx):
    F = ctx.F
    weight, idx, g = ctx.randn(1000, 64), ctx.randint(0, 1000, (32, 50)), ctx.randn(32, 50, 64)
    wd = ctx.dev(weight).requires_grad_()
    y = F.embedding(idx.to(ctx.device), wd)
    ctx.backward(y, ctx.dev(g))
    wr = weight.clone().requires_grad_()
    yr = F.embedding(idx, wr)
    ctx.backward(yr, g)
    return [(y, yr), (wd.grad, wr.grad)]


def _build_cases():
    cases = []
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
    ]
    return cases


CASES = _build_cases()
