"""Do the bench's profile figures read from the raw profiler events equal torch's own tables, and how long does each
way take? Profiles the small CNN's training step (with the optimizer's regions) and decoded tokens of the
Qwen3-shaped decoder on the device, then compares every (name, kind) row: count, self host time, self device time,
host time in all, and the device intervals.

    python benchmarks/profile_digest_check.py [cuda|cpu] [--tokens N]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "rocm_doctor", "gpu", "bench")


def load_bench():
    path = os.path.normpath(os.path.join(BENCH, os.pardir, os.pardir, "_childlib.py"))
    spec = importlib.util.spec_from_file_location("_doctor_childlib", path)
    childlib = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(childlib)
    child = os.path.join(BENCH, "_bench_child.py")
    return childlib, {name: childlib.load_sibling(child, f"_bench_{name}.py")
                      for name in ("common", "sections", "profile", "cnn", "decoder")}


def compare(label, torch, prof, profile_module):
    t = time.perf_counter()
    raw = profile_module.from_raw(torch, prof)
    raw_s = time.perf_counter() - t
    t = time.perf_counter()
    tables = profile_module.from_tables(prof)
    tables_s = time.perf_counter() - t
    bad = []
    for key in sorted(set(raw.rows) | set(tables.rows)):
        a, b = raw.rows.get(key), tables.rows.get(key)
        if a is None or b is None or a[0] != b[0] or any(abs(x - y) > 1e-3 * max(1.0, abs(y)) for x, y in zip(a[1:], b[1:])):
            bad.append((key, a, b))
    same_device = sorted(raw.device) == sorted(tables.device)
    print(f"{label}: {len(raw.rows)} rows, {len(raw.device)} device events; raw {raw_s:.3f} s, tables {tables_s:.3f} s; "
          f"rows differing: {len(bad)}; device events equal: {same_device}")
    for key, a, b in bad[:10]:
        print("   ", key, a, b)
    return not bad and same_device


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", nargs="?", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--tokens", type=int, default=8)
    args = parser.parse_args(argv)
    childlib, mods = load_bench()
    import torch

    device = torch.device(args.device)
    ctx = mods["common"].Ctx(torch, device)
    gpu = device.type == "cuda"
    ok = True
    trainer = mods["cnn"].Trainer(ctx, device, 64)
    for _ in range(3):
        trainer.step()
    with childlib.profiler(torch, gpu) as prof:
        for _ in range(5):
            trainer.step()
        ctx.sync()
    ok &= compare("cnn step x5", torch, prof, mods["profile"])
    dec = mods["decoder"]
    model = dec.Decoder(torch, dict(dec.QWEN3_0_6B), device, ctx.dtype("bf16" if gpu else "fp32"), 64)
    with torch.inference_mode():
        token = model.forward(torch.zeros(1, 16, dtype=torch.long, device=device), 0)[:, -1].argmax(-1, keepdim=True)
        with childlib.profiler(torch, gpu) as prof:
            for i in range(args.tokens):
                token = model.forward(token, 16 + i)[:, -1].argmax(-1, keepdim=True)
            ctx.sync()
    ok &= compare(f"decoder x{args.tokens} tokens", torch, prof, mods["profile"])
    print("EQUAL" if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
