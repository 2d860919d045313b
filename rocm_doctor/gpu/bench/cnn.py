"""Analysis lines for the SimpleCNN: where a training step's time goes, the Adam variants, the measured
effect of each remedy, and the batch sweep against the CPU.

Figures only (verdict info): why the speed-up is low is decided by the check bench-cnn-speedup-low
(checks/bench.py), from the summary these functions leave in values["cnn"].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from rocm_doctor.gpu.bench.lines import make_line, records

if TYPE_CHECKING:
    from rocm_doctor.gpu.bench.analysis import Analysis

BUSY_ENOUGH = 0.8  # the GPU is "busy most of the time" from here
VARIANT_LABELS = {"channels_last": "channels_last (NHWC) model and input", "amp_fp16": "autocast fp16 + GradScaler",
                  "amp_bf16": "autocast bf16", "fused_adam": "Adam(fused=True)",
                  "cuda_graph": "whole step in one CUDA/HIP graph (capturable Adam)"}
OPTIMIZER_LABELS = {"for_loop": "Adam(foreach=False)", "foreach": "Adam(foreach=True)", "fused": "Adam(fused=True)"}
PROFILER_EVENTS = ("Activity Buffer Request",)  # the profiler's own bookkeeping, not the model's work


def _one(results: dict[str, Any], section: str, kind: str) -> Optional[dict[str, Any]]:
    found = records(results, section, kind)
    return found[0] if found else None


def summary(a: Analysis) -> dict[str, Any]:
    return a.values.setdefault("cnn", {})


def step(a: Analysis) -> None:
    out = summary(a)
    model, steps = _one(a.results, "cnn", "cnn_model"), _one(a.results, "cnn", "cnn_steps")
    if not steps:
        return
    steady, first = steps["steady_ms"], steps["first_ms"]
    out.update(batch=steps["batch"], steady_ms=steady, first_ms=first, next_ms=steps.get("next_ms"),
               first_over_steady=first / steady if steady else None)
    flops = (model or {}).get("flops_per_step")
    achieved = flops / (steady * 1e-3) / 1e12 if flops and steady else None
    out["achieved_tflops"] = achieved
    target = "GPU" if a.on_gpu else "CPU"
    a.add(make_line("cnn", "cnn.step", f"training step, batch {steps['batch']}, {target} (back to back)", steady,
                    "ms/step", explanation=(f"{achieved:.3g} TFLOP/s of useful work" if achieved else ""),
                    flops_per_step=flops, synced_median_ms=steps.get("synced_median_ms")))
    nxt = ", ".join(f"{ms:.2f}" for ms in steps.get("next_ms") or [])
    a.add(make_line("cnn", "cnn.first", "first step in this process", first, "ms",
                    explanation=f"{first / steady:.0f}x a steady step (then {nxt} ms): first use of each kernel, "
                                "library handles, conv algorithm selection" if steady else ""))
    _profile(a, out)
    _optimizers(a, out)
    _variants(a, out)


def _profile(a: Analysis, out: dict[str, Any]) -> None:
    prof = _one(a.results, "cnn", "cnn_profile")
    launch = a.values.get("launch_back_to_back_us") or (_one(a.results, "cnn", "cnn_launch") or {}).get("us_per_launch")
    out["launch_us"] = launch
    if not prof:
        return
    if prof.get("error"):
        a.add(make_line("cnn", "cnn.profile", "profile of a step", None, "", explanation=f"failed: {prof['error']}"))
        return
    steady = out["steady_ms"]
    host_ops = [op for op in prof.get("top_host_ops") or [] if op.get("name") not in PROFILER_EVENTS]
    host = (host_ops or [{}])[0]
    device = (prof.get("top_device_ops") or [{}])[0]
    kernel = (prof.get("top_kernels") or [{}])[0]
    regions = prof.get("regions_host_us_per_call") or {}
    out.update(top_host_op=host.get("name"), top_host_us=host.get("self_cpu_us_per_call"),
               top_device_op=device.get("name"), top_kernel=kernel.get("name"),
               optimizer_host_ms=(regions.get("Optimizer.step") or 0) / 1000.0 or None,
               top_host_ops=host_ops, top_kernels=prof.get("top_kernels"))
    busy_us, kernels = prof.get("device_busy_us_per_call"), prof.get("kernels_per_call")
    if busy_us is not None and steady:
        out.update(busy=busy_us / (steady * 1000.0), device_busy_ms=busy_us / 1000.0, kernels_per_step=kernels)
        a.add(make_line("cnn", "cnn.busy", "GPU busy during a step", 100.0 * out["busy"], "% of the step",
                        explanation=f"kernels run {busy_us / 1000:.3f} of {steady:.3f} ms; the rest the GPU waits "
                                    "for the host to launch work"))
        if kernels:
            cost = kernels * launch / 1000.0 if launch else None
            out["launch_ms"] = cost
            a.add(make_line("cnn", "cnn.kernels", "kernels per step", kernels, "kernels",
                            explanation=(f"{kernels:.0f} x {launch:.1f} us per launch = {cost:.3f} ms of the "
                                         f"{steady:.3f} ms step" if cost else ""), launch_us=launch))
    if host.get("name"):
        a.add(make_line("cnn", "cnn.top_host", f"top host-side op: {host['name']}",
                        host["self_cpu_us_per_call"] / 1000.0, "ms/step",
                        explanation=f"{host.get('count_per_call', 0):.0f} calls per step, timed under the profiler "
                                    f"(a profiled step took {prof.get('profiled_wall_ms_per_call', 0):.2f} ms)",
                        top_host_ops=host_ops))
    if device.get("name"):
        a.add(make_line("cnn", "cnn.top_device", f"top device-side op: {device['name']}",
                        device["self_device_us_per_call"] / 1000.0, "ms/step",
                        explanation=f"top kernel: {kernel.get('name')}" if kernel.get("name") else "",
                        top_device_ops=prof.get("top_device_ops"), top_kernels=prof.get("top_kernels")))


def _optimizers(a: Analysis, out: dict[str, Any]) -> None:
    found = records(a.results, "cnn", "cnn_optimizer")
    if not found:
        return
    variants, default = {}, None
    for rec in found:
        name = rec["variant"]
        label = OPTIMIZER_LABELS.get(name, name) + (" (torch's default here)" if rec.get("default") else "")
        if rec.get("default"):
            default = name
        if not rec.get("available"):
            a.add(make_line("cnn", f"cnn.optimizer.{name}", label, None, "ms/step",
                            explanation=f"not available: {rec.get('error')}"))
            continue
        variants[name] = {"ms_per_step": rec["ms_per_step"], "opt_ms": rec.get("opt_ms"), "kernels": rec.get("opt_kernels")}
        count = rec.get("opt_kernels")
        kernels = f", {count:.0f} kernel{'' if round(count) == 1 else 's'}" if count else ""
        a.add(make_line("cnn", f"cnn.optimizer.{name}", label, rec["ms_per_step"], "ms/step",
                        explanation=f"optimizer.step() alone {rec.get('opt_ms', 0):.3f} ms{kernels}", **variants[name]))
    steady = out.get("steady_ms")
    mine = variants.get(default or "") or {}
    out["optimizer"] = {"default": default, "variants": variants,
                        "share": mine["opt_ms"] / steady if mine.get("opt_ms") and steady else None}


def _variants(a: Analysis, out: dict[str, Any]) -> None:
    measured = {}
    for rec in records(a.results, "cnn", "cnn_variant"):
        name = rec["variant"]
        label = "with " + VARIANT_LABELS.get(name, name)
        if rec.get("ms_per_step") is None:
            a.add(make_line("cnn", f"cnn.variant.{name}", label, None, "ms/step",
                            explanation=rec.get("skipped") or f"failed: {rec.get('error')}"))
            continue
        measured[name] = {"ms_per_step": rec["ms_per_step"], "speedup": rec.get("speedup")}
        a.add(make_line("cnn", f"cnn.variant.{name}", label, rec["ms_per_step"], "ms/step",
                        explanation=f"{rec['speedup']:.2f}x the plain step" if rec.get("speedup") else "",
                        speedup=rec.get("speedup")))
    out["variants"] = measured


def sweep(a: Analysis) -> None:
    out = summary(a)
    points = [r for r in records(a.results, "sweep", "sweep_point") if not r.get("error")]
    for rec in records(a.results, "sweep", "sweep_point"):
        if rec.get("error"):
            a.add(make_line("sweep", f"sweep.error.{rec.get('batch')}", f"batch {rec.get('batch')}", None, "x",
                            explanation=f"failed: {rec['error']}"))
    rows = []
    for rec in points:
        row = {"batch": rec["batch"], "gpu_ms": rec.get("gpu_ms_per_step"), "cpu_ms": rec.get("cpu_ms_per_step"),
               "speedup": rec.get("speedup"), "busy": rec.get("busy_fraction"), "kernels": rec.get("kernels_per_step")}
        rows.append(row)
        value, unit = (row["speedup"], "x") if row["speedup"] is not None else (row["cpu_ms"], "ms/step (CPU)")
        busy = f", GPU busy {min(row['busy'], 1.0):.0%}" if row["busy"] is not None else ""
        gpu = f"GPU {row['gpu_ms']:.3f} ms/step, " if row["gpu_ms"] else ""
        a.add(make_line("sweep", f"sweep.batch.{row['batch']}", f"batch {row['batch']}", value, unit,
                        explanation=f"{gpu}CPU {row['cpu_ms']:.3f} ms/step{busy}", **row))
    out["sweep"] = rows
    for rec in records(a.results, "sweep", "sweep_stop"):
        a.add(make_line("sweep", "sweep.stop", "sweep stopped early", None, "",
                        explanation=f"{rec.get('reason')}; not measured: batch {', '.join(map(str, rec.get('left') or []))}"))
    fast = [r for r in rows if r["speedup"] is not None]
    if not fast:
        return
    best = max(fast, key=lambda r: r["speedup"])
    at = {r["batch"]: r for r in fast}
    base = at.get(out.get("batch") or 64) or min(fast, key=lambda r: r["batch"])
    busy = next((r for r in fast if (r["busy"] or 0) >= BUSY_ENOUGH), None)
    out.update(sweep_best=best, sweep_base=base, sweep_busy_batch=busy["batch"] if busy else None,
               sweep_gain=best["speedup"] / base["speedup"] if base["speedup"] else None)
    busy_text = (f"the GPU is busy {BUSY_ENOUGH:.0%} of a step or more from batch {busy['batch']}" if busy else
                 f"the GPU never reaches {BUSY_ENOUGH:.0%} busy in the sweep")
    a.add(make_line("sweep", "sweep.best", f"largest speed-up: batch {best['batch']}", best["speedup"], "x",
                    explanation=f"{out['sweep_gain']:.1f}x the speed-up at batch {base['batch']} "
                                f"({base['speedup']:.2f}x); {busy_text}", best=best, base=base))
