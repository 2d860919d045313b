"""The scaled_dot_product_attention section: every backend forced in turn on each shape, with torch's own reason
when one cannot run. Loaded by path by _bench_child.py inside the target interpreter.
"""

import warnings

from _doctor_bench_common import emit, error_text, free_memory, measure


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
