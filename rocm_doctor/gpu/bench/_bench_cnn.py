"""The SimpleCNN in detail: where a training step's time goes (first step against steady state, the profile
of a step, the optimizer variants, the measured effect of each common remedy) and a batch sweep against the CPU.
Loaded by path by _bench_child.py inside the target interpreter.
"""

import time

from _doctor_bench_common import emit, error_text, free_memory, wall
from _doctor_bench_profile import profile
from _doctor_bench_sections import build_cnn

INPUT = (3, 32, 32)
OPTIMIZERS = ("for_loop", "foreach", "fused")
REGIONS = ("Optimizer.step", "Optimizer.zero_grad")


def train_flops(batch):
    """FLOPs of one training step: forward, weight gradients, and input gradients of all but the first conv
    (the images need none). conv1 3->16 at 32x32, conv2 16->32 at 16x16, linear 2048->10."""
    conv1 = 2.0 * batch * 16 * 3 * 9 * 32 * 32
    conv2 = 2.0 * batch * 32 * 16 * 9 * 16 * 16
    linear = 2.0 * batch * 2048 * 10
    return 2 * conv1 + 3 * (conv2 + linear)


class Trainer:
    """The training step as users write it (zero_grad, forward, CrossEntropy, backward, Adam) on one device and batch, with
    the variants users try: the Adam implementation, channels_last, autocast, a capturable optimizer."""

    def __init__(self, ctx, device, batch, optimizer=None, channels_last=False, amp=None, capturable=False):
        torch = ctx.torch
        self.ctx, self.torch, self.device, self.amp = ctx, torch, device, amp
        torch.manual_seed(0)
        self.model = build_cnn(torch).to(device)
        x = torch.randn(batch, *INPUT, device=device)
        if channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        self.x, self.y = x, torch.randint(0, 10, (batch,), device=device)
        kwargs = {"lr": 1e-3}
        if optimizer == "for_loop":
            kwargs["foreach"] = False
        elif optimizer == "foreach":
            kwargs["foreach"] = True
        elif optimizer == "fused":
            kwargs["fused"] = True
        if capturable:
            kwargs["capturable"] = True
        self.opt = torch.optim.Adam(self.model.parameters(), **kwargs)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.scaler = torch.amp.GradScaler(device.type) if amp == "fp16" else None

    def loss(self):
        if not self.amp:
            return self.loss_fn(self.model(self.x), self.y)
        with self.torch.autocast(self.device.type, dtype=self.ctx.dtype(self.amp)):
            return self.loss_fn(self.model(self.x), self.y)

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss()
        if self.scaler is None:
            loss.backward()
            self.opt.step()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()

    def graphed(self):
        """The whole step captured in one CUDA/HIP graph (needs capturable=True); returns its replay."""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            self.loss().backward()
            self.opt.step()
        return graph.replay


def time_steps(ctx, device, fn, steps, warmup=2):
    """ms per step as users' scripts measure it: back to back, one sync at the end."""
    for _ in range(warmup):
        fn()
    ctx.sync(device)
    t = time.perf_counter()
    for _ in range(steps):
        fn()
    ctx.sync(device)
    return (time.perf_counter() - t) * 1000.0 / steps


def first_steps(ctx, trainer, count=3):
    """Wall time of the first steps of a fresh model, each between syncs: first-use costs show here."""
    times = []
    for _ in range(count):
        ctx.sync(trainer.device)
        t = time.perf_counter()
        trainer.step()
        ctx.sync(trainer.device)
        times.append((time.perf_counter() - t) * 1000.0)
    return times


def launch_us(ctx, iters=1000):
    """Cost of one tiny op launched back to back, for 'kernels x launch cost'."""
    x = ctx.torch.zeros(1, device=ctx.device)
    for _ in range(20):
        x.add_(1)
    ctx.sync()
    t = time.perf_counter()
    for _ in range(iters):
        x.add_(1)
    ctx.sync()
    return (time.perf_counter() - t) / iters * 1e6


def default_optimizer(ctx, params):
    """Which Adam implementation torch picks when none is asked for."""
    try:
        from torch.optim.optimizer import _default_to_fused_or_foreach

        fused, foreach = _default_to_fused_or_foreach(list(params), False, False)
    except Exception as exc:
        return None, error_text(exc)
    return ("fused" if fused else "foreach" if foreach else "for_loop"), None


def optimizers(ctx, batch, steps, profile_calls):
    base = Trainer(ctx, ctx.device, batch)
    default, why = default_optimizer(ctx, base.model.parameters())
    base = None
    for name in OPTIMIZERS:
        try:
            trainer = Trainer(ctx, ctx.device, batch, optimizer=name)
            step_ms = time_steps(ctx, ctx.device, trainer.step, steps)
            trainer.step()  # leaves gradients, so the optimizer step can be timed alone
            opt = wall(ctx, trainer.opt.step, max(3, steps // 2))
            kernels = profile(ctx, trainer.opt.step, profile_calls) if profile_calls else {}
            emit("cnn_optimizer", variant=name, default=name == default, default_error=why, available=True,
                 ms_per_step=step_ms, opt_ms=opt["median_ms"], opt_kernels=kernels.get("kernels_per_call"),
                 opt_device_busy_us=kernels.get("device_busy_us_per_call"))
        except Exception as exc:
            emit("cnn_optimizer", variant=name, default=name == default, available=False, error=error_text(exc))
        trainer = None
        free_memory(ctx)


def variants(ctx, batch, steps, baseline_ms, names):
    """The training step with one remedy applied at a time, against the plain step."""
    for name in names:
        try:
            if name == "cuda_graph" and not ctx.is_cuda:
                emit("cnn_variant", variant=name, skipped="CUDA/HIP graphs need a GPU")
                continue
            if name == "cuda_graph":
                trainer = Trainer(ctx, ctx.device, batch, capturable=True)
                fn = trainer.graphed()
            else:
                trainer = Trainer(ctx, ctx.device, batch, channels_last=name == "channels_last",
                                  amp={"amp_fp16": "fp16", "amp_bf16": "bf16"}.get(name),
                                  optimizer="fused" if name == "fused_adam" else None)
                fn = trainer.step
            ms = time_steps(ctx, ctx.device, fn, steps)
            emit("cnn_variant", variant=name, batch=batch, ms_per_step=ms, baseline_ms=baseline_ms,
                 speedup=baseline_ms / ms if ms else None)
        except Exception as exc:
            emit("cnn_variant", variant=name, batch=batch, error=error_text(exc))
        trainer = fn = None
        free_memory(ctx)


def section_cnn(ctx, params):
    torch = ctx.torch
    batch = int(params.get("batch", 64))
    steps = int(params.get("steps", 50))
    profile_calls = int(params.get("profile_steps", 5))
    trainer = Trainer(ctx, ctx.device, batch)
    emit("cnn_model", batch=batch, input=list(INPUT), params=sum(p.numel() for p in trainer.model.parameters()),
         flops_per_step=train_flops(batch), layers=[type(m).__name__ for m in trainer.model],
         cudnn_benchmark=bool(torch.backends.cudnn.benchmark))
    first = first_steps(ctx, trainer)
    steady = time_steps(ctx, ctx.device, trainer.step, steps)
    synced = wall(ctx, trainer.step, max(3, steps // 5))
    emit("cnn_steps", batch=batch, first_ms=first[0], next_ms=first[1:], steady_ms=steady,
         synced_median_ms=synced["median_ms"], steps=steps)
    emit("cnn_launch", us_per_launch=launch_us(ctx, int(params.get("launch_iters", 1000))))
    if profile_calls:
        try:
            emit("cnn_profile", batch=batch, steady_ms=steady,
                 **profile(ctx, trainer.step, profile_calls, regions=REGIONS))
        except Exception as exc:
            emit("cnn_profile", batch=batch, error=error_text(exc))
    trainer = None
    free_memory(ctx)
    optimizers(ctx, batch, steps, int(params.get("optimizer_profile_calls", 2)))
    variants(ctx, batch, steps, steady, params.get("variants", ["channels_last", "amp_fp16", "amp_bf16",
                                                                 "fused_adam", "cuda_graph"]))


def section_sweep(ctx, params):
    """Step time on the GPU and the CPU per batch size, with the GPU's busy fraction, within a time budget."""
    cpu = ctx.torch.device("cpu")
    batches = [int(b) for b in params.get("batches", [16, 32, 64, 128, 256, 512, 1024])]
    budget = float(params.get("budget_s", 40.0))
    gpu_steps, cpu_steps = int(params.get("gpu_steps", 20)), int(params.get("cpu_steps", 3))
    profile_calls = int(params.get("profile_steps", 2))
    started = time.monotonic()
    for i, batch in enumerate(batches):
        if time.monotonic() - started > budget:
            emit("sweep_stop", reason="time budget of %.0f s used" % budget, left=batches[i:])
            break
        point = {"batch": batch}
        try:
            if ctx.is_cuda:
                trainer = Trainer(ctx, ctx.device, batch)
                point["gpu_ms_per_step"] = gpu = time_steps(ctx, ctx.device, trainer.step, gpu_steps, warmup=3)
                if profile_calls:
                    busy = profile(ctx, trainer.step, profile_calls)
                    point["device_busy_us_per_step"] = busy.get("device_busy_us_per_call")
                    point["kernels_per_step"] = busy.get("kernels_per_call")
                    point["busy_fraction"] = point["device_busy_us_per_step"] / (gpu * 1000.0) if gpu else None
                trainer = None
                free_memory(ctx)
            trainer = Trainer(ctx, cpu, batch)
            point["cpu_ms_per_step"] = time_steps(ctx, cpu, trainer.step, cpu_steps, warmup=1)
            trainer = None
            if point.get("gpu_ms_per_step"):
                point["speedup"] = point["cpu_ms_per_step"] / point["gpu_ms_per_step"]
            emit("sweep_point", **point)
        except Exception as exc:
            emit("sweep_point", error=error_text(exc), **point)
            break
        finally:
            free_memory(ctx)
