"""What the profiler's first session costs, and when to pay it: torch.profiler.profile after the GPU is in use,
before the first CUDA call, from a background thread while the main thread starts the GPU, CPU activity only, and
torch.autograd.profiler.profile through Kineto (what the doctor's children use: torch.profiler.profile imports
torch._inductor on its first session). Each variant runs twice, each time in a fresh process.

    python benchmarks/profiler_warmup.py
"""
import os
import subprocess
import sys

VARIANTS = sys.argv[1:] or ["after", "before", "thread", "cpu-only", "autograd"]

VARIANT = r'''
import sys, threading, time
variant = sys.argv[1]
t0 = time.monotonic(); import torch; imported = time.monotonic()
from torch.profiler import ProfilerActivity, profile
acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
marks = {}
def warm():
    t = time.monotonic()
    with profile(activities=acts):
        pass
    marks["warm"] = time.monotonic() - t
def gpu_start():
    t = time.monotonic()
    a = torch.randn(1024, 1024, device="cuda"); (a @ a).sum().item()
    marks["gpu"] = time.monotonic() - t
    return a
if variant == "after":
    a = gpu_start(); warm()
elif variant == "before":
    warm(); a = gpu_start()
elif variant == "thread":
    th = threading.Thread(target=warm); th.start(); a = gpu_start(); th.join()
elif variant == "cpu-only":
    a = gpu_start(); acts = [ProfilerActivity.CPU]; warm()
elif variant == "autograd":
    a = gpu_start(); t = time.monotonic()
    with torch.autograd.profiler.profile(use_device="cuda", use_kineto=True):
        pass
    marks["warm"] = time.monotonic() - t
ready = time.monotonic()
t = time.monotonic()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    b = a @ a; torch.cuda.synchronize()
session = time.monotonic() - t
names = sorted({e.name for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA")})
inductor = "torch._inductor" in sys.modules
print(f"{variant:9s} import {imported - t0:.2f}  gpu start {marks['gpu']:.2f}  first profiler session "
      f"{marks['warm']:.2f}  import-to-ready {ready - imported:.2f}  next CPU+CUDA session {session:.2f}  "
      f"kernels seen {len(names)}; torch._inductor imported {inductor}")
'''

print("PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"), "sys.dont_write_bytecode",
      sys.dont_write_bytecode)
for variant in VARIANTS * 2:
    proc = subprocess.run([sys.executable, "-c", VARIANT, variant], capture_output=True, text=True)
    print(proc.stdout.strip() or proc.stderr.strip()[-800:], flush=True)
