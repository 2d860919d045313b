"""What the first torch.profiler session costs on this GPU, in steps: torch import, CUDA start, the first cuBLAS
call, importing torch.profiler, then entering and leaving a profiler session with CUDA only and with CPU+CUDA.

    python benchmarks/profiler_startup.py
"""
import time, sys
t=time.monotonic(); import torch; print(f"import torch {time.monotonic()-t:.2f}")
t=time.monotonic(); torch.cuda.init(); x=torch.ones(1,device='cuda'); torch.cuda.synchronize(); print(f"cuda init+first tensor {time.monotonic()-t:.2f}")
a=torch.randn(1024,1024,device='cuda')
t=time.monotonic(); b=a@a; torch.cuda.synchronize(); print(f"first fp32 matmul (cuBLAS init) {time.monotonic()-t:.2f}")
t=time.monotonic(); import torch.profiler; print(f"import torch.profiler {time.monotonic()-t:.2f}")
from torch.profiler import profile, ProfilerActivity
for acts,label in (([ProfilerActivity.CUDA],"CUDA only"),([ProfilerActivity.CPU,ProfilerActivity.CUDA],"CPU+CUDA"),([ProfilerActivity.CPU,ProfilerActivity.CUDA],"CPU+CUDA again")):
    t=time.monotonic()
    with profile(activities=acts) as prof:
        t1=time.monotonic()
        b=a@a; torch.cuda.synchronize()
        t2=time.monotonic()
    t3=time.monotonic()
    ev=prof.key_averages()
    t4=time.monotonic()
    print(f"{label}: enter {t1-t:.2f} body {t2-t1:.2f} exit {t3-t2:.2f} key_averages {t4-t3:.2f} events {len(ev)}")

# The same first start in a fresh process, from a background thread while the main thread keeps the GPU busy with
# small timed matmuls: does the start hold the GIL, and does it disturb the work beside it?
import subprocess  # noqa: E402

BESIDE = r'''
import threading, time, torch
a = torch.randn(1024, 1024, device="cuda"); (a @ a).sum().item()
def loop(seconds):
    n, t = 0, time.monotonic()
    while time.monotonic() - t < seconds:
        (a @ a).sum().item(); n += 1
    return n / seconds
alone = loop(1.0)
done = {}
def warm():
    t = time.monotonic()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        pass
    done["s"] = time.monotonic() - t
thread = threading.Thread(target=warm); t0 = time.monotonic(); thread.start()
beside = loop(2.0); thread.join(); total = time.monotonic() - t0
err = ((a @ a) - (a.cpu() @ a.cpu()).cuda()).abs().max().item()
print(f"matmul+sync per s alone {alone:.0f}, beside the start {beside:.0f}; start in the thread {done['s']:.2f} s; "
      f"wall {total:.2f} s; max abs error after {err:.2e}")
'''
print(subprocess.run([sys.executable, "-c", BESIDE], capture_output=True, text=True).stdout.strip())
