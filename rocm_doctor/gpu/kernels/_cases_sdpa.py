"""Cases for scaled_dot_product_attention: each backend forced in turn, and the one torch picks.

Loaded by _cases.py inside the target interpreter; `case` and what a case returns are described there.
"""

import math
import warnings

from _doctor_cases import case


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


def _build_cases():
    cases = []
    for dtype in ("float16", "bfloat16"):
        for backend in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
            short = backend.split("_")[0].lower()
            cases.append(case("sdpa", "sdpa-%s-%s" % (short, dtype), dtype, _sdpa_forced(backend), profile=True))
    cases.append(case("sdpa", "sdpa-default-float16", "float16", _sdpa_default, profile=True))
    return cases


CASES = _build_cases()
