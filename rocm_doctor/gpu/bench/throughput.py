"""Analysis lines for what the device does with plain operations: matmul throughput against the card's peak,
device memory bandwidth and host copies against the PCIe link, and launch overhead.

Each public function takes the Analysis under way and adds its lines and values to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocm_doctor.gpu.bench.formulas import pcie_gbs
from rocm_doctor.gpu.bench.lines import make_line, records

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
    for dtype, rec in best.items():
        peak = a.peak(dtype) if a.on_gpu else None
        fraction = rec["median_tflops"] / peak if peak else None
        shape = f"{rec['m']}x{rec['n']}x{rec['k']}"
        a.add(make_line("matmul", f"matmul.{dtype}", f"{dtype} mm ({_shapes_label(len(by_dtype[dtype]))}, {shape})",
                        rec["median_tflops"], "TFLOP/s", figure="matmul" if a.on_gpu else None,
                        expected=peak, fraction=fraction, best_tflops=rec["best_tflops"], shape=shape,
                        shapes={f"{r['m']}x{r['n']}x{r['k']}": round(r["median_tflops"], 3) for r in by_dtype[dtype]}))
    fp16, bf16 = best.get("fp16"), best.get("bf16")
    if fp16 and bf16 and a.on_gpu:
        ratio = bf16["median_tflops"] / fp16["median_tflops"] if fp16["median_tflops"] else None
        a.add(make_line("matmul", "matmul.bf16_vs_fp16", "bf16 / fp16 matmul speed", ratio, "ratio",
                        figure="bf16_vs_fp16", expected=1.0, fraction=ratio))


def memory(a: Analysis) -> None:
    peak = a.bandwidth_peak() if a.on_gpu else None
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
        a.add(make_line("memory", f"memory.{op}", label, value, "GB/s",
                        figure="bandwidth" if judged else None, expected=peak if judged else None,
                        fraction=fraction, bytes=rec.get("bytes"), bytes_counted=rec.get("bytes_counted"),
                        best_gbs=rec.get("best_gbs")))
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
    for direction in ("h2d", "d2h"):
        pinned, pageable = copies.get(("pinned", direction)), copies.get(("pageable", direction))
        if pinned:
            # What the link reached is the fastest copy: on healthy H200 hosts the median of five 64 MiB copies
            # ranged 43.9-54.2 GB/s while the fastest stayed at 50.7-54.5 (docs/measurements.md, 2026-12-02).
            value = pinned.get("best_gbs") or pinned["median_gbs"]
            fraction = value / link_gbs if link_gbs else None
            a.add(make_line("memory", f"host.pinned.{direction}", f"pinned {direction.upper()}, fastest copy", value,
                            "GB/s", figure="host_copy", expected=link_gbs, fraction=fraction, link=link,
                            median_gbs=pinned["median_gbs"], copies=pinned.get("iters"),
                            context={"current_link_gbs": max_gbs}))
        if pageable:
            value = pageable["median_gbs"]
            ratio = value / pinned["median_gbs"] if pinned and pinned["median_gbs"] else None
            a.add(make_line("memory", f"host.pageable.{direction}", f"pageable {direction.upper()}", value, "GB/s",
                            figure="host_copy", expected=pinned["median_gbs"] if pinned else None, fraction=ratio))


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
        a.add(make_line("launch", f"launch.{mode}", labels[mode], us, "us/launch",
                        figure="launch" if a.on_gpu else None, device_us=rec.get("device_us"),
                        submit_us=rec.get("submit_us")))
