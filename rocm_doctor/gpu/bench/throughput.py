"""Analysis lines for what the device does with plain operations: matmul throughput against the card's peak,
device memory bandwidth and host copies against the PCIe link, and launch overhead.

Each public function takes the Analysis under way and adds its lines and values to it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rocm_doctor.gpu.bench.formulas import pcie_gbs
from rocm_doctor.gpu.bench.lines import make_line, records
from rocm_doctor.gpu.bench.verdicts import (GOOD, INFO, LAUNCH_LIMITS, LOW, NO_BF16_MATRIX, NOT_EXPLAINED,
                                            THRESHOLDS, UNKNOWN, VERY_LOW, matmul_thresholds, verdict)

if TYPE_CHECKING:
    from rocm_doctor.gpu.bench.analysis import Analysis


def _shapes_label(count: int) -> str:
    return "one shape" if count == 1 else f"best of {count} shapes"


def matmul(a: Analysis) -> None:
    by_dtype: dict[str, list[dict[str, Any]]] = {}
    for rec in records(a.results, "matmul", "matmul"):
        if rec.get("skipped"):
            a.add(make_line("matmul", f"matmul.{rec['dtype']}", f"{rec['dtype']} mm", None, "TFLOP/s",
                            explanation=f"not measured: {rec['skipped']}"))
        elif rec.get("error"):
            a.add(make_line("matmul", f"matmul.{rec['dtype']}.{rec.get('m')}x{rec.get('n')}x{rec.get('k')}",
                            f"{rec['dtype']} mm", None, "TFLOP/s", explanation=f"failed: {rec['error']}"))
        else:
            by_dtype.setdefault(rec["dtype"], []).append(rec)
    best = {d: max(recs, key=lambda r: r["median_tflops"]) for d, recs in by_dtype.items()}
    a.values["matmul_best_tflops"] = {d: r["best_tflops"] for d, r in best.items()}
    a.values["matmul_median_tflops"] = {d: r["median_tflops"] for d, r in best.items()}
    a.values["matmul_shape_tflops"] = {d: {f"{r['m']}x{r['n']}x{r['k']}": r["median_tflops"] for r in recs}
                                       for d, recs in by_dtype.items()}
    lows = []
    for dtype, rec in best.items():
        peak = a.peak(dtype) if a.on_gpu else None
        rule = matmul_thresholds(a.gfx, dtype)
        fraction = rec["median_tflops"] / peak if peak else None
        v = verdict(fraction, rule["good"], rule["low"]) if a.on_gpu else INFO
        shape = f"{rec['m']}x{rec['n']}x{rec['k']}"
        explanation, remedy = "", []
        if v == UNKNOWN and a.expectation:
            v, explanation = INFO, f"the catalog has no {dtype} peak for this card (no native unit, or not recorded)"
        elif v == UNKNOWN and a.on_gpu:
            explanation = f"no expectation: {a.match}"
        if v in (LOW, VERY_LOW):
            lows.append(dtype)
        a.add(make_line("matmul", f"matmul.{dtype}", f"{dtype} mm ({_shapes_label(len(by_dtype[dtype]))}, {shape})",
                        rec["median_tflops"], "TFLOP/s", figure="matmul" if a.on_gpu else None,
                        expected=peak, fraction=fraction, verdict_=v, explanation=explanation, remedy=remedy,
                        best_tflops=rec["best_tflops"], shape=shape, good_at=rule["good"], low_at=rule["low"],
                        threshold_source=rule["source"],
                        shapes={f"{r['m']}x{r['n']}x{r['k']}": round(r["median_tflops"], 3) for r in by_dtype[dtype]}))
    if lows:
        _explain_matmul_lows(a, lows, best)
    _explain_dtypes(a, best)


def _explain_matmul_lows(a: Analysis, lows: list[str], best: dict[str, Any]) -> None:
    measured = [d for d in best if a.peak(d)]
    if set(lows) >= set(measured) and len(measured) > 1:
        why = f"every dtype is below what this card reaches: {NOT_EXPLAINED}"
        remedy = ["Check clocks, power and other processes (nvidia-smi -q -d PERFORMANCE,CLOCK, or amd-smi metric / "
                  "rocm-smi --showclocks --showpower show them), then re-run the benchmark."]
    else:
        why = (f"{', '.join(lows)} is below what this card reaches while other dtypes reach it on the same GPU in "
               f"the same run: {NOT_EXPLAINED}")
        remedy = []
    if a.hip and (a.results.get("env") or {}).get("PYTORCH_TUNABLEOP_ENABLED") != "1":
        remedy.append("On ROCm, try PYTORCH_TUNABLEOP_ENABLED=1 (GEMM tuning; the published MI300X figures use it) "
                      "and TORCH_BLAS_PREFER_HIPBLASLT=1 where hipBLASLt supports the GPU.")
    for line in a.lines:
        if line["section"] == "matmul" and line["key"].split(".")[-1] in lows and line["verdict"] in (LOW, VERY_LOW):
            line["explanation"] = why
            line["remedy"] = remedy


def _explain_dtypes(a: Analysis, best: dict[str, Any]) -> None:
    fp16, bf16 = best.get("fp16"), best.get("bf16")
    if fp16 and bf16 and a.on_gpu:
        ratio = bf16["median_tflops"] / fp16["median_tflops"] if fp16["median_tflops"] else None
        slow = ratio is not None and ratio < 0.5
        no_unit = bool(re.match(NO_BF16_MATRIX, a.gfx)) or (
            a.expectation is not None and a.peak("bf16") is None and a.peak("fp16") is not None)
        arch = (a.expectation or {}).get("arch") or a.gfx or "this GPU"
        if slow:
            explanation = (f"bf16 runs at {ratio:.0%} of fp16 on this card"
                           + (f": {arch} has no bf16 matrix units, so bf16 GEMMs are emulated" if no_unit
                              else f": {NOT_EXPLAINED}"))
            remedy = ["Run models in float16 on this GPU (e.g. `model.half()`, `torch_dtype=torch.float16`, "
                      "`torch.autocast('cuda', dtype=torch.float16)` with a GradScaler for training)."]
            v = VERY_LOW if ratio < 0.3 else LOW
        else:
            explanation, remedy, v = f"bf16 runs at {ratio:.0%} of fp16", [], GOOD
        a.add(make_line("matmul", "matmul.bf16_vs_fp16", "bf16 / fp16 matmul speed", ratio, "ratio",
                        figure="bf16_vs_fp16", expected=1.0, fraction=ratio, verdict_=v,
                        explanation=explanation, remedy=remedy))
    fp32, tf32 = best.get("fp32"), best.get("tf32")
    if fp32 and tf32 and fp32["median_tflops"]:
        speedup = tf32["median_tflops"] / fp32["median_tflops"]
        if speedup > 1.5:
            for line in a.lines:
                if line["key"] == "matmul.fp32" and not line["explanation"]:
                    line["explanation"] = (f"fp32 matmuls run {speedup:.1f}x faster with TF32 allowed "
                                           "(torch.set_float32_matmul_precision('high')), at reduced precision")


def memory(a: Analysis) -> None:
    peak = a.bandwidth_peak() if a.on_gpu else None
    rule = THRESHOLDS["bandwidth"]
    mem = {r.get("op"): r for r in records(a.results, "memory", "memory")}
    for op, label in (("copy", "device copy (read + write bytes)"), ("read", "device read (sum)"),
                      ("write", "device write (fill)")):
        rec = mem.get(op)
        if not rec:
            continue
        value = rec["median_gbs"]
        a.values[f"memory_{op}_gbs"] = value
        judged = op in ("copy", "read") and a.on_gpu
        fraction = value / peak if peak and judged else None
        v = verdict(fraction, rule["good"], rule["low"]) if judged else INFO
        explanation, remedy = "", []
        if v in (LOW, VERY_LOW):
            explanation = f"device memory bandwidth is below what this card reaches: {NOT_EXPLAINED}"
            remedy = ["Check other GPU processes and memory clocks (nvidia-smi, amd-smi metric), then re-run."]
        elif v == UNKNOWN:
            explanation = f"no expectation: {a.match}"
        a.add(make_line("memory", f"memory.{op}", label, value, "GB/s",
                        figure="bandwidth" if judged else None, expected=peak if judged else None,
                        fraction=fraction, verdict_=v, explanation=explanation, remedy=remedy,
                        bytes=rec.get("bytes"), bytes_counted=rec.get("bytes_counted"),
                        best_gbs=rec.get("best_gbs"), good_at=rule["good"], low_at=rule["low"]))
    _host_copies(a)


def _host_copies(a: Analysis) -> None:
    copies = {(r.get("memory"), r.get("direction")): r for r in records(a.results, "memory", "host_copy")
              if not r.get("error")}
    if not copies:
        return
    link = (records(a.results, "memory", "pcie") or [{}])[0]
    # Judged against the fastest speed both ends support at the trained width: links drop to a low speed when
    # idle, so the current speed read after the copies can understate what the copies ran at.
    link_gbs = pcie_gbs(link.get("max_link_speed") or link.get("current_link_speed"),
                        link.get("current_link_width") or link.get("max_link_width"))
    max_gbs = pcie_gbs(link.get("current_link_speed"), link.get("current_link_width"))
    rule = THRESHOLDS["host_link"]
    for direction in ("h2d", "d2h"):
        pinned, pageable = copies.get(("pinned", direction)), copies.get(("pageable", direction))
        if pinned:
            value = pinned["median_gbs"]
            fraction = value / link_gbs if link_gbs else None
            v = verdict(fraction, rule["good"], rule["low"])
            explanation, remedy = "", []
            if v == UNKNOWN:
                explanation = "PCIe link not known (sysfs not readable); raw figure"
            elif v in (LOW, VERY_LOW):
                if max_gbs and link_gbs and max_gbs < link_gbs:
                    explanation = (f"the link reads {link.get('current_link_speed')} x"
                                   f"{link.get('current_link_width')} of a possible {link.get('max_link_speed')} x"
                                   f"{link.get('max_link_width')} (a slower slot, a riser, or a power-saving state)")
                    remedy = ["Seat the card in a full-speed slot (CPU-attached x16); check BIOS PCIe settings."]
                else:
                    explanation = ("pinned copies are below the rate of the link as it trained: "
                                   f"{NOT_EXPLAINED}")
                    remedy = ["If the GPU sits on the other CPU socket, bind the process to the one nearest it "
                              "(numactl --cpunodebind)."]
            a.add(make_line("memory", f"host.pinned.{direction}", f"pinned {direction.upper()}", value, "GB/s",
                            figure="host_copy", expected=link_gbs, fraction=fraction, verdict_=v,
                            explanation=explanation, remedy=remedy, link=link, good_at=rule["good"]))
        if pageable:
            value = pageable["median_gbs"]
            ratio = value / pinned["median_gbs"] if pinned and pinned["median_gbs"] else None
            # Every driver stages a pageable copy through a pinned buffer of its own, so the gap to pinned copies is
            # the workload's choice, on any machine: information with the remedy, never a fault of this one.
            v = INFO if ratio is None or ratio < 0.7 else GOOD
            explanation, remedy = "", []
            if ratio is not None and ratio < 0.7:
                explanation = (f"pageable copies run at {ratio:.0%} of pinned: each one is staged through a "
                               "driver buffer and cannot overlap with compute, on every machine")
                remedy = ["Pin host memory: DataLoader(pin_memory=True) and tensor.to(device, non_blocking=True); "
                          "pin once, outside the loop."]
            a.add(make_line("memory", f"host.pageable.{direction}", f"pageable {direction.upper()}", value, "GB/s",
                            figure="host_copy", expected=pinned["median_gbs"] if pinned else None,
                            fraction=ratio, verdict_=v, explanation=explanation, remedy=remedy))


def launch(a: Analysis) -> None:
    found = {r.get("mode"): r for r in records(a.results, "launch", "launch")}
    labels = {"sync_each": "launch + sync each", "back_to_back": "back-to-back launches",
              "graph": "CUDA/HIP graph replay"}
    for mode in ("back_to_back", "sync_each", "graph"):
        rec = found.get(mode)
        if not rec or rec.get("us_per_launch") is None:
            if rec and (rec.get("error") or rec.get("skipped")):
                a.add(make_line("launch", f"launch.{mode}", labels[mode], None, "us",
                                explanation=rec.get("error") or rec.get("skipped")))
            continue
        us = rec["us_per_launch"]
        a.values[f"launch_{mode}_us"] = us
        good, low, source = LAUNCH_LIMITS[mode]
        v = (GOOD if us <= good else LOW if us <= low else VERY_LOW) if a.on_gpu else INFO
        explanation, remedy = "", []
        if v in (LOW, VERY_LOW) and mode == "back_to_back":
            explanation = (f"each eager op costs {us:.1f} us to launch: a model made of many small ops is "
                           "limited by launches, not by the GPU")
            remedy = ["Cut launches: torch.compile(mode='reduce-overhead') or CUDA/HIP graphs, larger batches, "
                      "fused kernels (SDPA, fused optimizers)."]
        elif v in (LOW, VERY_LOW) and mode == "sync_each":
            explanation = f"each launch and synchronisation round trip costs {us:.0f} us: {NOT_EXPLAINED}"
            remedy = ["Each .item(), .cpu() or print of a GPU value pays this round trip: keep them out of the "
                      "per-step path (log every N steps)."]
        elif v in (LOW, VERY_LOW):
            explanation = f"graph replay costs {us:.1f} us per kernel"
        a.add(make_line("launch", f"launch.{mode}", labels[mode], us, "us/launch",
                        figure="launch" if a.on_gpu else None, verdict_=v, explanation=explanation,
                        remedy=remedy, good_up_to=good, low_up_to=low, threshold_source=source,
                        device_us=rec.get("device_us"), submit_us=rec.get("submit_us")))
