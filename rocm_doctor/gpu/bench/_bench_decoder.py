"""The decoder section: an LLM-shaped decoder (Qwen3-0.6B layer shapes, random weights), prefill and decode
timed, and where the time of a decoded token goes. Loaded by path by _bench_child.py inside the target interpreter.
"""

import statistics
import time

import _doctor_childlib as childlib
from _doctor_bench_common import emit, error_text, free_memory
from _doctor_bench_profile import busy_us, digest_of, tops


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
    """Device-busy time, kernel count and the top operators per decoded token, from torch's profiler."""
    with childlib.profiler(ctx.torch, model.device.type == "cuda") as prof:
        ctx.sync(model.device)
        t = time.perf_counter()
        for i in range(steps):
            token = model.forward(token, pos + i)[:, -1].argmax(-1, keepdim=True)
        ctx.sync(model.device)
        wall_ms = (time.perf_counter() - t) * 1000.0
    digest = digest_of(ctx.torch, prof)
    out = {"steps": steps, "profiled_wall_ms_per_token": wall_ms / steps}
    if model.device.type == "cuda":
        out["device_busy_us_per_token"] = busy_us([(start, end) for _name, start, end in digest.device]) / steps
        out["kernels_per_token"] = len(digest.device) / steps
    out["sdpa_ops"] = {name: row[0] for (name, kind), row in digest.rows.items() if kind == "op" and
                       name.startswith(("aten::_scaled_dot_product", "aten::_efficient_attention"))}
    out.update(tops(digest, steps, unit="token", kernels_named_like_ops=True))
    return out


def time_decode(ctx, model, token, start, steps, device):
    """Decode `steps` tokens greedily from position `start`, timed between device syncs: (ms, the last token)."""
    ctx.sync(device)
    t = time.perf_counter()
    for i in range(steps):
        token = model.forward(token, start + i)[:, -1].argmax(-1, keepdim=True)
    ctx.sync(device)
    return (time.perf_counter() - t) * 1000.0, token


def relative_spread(values):
    """Standard error of the mean over the mean: how far the mean of these per-chunk figures may move."""
    if len(values) < 2 or not statistics.mean(values):
        return None
    return statistics.stdev(values) / len(values) ** 0.5 / statistics.mean(values)


def decode_until_steady(ctx, model, token, start, most, chunk, spread, device):
    """Decode `most` tokens from position `start` in chunks of `chunk`, each timed between device syncs; stop early
    once two or more chunks agree (the relative spread of their per-token times is at most `spread`). Returns (ms,
    tokens decoded, per-token ms of each chunk, the last token). Without `chunk`, one timed run of `most`."""
    chunk = max(1, min(int(chunk or most), most))
    total, done, per_chunk = 0.0, 0, []
    while done < most:
        n = min(chunk, most - done)
        ms, token = time_decode(ctx, model, token, start + done, n, device)
        total, done = total + ms, done + n
        per_chunk.append(ms / n)
        measured = relative_spread(per_chunk)
        if spread and measured is not None and measured <= spread:
            break
    return total, done, per_chunk, token


def run_decoder(ctx, target, device, dtype_name, cfg, prefill, decode, reps, profile_steps, chunk=None, spread=None):
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
        t = time.perf_counter()
        model.forward(prompt, 0)  # warm-up: kernel selection, lazy init
        ctx.sync(device)
        warmup_ms = (time.perf_counter() - t) * 1000.0
        times = []
        for _ in range(max(1, reps)):
            ctx.sync(device)
            t = time.perf_counter()
            logits = model.forward(prompt, 0)
            ctx.sync(device)
            times.append((time.perf_counter() - t) * 1000.0)
        ms = statistics.median(times)
        emit("decoder_prefill", target=target, dtype=dtype_name, tokens=prefill, ms=ms, best_ms=min(times),
             first_ms=warmup_ms,
             tokens_per_s=prefill / (ms * 1e-3))
        token = logits[:, -1].argmax(-1, keepdim=True)
        for i in range(2):  # warm-up the decode shapes
            model.forward(token, prefill + i)
        ms, decoded, per_chunk, token = decode_until_steady(ctx, model, token, prefill, decode, chunk, spread, device)
        # The same positions again: what is left once per-shape setup (plans, autotuning per KV length) is cached.
        repeat, token = time_decode(ctx, model, token, prefill, decoded, device)
        emit("decoder_decode", target=target, dtype=dtype_name, tokens=decoded, context_start=prefill, ms=ms,
             ms_per_token=ms / decoded, tokens_per_s=decoded / (ms * 1e-3),
             repeat_ms_per_token=repeat / decoded, mean_context=prefill + (decoded + 1) / 2.0, most_tokens=decode,
             chunk_ms_per_token=per_chunk, relative_spread=relative_spread(per_chunk))
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
                    int(params.get("profile_steps", 8)), params.get("decode_chunk"), params.get("decode_spread"))
    cpu = params.get("cpu") or {}
    if cpu.get("enabled", True):
        run_decoder(ctx, "cpu", ctx.torch.device("cpu"), cpu.get("dtype", "fp32"), cfg,
                    int(cpu.get("prefill_tokens", 64)), int(cpu.get("decode_tokens", 8)), 1,
                    int(cpu.get("profile_steps", 0 if ctx.is_cuda else 4)), cpu.get("decode_chunk"),
                    cpu.get("decode_spread"))
