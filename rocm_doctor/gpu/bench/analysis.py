"""From benchmark results to lines with a verdict and an explanation. Pure: no torch, no I/O but the catalog.

A line is a dict: section, key, label, value, unit, expected (or None), fraction, verdict, explanation, remedy
(list of steps), check (the check id that reports it) and details. Verdicts: good, low, very low (against the
fraction of peak well-configured systems reach, THRESHOLDS), unknown (no expectation for this card: raw figure),
info (a figure with no verdict), failed (the section did not produce it).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from rocm_doctor.gpu.bench.expectations import lookup
from rocm_doctor.gpu.bench.formulas import decode_bytes_per_token, pcie_gbs, roofline_tokens_per_s
from rocm_doctor.parsers.gfx import base_gfx

GOOD, LOW, VERY_LOW, UNKNOWN, INFO, FAILED = "good", "low", "very low", "unknown", "info", "failed"
VERDICT_RANK = {INFO: 0, GOOD: 0, UNKNOWN: 1, LOW: 2, FAILED: 2, VERY_LOW: 3}

# Fractions of peak reached by well-configured systems; docs/bench.md gives the figures behind each.
THRESHOLDS: dict[str, dict[str, Any]] = {
    "matmul": {"good": 0.60, "low": 0.30,
               "source": "mamf-finder table (ml-engineering): H100/H200 80%, A100 87%, MI355X 68%, MI325X 60% of dense peak"},
    "bandwidth": {"good": 0.75, "low": 0.50,
                  "source": "H200 read 3.89/4.8 TB/s (81%), MI300X read 4.2/5.3 (79%) and scale 4.0 (75%), RX 6900 XT 456/512 (89%) (RRZE gpu-benches)"},
    "host_link": {"good": 0.70, "low": 0.40,
                  "source": "nvbandwidth on H200 PCIe5 x16: 55.4 of 63 GB/s (88%); TransferBench MI300X pass mark 45 GB/s (~71% of 63)"},
    "decode_roofline": {"good": 0.50, "low": 0.20,
                        "source": "llama.cpp tg on RX 7900 XTX ~54% of the spec-bandwidth roofline (perf-anchors sec. 6)"},
}
# Where the generic matmul fraction is wrong for an architecture.
MATMUL_OVERRIDES = [
    {"gfx": r"^gfx94", "dtypes": ("bf16", "fp16"), "good": 0.45, "low": 0.25,
     "source": "MI300X bf16 MAMF 668 of 1307 TFLOPS (51%) with TunableOp (ml-engineering)"},
    {"gfx": r"^gfx11", "dtypes": ("fp32",), "good": 0.35, "low": 0.18,
     "source": "RDNA3 fp32 peak counts dual issue that GEMMs do not reach: RX 7900 XTX 23-27 of 61 TFLOPS (rocBLAS #1380)"},
]
# Launch overhead per tiny op, microseconds: (good up to, low up to); above is very low.
LAUNCH_LIMITS = {
    "back_to_back": (10.0, 20.0, "PyTorch eager ~5-10 us/op on Linux CUDA and ROCm; flag > 20 us/op (perf-anchors sec. 4, 9)"),
    "sync_each": (30.0, 100.0, "launch + sync round trip: A100 17 us, ROCm R9700 18.5 us, MI325X 16.9 us (perf-anchors sec. 4)"),
    "graph": (5.0, 10.0, "graph replay ~1.4 us/kernel on H200, 2-3 us on ROCm (perf-anchors sec. 4)"),
}
NO_BF16_MATRIX = r"^gfx(8|90[0-6]|10[13])"  # Vega/GCN before gfx908, RDNA1/RDNA2


def _shapes_label(count: int) -> str:
    return "one shape" if count == 1 else f"best of {count} shapes"


def verdict(fraction: Optional[float], good: float, low: float) -> str:
    if fraction is None:
        return UNKNOWN
    if fraction >= good:
        return GOOD
    if fraction >= low:
        return LOW
    return VERY_LOW


def matmul_thresholds(gfx: str, dtype: str) -> dict[str, Any]:
    for rule in MATMUL_OVERRIDES:
        if re.match(rule["gfx"], gfx or "") and dtype in rule["dtypes"]:
            return rule
    return THRESHOLDS["matmul"]


# ---------------------------------------------------------------------------------------------------------


def _line(section: str, key: str, label: str, value: Optional[float], unit: str, check: Optional[str] = None,
          expected: Optional[float] = None, fraction: Optional[float] = None, verdict_: str = INFO,
          explanation: str = "", remedy: Iterable[str] = (), **details: Any) -> dict[str, Any]:
    return {"section": section, "key": key, "label": label, "value": value, "unit": unit, "expected": expected,
            "fraction": fraction, "verdict": verdict_, "explanation": explanation, "remedy": list(remedy),
            "check": check, "details": details}


def records(results: dict[str, Any], section: str, kind: Optional[str] = None) -> list[dict[str, Any]]:
    entry = (results.get("sections") or {}).get(section) or {}
    return [r for r in entry.get("records") or [] if kind is None or r.get("bench") == kind]


def device_of(results: dict[str, Any]) -> dict[str, Any]:
    return dict((results.get("header") or {}).get("device") or {})


class Analysis:
    def __init__(self, results: dict[str, Any], expectation: Optional[dict[str, Any]] = None, use_catalog: bool = True):
        self.results = results
        self.device = device_of(results)
        self.on_gpu = self.device.get("type") == "cuda"
        self.hip = bool(((results.get("header") or {}).get("import") or {}).get("hip"))
        self.gfx = (base_gfx(self.device.get("gcnArchName")) or "") if self.hip else ""
        self.match = "explicit expectation"
        if expectation is None and use_catalog and self.on_gpu:
            expectation, self.match = lookup(self.device.get("name"), self.device.get("gcnArchName") if self.hip else None)
        elif expectation is None:
            self.match = "CPU device: no catalog expectation" if not self.on_gpu else "catalog not consulted"
        self.expectation = expectation
        self.lines: list[dict[str, Any]] = []
        self.values: dict[str, Any] = {}

    # -- helpers
    def peak(self, dtype: str) -> Optional[float]:
        return ((self.expectation or {}).get("peak_tflops") or {}).get(dtype)

    def bandwidth_peak(self) -> Optional[float]:
        return (self.expectation or {}).get("bandwidth_gbs")

    def add(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    # -- sections
    def run(self) -> dict[str, Any]:
        self.failures()
        self.matmul()
        self.memory()
        self.launch()
        self.sdpa()
        self.compare()
        self.decoder()
        self.reference()
        return {
            "device": self.device,
            "expectation": self.expectation,
            "expectation_match": self.match,
            "thresholds": THRESHOLDS,
            "lines": self.lines,
            "values": self.values,
        }

    def failures(self) -> None:
        for name, entry in (self.results.get("sections") or {}).items():
            if entry.get("state") in ("ok", None):
                continue
            self.add(_line(name, f"{name}.state", f"{name} section", None, "", check="bench-section-failed",
                           verdict_=FAILED, explanation=f"{entry.get('state')}: {entry.get('detail')}",
                           state=entry.get("state")))

    def matmul(self) -> None:
        by_dtype: dict[str, list[dict[str, Any]]] = {}
        for rec in records(self.results, "matmul", "matmul"):
            if rec.get("skipped"):
                self.add(_line("matmul", f"matmul.{rec['dtype']}", f"{rec['dtype']} mm", None, "TFLOP/s",
                               explanation=f"not measured: {rec['skipped']}"))
            elif rec.get("error"):
                self.add(_line("matmul", f"matmul.{rec['dtype']}.{rec.get('m')}x{rec.get('n')}x{rec.get('k')}",
                               f"{rec['dtype']} mm", None, "TFLOP/s", explanation=f"failed: {rec['error']}"))
            else:
                by_dtype.setdefault(rec["dtype"], []).append(rec)
        best = {d: max(recs, key=lambda r: r["median_tflops"]) for d, recs in by_dtype.items()}
        self.values["matmul_best_tflops"] = {d: r["best_tflops"] for d, r in best.items()}
        self.values["matmul_median_tflops"] = {d: r["median_tflops"] for d, r in best.items()}
        self.values["matmul_shape_tflops"] = {d: {f"{r['m']}x{r['n']}x{r['k']}": r["median_tflops"] for r in recs}
                                              for d, recs in by_dtype.items()}
        lows = []
        for dtype, rec in best.items():
            peak = self.peak(dtype) if self.on_gpu else None
            rule = matmul_thresholds(self.gfx, dtype)
            fraction = rec["median_tflops"] / peak if peak else None
            v = verdict(fraction, rule["good"], rule["low"]) if self.on_gpu else INFO
            shape = f"{rec['m']}x{rec['n']}x{rec['k']}"
            explanation, remedy = "", []
            if v == UNKNOWN and self.expectation:
                v, explanation = INFO, f"the catalog has no {dtype} peak for this card (no native unit, or not recorded)"
            elif v == UNKNOWN and self.on_gpu:
                explanation = f"no expectation: {self.match}"
            if v in (LOW, VERY_LOW):
                lows.append(dtype)
            self.add(_line("matmul", f"matmul.{dtype}", f"{dtype} mm ({_shapes_label(len(by_dtype[dtype]))}, {shape})",
                           rec["median_tflops"], "TFLOP/s", check="bench-matmul-low" if self.on_gpu else None,
                           expected=peak, fraction=fraction, verdict_=v, explanation=explanation, remedy=remedy,
                           best_tflops=rec["best_tflops"], shape=shape, good_at=rule["good"], low_at=rule["low"],
                           threshold_source=rule["source"],
                           shapes={f"{r['m']}x{r['n']}x{r['k']}": round(r["median_tflops"], 3) for r in by_dtype[dtype]}))
        if lows:
            self._explain_matmul_lows(lows, best)
        self._explain_dtypes(best)

    def _explain_matmul_lows(self, lows: list[str], best: dict[str, Any]) -> None:
        measured = [d for d in best if self.peak(d)]
        if set(lows) >= set(measured) and len(measured) > 1:
            why = ("every dtype is below what this card reaches: the GPU is not running at full clocks (power cap, "
                   "thermal throttling, a low-power state), is shared with another process, or is a different SKU "
                   "than its name suggests")
            remedy = ["Check clocks, power and other processes: `nvidia-smi -q -d PERFORMANCE,CLOCK` or "
                      "`amd-smi metric` / `rocm-smi --showclocks --showpower`, then re-run the benchmark."]
        else:
            why = (f"{', '.join(lows)} is below what this card reaches while other dtypes are not: the BLAS library "
                   "picks a slow kernel for this dtype on this architecture")
            remedy = []
        if self.hip and (self.results.get("env") or {}).get("PYTORCH_TUNABLEOP_ENABLED") != "1":
            remedy.append("On ROCm, try PYTORCH_TUNABLEOP_ENABLED=1 (GEMM tuning; the published MI300X figures use it) "
                          "and TORCH_BLAS_PREFER_HIPBLASLT=1 where hipBLASLt supports the GPU.")
        for line in self.lines:
            if line["section"] == "matmul" and line["key"].split(".")[-1] in lows and line["verdict"] in (LOW, VERY_LOW):
                line["explanation"] = why
                line["remedy"] = remedy

    def _explain_dtypes(self, best: dict[str, Any]) -> None:
        fp16, bf16 = best.get("fp16"), best.get("bf16")
        if fp16 and bf16 and self.on_gpu:
            ratio = bf16["median_tflops"] / fp16["median_tflops"] if fp16["median_tflops"] else None
            slow = ratio is not None and ratio < 0.5
            no_unit = bool(re.match(NO_BF16_MATRIX, self.gfx)) or (
                self.expectation is not None and self.peak("bf16") is None and self.peak("fp16") is not None)
            arch = (self.expectation or {}).get("arch") or self.gfx or "this GPU"
            if slow:
                explanation = (f"bf16 runs at {ratio:.0%} of fp16 on this card"
                               + (f": {arch} has no bf16 matrix units, so bf16 GEMMs are emulated" if no_unit
                                  else ": the BLAS library has no fast bf16 kernel for this architecture"))
                remedy = ["Run models in float16 on this GPU (e.g. `model.half()`, `torch_dtype=torch.float16`, "
                          "`torch.autocast('cuda', dtype=torch.float16)` with a GradScaler for training)."]
                v = VERY_LOW if ratio < 0.3 else LOW
            else:
                explanation, remedy, v = f"bf16 runs at {ratio:.0%} of fp16", [], GOOD
            self.add(_line("matmul", "matmul.bf16_vs_fp16", "bf16 / fp16 matmul speed", ratio, "ratio",
                           check="bench-bf16-slow", expected=1.0, fraction=ratio, verdict_=v,
                           explanation=explanation, remedy=remedy))
        fp32, tf32 = best.get("fp32"), best.get("tf32")
        if fp32 and tf32 and fp32["median_tflops"]:
            speedup = tf32["median_tflops"] / fp32["median_tflops"]
            if speedup > 1.5:
                for line in self.lines:
                    if line["key"] == "matmul.fp32" and not line["explanation"]:
                        line["explanation"] = (f"fp32 matmuls run {speedup:.1f}x faster with TF32 allowed "
                                               "(torch.set_float32_matmul_precision('high')), at reduced precision")

    def memory(self) -> None:
        peak = self.bandwidth_peak() if self.on_gpu else None
        rule = THRESHOLDS["bandwidth"]
        mem = {r.get("op"): r for r in records(self.results, "memory", "memory")}
        for op, label in (("copy", "device copy (read + write bytes)"), ("read", "device read (sum)"),
                          ("write", "device write (fill)")):
            rec = mem.get(op)
            if not rec:
                continue
            value = rec["median_gbs"]
            self.values[f"memory_{op}_gbs"] = value
            judged = op in ("copy", "read") and self.on_gpu
            fraction = value / peak if peak and judged else None
            v = verdict(fraction, rule["good"], rule["low"]) if judged else INFO
            explanation, remedy = "", []
            if v in (LOW, VERY_LOW):
                explanation = ("device memory bandwidth is below what this card reaches: another process is using "
                               "the GPU, memory clocks are held low, or the card is a lower-bandwidth SKU")
                remedy = ["Check other GPU processes and memory clocks (`nvidia-smi`, `amd-smi metric`), then re-run."]
            elif v == UNKNOWN:
                explanation = f"no expectation: {self.match}"
            self.add(_line("memory", f"memory.{op}", label, value, "GB/s",
                           check="bench-bandwidth-low" if judged else None, expected=peak if judged else None,
                           fraction=fraction, verdict_=v, explanation=explanation, remedy=remedy,
                           bytes=rec.get("bytes"), bytes_counted=rec.get("bytes_counted"),
                           best_gbs=rec.get("best_gbs"), good_at=rule["good"], low_at=rule["low"]))
        self._host_copies()

    def _host_copies(self) -> None:
        copies = {(r.get("memory"), r.get("direction")): r for r in records(self.results, "memory", "host_copy")
                  if not r.get("error")}
        if not copies:
            return
        link = (records(self.results, "memory", "pcie") or [{}])[0]
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
                        explanation = ("pinned copies are below the link rate: the GPU may sit on the other CPU socket "
                                       "(NUMA), behind a busy switch, or an IOMMU mode costs throughput")
                        remedy = ["Bind the process to the CPU socket nearest the GPU (`numactl --cpunodebind`)."]
                self.add(_line("memory", f"host.pinned.{direction}", f"pinned {direction.upper()}", value, "GB/s",
                               check="bench-host-copy-slow", expected=link_gbs, fraction=fraction, verdict_=v,
                               explanation=explanation, remedy=remedy, link=link, good_at=rule["good"]))
            if pageable:
                value = pageable["median_gbs"]
                ratio = value / pinned["median_gbs"] if pinned and pinned["median_gbs"] else None
                v = INFO if ratio is None else (GOOD if ratio >= 0.7 else LOW if ratio >= 0.35 else VERY_LOW)
                explanation, remedy = "", []
                if v in (LOW, VERY_LOW):
                    explanation = (f"pageable copies run at {ratio:.0%} of pinned: each one is staged through a "
                                   "driver buffer and cannot overlap with compute")
                    remedy = ["Pin host memory: DataLoader(pin_memory=True) and tensor.to(device, non_blocking=True); "
                              "pin once, outside the loop."]
                self.add(_line("memory", f"host.pageable.{direction}", f"pageable {direction.upper()}", value, "GB/s",
                               check="bench-host-copy-slow", expected=pinned["median_gbs"] if pinned else None,
                               fraction=ratio, verdict_=v, explanation=explanation, remedy=remedy))

    def launch(self) -> None:
        found = {r.get("mode"): r for r in records(self.results, "launch", "launch")}
        labels = {"sync_each": "launch + sync each", "back_to_back": "back-to-back launches",
                  "graph": "CUDA/HIP graph replay"}
        for mode in ("back_to_back", "sync_each", "graph"):
            rec = found.get(mode)
            if not rec or rec.get("us_per_launch") is None:
                if rec and (rec.get("error") or rec.get("skipped")):
                    self.add(_line("launch", f"launch.{mode}", labels[mode], None, "us",
                                   explanation=rec.get("error") or rec.get("skipped")))
                continue
            us = rec["us_per_launch"]
            self.values[f"launch_{mode}_us"] = us
            good, low, source = LAUNCH_LIMITS[mode]
            v = (GOOD if us <= good else LOW if us <= low else VERY_LOW) if self.on_gpu else INFO
            explanation, remedy = "", []
            if v in (LOW, VERY_LOW) and mode == "back_to_back":
                explanation = (f"each eager op costs {us:.1f} us to launch: a model made of many small ops is "
                               "limited by launches, not by the GPU")
                remedy = ["Cut launches: torch.compile(mode='reduce-overhead') or CUDA/HIP graphs, larger batches, "
                          "fused kernels (SDPA, fused optimizers)."]
            elif v in (LOW, VERY_LOW) and mode == "sync_each":
                explanation = (f"every synchronisation costs {us:.0f} us: code that calls .item(), .cpu() or "
                               "prints a GPU value every step waits that long each time")
                remedy = ["Avoid per-step .item()/.cpu(); log every N steps."]
            elif v in (LOW, VERY_LOW):
                explanation = f"graph replay costs {us:.1f} us per kernel"
            self.add(_line("launch", f"launch.{mode}", labels[mode], us, "us/launch",
                           check="bench-launch-bound" if self.on_gpu else None, verdict_=v, explanation=explanation,
                           remedy=remedy, good_up_to=good, low_up_to=low, threshold_source=source,
                           device_us=rec.get("device_us"), submit_us=rec.get("submit_us")))

    def sdpa(self) -> None:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for rec in records(self.results, "sdpa", "sdpa"):
            if rec.get("error"):
                self.add(_line("sdpa", "sdpa.error", "SDPA", None, "", explanation=rec["error"]))
                continue
            groups.setdefault((rec["shape"], rec["dtype"]), []).append(rec)
        mm = self.values.get("matmul_median_tflops") or {}
        math_only = []
        for (shape, dtype), recs in groups.items():
            ok = [r for r in recs if r.get("available")]
            fused = [r for r in ok if r["backend"] != "MATH"]
            unavailable = {r["backend"]: r.get("reason") for r in recs if not r.get("available")}
            decode = shape == "decode"
            unit = "GB/s" if decode else "TFLOP/s"
            for rec in recs:
                value = (rec.get("gbs") if decode else rec.get("tflops")) if rec.get("available") else None
                self.add(_line("sdpa", f"sdpa.{shape}.{dtype}.{rec['backend'].lower()}",
                               f"{shape} {dtype} {rec['backend'].lower()}", value, unit, verdict_=INFO,
                               explanation="" if rec.get("available") else f"unavailable: {rec.get('reason')}",
                               median_ms=rec.get("median_ms"), default_backend=rec.get("default_backend"),
                               fraction_of_matmul=(rec.get("tflops") / mm[dtype]) if value and not decode and mm.get(dtype) else None))
            if self.on_gpu and ok and not fused:
                math_only.append((shape, dtype, unavailable))
        if self.on_gpu and groups:
            if math_only:
                shape, dtype, reasons = math_only[0]
                explanation = ("only the math backend runs attention here (an unfused O(S^2) path with several kernels "
                               "and an fp32 score matrix): " + "; ".join(f"{k.lower()}: {v}" for k, v in reasons.items()))
                remedy = ["On ROCm, use a torch whose AOTriton supports this gfx, or set "
                          "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 where the warning says the arch is experimental.",
                          "On NVIDIA, flash attention needs sm80+ and fp16/bf16 inputs."]
                v = LOW
            else:
                explanation, remedy, v = "a fused attention backend runs for every tested shape and dtype", [], GOOD
            self.add(_line("sdpa", "sdpa.fused", "fused SDPA backend available",
                           float(len(groups) - len(math_only)), f"of {len(groups)} cases", check="bench-sdpa-math-only",
                           verdict_=v, explanation=explanation, remedy=remedy,
                           math_only=[f"{s} {d}" for s, d, _ in math_only]))

    def compare(self) -> None:
        cpu_info = (self.results.get("header") or {}).get("cpu") or {}
        mm = {r["target"]: r for r in records(self.results, "compare", "compare_matmul") if not r.get("error")}
        cnn = {r["target"]: r for r in records(self.results, "compare", "compare_cnn") if not r.get("error")}
        threads = cpu_info.get("threads")
        for target, rec in mm.items():
            self.add(_line("compare", f"compare.matmul.{target}", f"fp32 mm {rec['n']}^3 on {target.upper()}",
                           rec["median_tflops"], "TFLOP/s", verdict_=INFO,
                           cpu_threads=threads if target == "cpu" else None))
        if "gpu" in mm and "cpu" in mm and mm["cpu"]["median_tflops"]:
            self.values["speedup_matmul"] = mm["gpu"]["median_tflops"] / mm["cpu"]["median_tflops"]
            self.add(_line("compare", "compare.speedup.matmul", "GPU / CPU speed-up, fp32 matmul",
                           self.values["speedup_matmul"], "x", verdict_=INFO, cpu_threads=threads))
        for target, rec in cnn.items():
            self.add(_line("compare", f"compare.cnn.{target}", f"small CNN training step on {target.upper()}",
                           rec["ms_per_step"], "ms/step", verdict_=INFO, images_per_s=rec.get("images_per_s"),
                           batch=rec.get("batch"), steps=rec.get("steps")))
        if "gpu" in cnn and "cpu" in cnn and cnn["gpu"]["ms_per_step"]:
            speedup = cnn["cpu"]["ms_per_step"] / cnn["gpu"]["ms_per_step"]
            self.values["speedup_cnn"] = speedup
            launch = self.values.get("launch_back_to_back_us")
            note = ""
            if speedup < 5 and launch:
                note = ("a batch-64 32x32 CNN step is a few hundred small kernels: its GPU time is mostly launch "
                        f"overhead ({launch:.1f} us each), so the speed-up stays far below the matmul one")
            self.add(_line("compare", "compare.speedup.cnn", "GPU / CPU speed-up, small CNN training", speedup, "x",
                           verdict_=INFO, explanation=note, cpu_threads=threads))
        cpu_mem = records(self.results, "compare", "cpu_memory")
        if cpu_mem:
            self.values["cpu_read_gbs"] = cpu_mem[0]["median_gbs"]
            self.add(_line("compare", "compare.cpu_read", "CPU memory read (sum)", cpu_mem[0]["median_gbs"], "GB/s",
                           verdict_=INFO, cpu_threads=threads))

    def decoder(self) -> None:
        models = {r["target"]: r for r in records(self.results, "decoder", "decoder_model")}
        prefill = {r["target"]: r for r in records(self.results, "decoder", "decoder_prefill")}
        decode = {r["target"]: r for r in records(self.results, "decoder", "decoder_decode")}
        profiles = {r["target"]: r for r in records(self.results, "decoder", "decoder_profile")}
        for target, model in models.items():
            on_gpu = target == "gpu"
            if target in prefill:
                rec = prefill[target]
                flops = model["layer_flops_per_token"] * rec["tokens"] + model["lm_head_flops_per_token"]
                achieved = flops / (rec["ms"] * 1e-3) / 1e12
                ref = (self.values.get("matmul_median_tflops") or {}).get(model["dtype"]) if on_gpu else None
                self.add(_line("decoder", f"decoder.prefill.{target}",
                               f"prefill {rec['tokens']} tokens, {model['dtype']}, {target.upper()}",
                               rec["tokens_per_s"], "tok/s", verdict_=INFO, achieved_tflops=achieved,
                               fraction_of_matmul=achieved / ref if ref else None, ms=rec["ms"]))
            if target not in decode:
                continue
            rec = decode[target]
            per_token = decode_bytes_per_token(model["weight_bytes_per_token"], model["kv_bytes_per_position"],
                                               rec["mean_context"])
            if on_gpu:
                bw = self.values.get("memory_read_gbs") or self.values.get("memory_copy_gbs")
                bw_source = "measured device read" if self.values.get("memory_read_gbs") else "measured device copy"
                if not bw and self.bandwidth_peak():
                    bw, bw_source = self.bandwidth_peak(), "catalog peak"
            else:
                bw, bw_source = self.values.get("cpu_read_gbs"), "measured CPU read"
            roof = roofline_tokens_per_s(bw, per_token) if bw else None
            fraction = rec["tokens_per_s"] / roof if roof else None
            rule = THRESHOLDS["decode_roofline"]
            v = verdict(fraction, rule["good"], rule["low"]) if on_gpu else INFO
            explanation, remedy, profile_details = self._explain_decode(target, rec, profiles.get(target), fraction)
            if profile_details.get("remedy_first"):
                remedy = [profile_details.pop("remedy_first")]
            if on_gpu and v in (LOW, VERY_LOW):
                remedy = remedy or ["Batch requests, or cut per-token launches: static KV cache with "
                                    "torch.compile(mode='reduce-overhead') / CUDA graphs, or an inference engine "
                                    "(vLLM, llama.cpp)."]
            self.values[f"decode_{target}_tokens_per_s"] = rec["tokens_per_s"]
            self.add(_line("decoder", f"decoder.decode.{target}",
                           f"decode {rec['tokens']} tokens, {model['dtype']}, {target.upper()}", rec["tokens_per_s"],
                           "tok/s", check="bench-decode-under-roofline" if on_gpu else None, expected=roof,
                           fraction=fraction, verdict_=v if roof else (UNKNOWN if on_gpu else INFO),
                           explanation=explanation, remedy=remedy, ms_per_token=rec["ms_per_token"],
                           bytes_per_token=per_token, bandwidth_gbs=bw, bandwidth_source=bw_source,
                           good_at=rule["good"], low_at=rule["low"], **profile_details))
        if "gpu" in decode and "cpu" in decode and decode["cpu"]["tokens_per_s"]:
            speedup = decode["gpu"]["tokens_per_s"] / decode["cpu"]["tokens_per_s"]
            self.values["speedup_decode"] = speedup
            self.add(_line("compare", "compare.speedup.decode", "GPU / CPU speed-up, LLM decode", speedup, "x",
                           verdict_=INFO, note="GPU in %s, CPU in %s" % (models.get("gpu", {}).get("dtype"),
                                                                         models.get("cpu", {}).get("dtype"))))
        if "gpu" in prefill and "cpu" in prefill and prefill["cpu"]["tokens_per_s"]:
            self.add(_line("compare", "compare.speedup.prefill", "GPU / CPU speed-up, LLM prefill",
                           prefill["gpu"]["tokens_per_s"] / prefill["cpu"]["tokens_per_s"], "x", verdict_=INFO))

    def _explain_decode(self, target: str, rec: dict[str, Any], profile: Optional[dict[str, Any]],
                        fraction: Optional[float]) -> tuple[str, list[str], dict[str, Any]]:
        details: dict[str, Any] = {}
        if not profile or profile.get("error"):
            if profile and profile.get("error"):
                details["profile_error"] = profile["error"]
            return "", [], details
        ms = rec["ms_per_token"]
        top_host = (profile.get("top_host_ops") or [{}])[0]
        top_dev = (profile.get("top_device_ops") or [{}])[0]
        details.update(top_host_ops=profile.get("top_host_ops"), top_device_ops=profile.get("top_device_ops"),
                       top_kernels=profile.get("top_kernels"), sdpa_ops=profile.get("sdpa_ops"))
        busy_us = profile.get("device_busy_us_per_token")
        if busy_us is None:  # CPU run: only host-side ops
            if top_host.get("name"):
                return (f"top operator: {top_host['name']} ({top_host['self_cpu_us_per_token'] / 1000:.2f} ms of "
                        f"{ms:.2f} ms per token)"), [], details
            return "", [], details
        # The profiled steps repeat positions already seen, so compare with the repeat pass when there is one.
        steady = rec.get("repeat_ms_per_token") or ms
        busy = busy_us / (steady * 1000.0) if steady else None
        kernels = profile.get("kernels_per_token")
        launch = self.values.get("launch_back_to_back_us")
        details.update(gpu_busy_fraction=busy, kernels_per_token=kernels, device_busy_us_per_token=busy_us)
        parts = []
        math_path = any("math" in name for name in (profile.get("sdpa_ops") or {}))
        fallback = [k["name"] for k in profile.get("top_kernels") or []
                    if re.search(r"naive|slow|fallback", k.get("name", ""), re.I)]
        if busy is not None and busy < 0.5:
            parts.append(f"the GPU is busy only {busy:.0%} of each token ({busy_us / 1000:.2f} of {steady:.2f} ms)")
            if kernels and launch:
                parts.append(f"{kernels:.0f} kernels per token x {launch:.1f} us per launch = "
                             f"{kernels * launch / 1000:.2f} ms: launch-bound")
            if top_host.get("name"):
                parts.append(f"top host-side op: {top_host['name']} "
                             f"({top_host['self_cpu_us_per_token'] / 1000:.2f} ms/token, "
                             f"{top_host['count_per_token']:.0f} calls)")
        elif top_dev.get("name"):
            share = top_dev["self_device_us_per_token"] / busy_us if busy_us else 0
            parts.append(f"the GPU is busy {busy:.0%} of the time; top device-side op: {top_dev['name']} "
                         f"({share:.0%} of device time)")
        repeat = rec.get("repeat_ms_per_token")
        if repeat and ms and repeat < 0.6 * ms:
            sdpa = ", ".join(sorted(profile.get("sdpa_ops") or {})) or "an operator"
            cudnn = "cudnn" in sdpa
            parts.append(f"the first pass over each new context length costs {ms:.2f} ms/token but a repeat over the "
                         f"same lengths {repeat:.2f}: per-shape host work ({sdpa}"
                         + (": cuDNN attention builds a plan for every new KV length" if cudnn else "") + ")")
            details["repeat_ms_per_token"] = repeat
            if cudnn:
                details["remedy_first"] = ("Prefer flash attention for decoding: TORCH_CUDNN_SDPA_DEPRIORITIZED=1, or "
                                           "`with torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)`.")
        if math_path:
            parts.append("attention runs on the SDPA math path")
        if fallback:
            parts.append(f"a fallback kernel takes device time: {fallback[0]}")
        return "; ".join(parts), [], details

    def reference(self) -> None:
        for rec in records(self.results, "reference", "reference"):
            if rec.get("what") == "mm":
                shapes = (self.values.get("matmul_shape_tflops") or {}).get("bf16") or {}
                ours = shapes.get(f"{rec['n']}x{rec['n']}x{rec['n']}")
                self.add(_line("reference", "reference.mm", f"reference bf16 mm {rec['n']}^3 ({rec['method']})",
                               rec["tflops"], "TFLOP/s", verdict_=INFO, ours=ours,
                               ratio=(ours / rec["tflops"]) if ours and rec["tflops"] else None))
            elif rec.get("what") == "copy":
                ours = self.values.get("memory_copy_gbs")
                self.add(_line("reference", "reference.copy", f"reference copy_ ({rec['method']})", rec["gbs"], "GB/s",
                               verdict_=INFO, ours=ours, ratio=(ours / rec["gbs"]) if ours and rec["gbs"] else None))


def analyze(results: dict[str, Any], expectation: Optional[dict[str, Any]] = None,
            use_catalog: bool = True) -> dict[str, Any]:
    """Lines with verdicts and explanations for a results object (see module docstring)."""
    return Analysis(results, expectation, use_catalog).run()


def worst(lines: Iterable[dict[str, Any]]) -> Optional[dict[str, Any]]:
    lines = list(lines)
    return max(lines, key=lambda l: VERDICT_RANK.get(l["verdict"], 0)) if lines else None
