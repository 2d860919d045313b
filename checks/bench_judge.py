"""The verdict of every benchmark line, against the sourced thresholds below, with its explanation and remedy.

The bench stage measures (the fact `bench.figures`: each figure, what the card should reach, what was seen around
it); `judge` turns those figures into the lines the checks in bench.py report and the renderers show. A line's
verdict is good, low or very low (its fraction against THRESHOLDS, MATMUL_OVERRIDES, LAUNCH_LIMITS or CONV_OF_GEMM),
unknown (no expectation for this card: raw figure), info (a figure with no verdict) or failed (the section did not
produce it). Then what the stage observed explains a short figure: a GPU shared or throttled while it was measured,
or a speed switch whose re-run without it measured the difference. Not a check: the registry finds none here.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from rocm_doctor.knowledge.perf_switches import describe, slows_at

GOOD, LOW, VERY_LOW, UNKNOWN, INFO, FAILED = "good", "low", "very low", "unknown", "info", "failed"
SHORT = (LOW, VERY_LOW)

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
    "back_to_back": (15.0, 25.0, "PyTorch eager on a healthy H200 measured 6.7-10.4 us/op over six runs on 2026-12-01 "
                                 "(docs/measurements.md); a host that busy or slow doubles it"),
    "sync_each": (30.0, 100.0, "launch + sync round trip: A100 17 us, ROCm R9700 18.5 us, MI325X 16.9 us (perf-anchors sec. 4)"),
    "graph": (5.0, 10.0, "graph replay ~1.4 us/kernel on H200, 2-3 us on ROCm (perf-anchors sec. 4)"),
}
# A dense 3x3 convolution against the GEMM rate of the same dtype (measured in the run, else the good share of peak).
CONV_OF_GEMM = {"good": 0.20, "very_low": 0.05,
                "source": "perf-anchors sec. 9 (test 5): conv TFLOP/s under ~20% of GEMM points to a naive solver "
                          "or missing MIOpen; RX 9070 Windows 1.75 vs RX 7800 XT 32.8 TFLOP/s on 3x3 64->64 fp32"}
BF16_SLOW, BF16_VERY_SLOW = 0.5, 0.3  # bf16 over fp16 matmul speed: low below, very low below
TF32_GAIN = 1.5  # tf32 over fp32 matmul speed worth naming on the fp32 line
COPIES_VARY = 0.85  # the median pinned copy below this share of the fastest is named on the line
PAGEABLE_SHARE = 0.7  # pageable over pinned copies below which the remedy is shown (information on any machine)
LAUNCH_BOUND_BUSY = 0.5  # GPU busy below this share of each token: the host's launches set the pace
NO_BF16_MATRIX = r"^gfx(8|90[0-6]|10[13])"  # Vega/GCN before gfx908, RDNA1/RDNA2
# An explanation with no cause to name says so; what the samples showed is added to it.
NOT_EXPLAINED = "not explained by anything observed"
RERUN = "Run the benchmark again when nothing else uses the GPU and it is not throttled."


def verdict(fraction: Optional[float], good: float, low: float) -> str:
    if fraction is None:
        return UNKNOWN
    if fraction >= good:
        return GOOD
    if fraction >= low:
        return LOW
    return VERY_LOW


def slowed(figure: dict[str, Any]) -> bool:
    """A figure a switch's re-run moved is better without the switch by more than its run-to-run variation."""
    return figure["speedup"] >= slows_at(figure["key"])


def helped(figure: dict[str, Any]) -> bool:
    """A figure a switch's re-run moved is worse without the switch by more than its run-to-run variation."""
    return figure["speedup"] <= 1 / slows_at(figure["key"])


def slows(comparison: dict[str, Any]) -> bool:
    """The switch slowed some figure its re-run moved."""
    return any(slowed(figure) for figure in comparison["figures"])


def matmul_thresholds(gfx: str, dtype: str) -> dict[str, Any]:
    for rule in MATMUL_OVERRIDES:
        if re.match(rule["gfx"], gfx or "") and dtype in rule["dtypes"]:
            return rule
    return THRESHOLDS["matmul"]


class _Run:
    """What every line's judgement reads about the run: the device, the card's expectation, the context."""

    def __init__(self, figures: dict[str, Any]) -> None:
        self.figures = figures
        self.on_gpu = (figures.get("device") or {}).get("type") == "cuda"
        self.expectation = figures.get("expectation")
        self.match = figures.get("expectation_match")
        context = figures.get("context") or {}
        self.hip, self.gfx, self.tunableop = bool(context.get("hip")), context.get("gfx") or "", context.get("tunableop")
        self.values = figures.get("values") or {}

    def peak(self, dtype: str) -> Optional[float]:
        return ((self.expectation or {}).get("peak_tflops") or {}).get(dtype)


Judged = tuple[str, str, list, dict]  # verdict, explanation, remedy, details to add


def _matmul(run: _Run, line: dict) -> Judged:
    dtype = line["key"].split(".")[1]
    rule = matmul_thresholds(run.gfx, dtype)
    added = {"good_at": rule["good"], "low_at": rule["low"], "threshold_source": rule["source"]}
    v = verdict(line["fraction"], rule["good"], rule["low"]) if run.on_gpu else INFO
    if v == UNKNOWN and run.expectation:
        return INFO, f"the catalog has no {dtype} peak for this card (no native unit, or not recorded)", [], added
    if v == UNKNOWN and run.on_gpu:
        return v, f"no expectation: {run.match}", [], added
    return v, "", [], added


def _matmul_lows(run: _Run, lines: list[dict]) -> None:
    """Low matmul lines: every dtype low, or some while others reach the card's figure on the same GPU."""
    lows = [l["key"].split(".")[1] for l in lines if _is_matmul(l) and l["verdict"] in SHORT]
    if not lows:
        return
    measured = [d for d in run.values.get("matmul_median_tflops") or {} if run.peak(d)]
    if set(lows) >= set(measured) and len(measured) > 1:
        why = f"every dtype is below what this card reaches: {NOT_EXPLAINED}"
        remedy = ["Check clocks, power and other processes (nvidia-smi -q -d PERFORMANCE,CLOCK, or amd-smi metric / "
                  "rocm-smi --showclocks --showpower show them), then re-run the benchmark."]
    else:
        why = (f"{', '.join(lows)} is below what this card reaches while other dtypes reach it on the same GPU in "
               f"the same run: {NOT_EXPLAINED}")
        remedy = []
    if run.hip and run.tunableop != "1":
        remedy.append("On ROCm, try PYTORCH_TUNABLEOP_ENABLED=1 (GEMM tuning; the published MI300X figures use it) "
                      "and TORCH_BLAS_PREFER_HIPBLASLT=1 where hipBLASLt supports the GPU.")
    for line in lines:
        if _is_matmul(line) and line["verdict"] in SHORT:
            line["explanation"], line["remedy"] = why, list(remedy)


def _tf32_gain(run: _Run, lines: list[dict]) -> None:
    medians = run.values.get("matmul_median_tflops") or {}
    fp32, tf32 = medians.get("fp32"), medians.get("tf32")
    if fp32 and tf32 and tf32 / fp32 > TF32_GAIN:
        for line in lines:
            if line["key"] == "matmul.fp32" and not line["explanation"]:
                line["explanation"] = (f"fp32 matmuls run {tf32 / fp32:.1f}x faster with TF32 allowed "
                                       "(torch.set_float32_matmul_precision('high')), at reduced precision")


def _bf16(run: _Run, line: dict) -> Judged:
    ratio = line["value"]
    if ratio is not None and ratio < BF16_SLOW:
        no_unit = bool(re.match(NO_BF16_MATRIX, run.gfx)) or (
            run.expectation is not None and run.peak("bf16") is None and run.peak("fp16") is not None)
        arch = (run.expectation or {}).get("arch") or run.gfx or "this GPU"
        explanation = (f"bf16 runs at {ratio:.0%} of fp16 on this card"
                       + (f": {arch} has no bf16 matrix units, so bf16 GEMMs are emulated" if no_unit
                          else f": {NOT_EXPLAINED}"))
        remedy = ["Run models in float16 on this GPU (e.g. `model.half()`, `torch_dtype=torch.float16`, "
                  "`torch.autocast('cuda', dtype=torch.float16)` with a GradScaler for training)."]
        return (VERY_LOW if ratio < BF16_VERY_SLOW else LOW), explanation, remedy, {}
    return GOOD, f"bf16 runs at {ratio:.0%} of fp16", [], {}


def _bandwidth(run: _Run, line: dict) -> Judged:
    rule = THRESHOLDS["bandwidth"]
    added = {"good_at": rule["good"], "low_at": rule["low"]}
    if line["figure"] != "bandwidth":
        return INFO, "", [], added
    v = verdict(line["fraction"], rule["good"], rule["low"])
    if v in SHORT:
        return v, f"device memory bandwidth is below what this card reaches: {NOT_EXPLAINED}", [
            "Check other GPU processes and memory clocks (nvidia-smi, amd-smi metric), then re-run."], added
    return v, f"no expectation: {run.match}" if v == UNKNOWN else "", [], added


def _pinned(run: _Run, line: dict) -> Judged:
    rule = THRESHOLDS["host_link"]
    v = verdict(line["fraction"], rule["good"], rule["low"])
    link, link_gbs, current = line["details"].get("link") or {}, line["expected"], line["context"].get("current_link_gbs")
    added = {"good_at": rule["good"]}
    if v == UNKNOWN:
        return v, "PCIe link not known (sysfs not readable); raw figure", [], added
    if v not in SHORT:
        return v, _copies_varied(line), [], added
    if current and link_gbs and current < link_gbs:
        return v, (f"the link reads {link.get('current_link_speed')} x{link.get('current_link_width')} of a possible "
                   f"{link.get('max_link_speed')} x{link.get('max_link_width')} (a slower slot, a riser, or a "
                   "power-saving state)"), [
            "Seat the card in a full-speed slot (CPU-attached x16); check BIOS PCIe settings."], added
    return v, f"pinned copies are below the rate of the link as it trained: {NOT_EXPLAINED}", [
        "If the GPU sits on the other CPU socket, bind the process to the one nearest it (numactl --cpunodebind)."], added


def _copies_varied(line: dict) -> str:
    """The median pinned copy, where it fell well below the fastest one the line is judged on."""
    median, fastest = line["details"].get("median_gbs"), line["value"]
    if not median or not fastest or median >= COPIES_VARY * fastest:
        return ""
    return (f"the median of {line['details'].get('copies') or 'the'} copies ran at {median:.1f} GB/s, "
            f"{1 - median / fastest:.0%} below the fastest: the same copy varied in this run, the link did not limit it")


def _pageable(run: _Run, line: dict) -> Judged:
    # Every driver stages a pageable copy through a pinned buffer of its own, so the gap to pinned copies is the
    # workload's choice, on any machine: information with the remedy, never a fault of this one.
    ratio = line["fraction"]
    if ratio is not None and ratio < PAGEABLE_SHARE:
        return INFO, (f"pageable copies run at {ratio:.0%} of pinned: each one is staged through a driver buffer and "
                      "cannot overlap with compute, on every machine"), [
            "Pin host memory: DataLoader(pin_memory=True) and tensor.to(device, non_blocking=True); pin once, "
            "outside the loop."], {}
    return (INFO if ratio is None else GOOD), "", [], {}


def _launch(run: _Run, line: dict) -> Judged:
    mode, us = line["key"].split(".")[1], line["value"]
    good, low, source = LAUNCH_LIMITS[mode]
    added = {"good_up_to": good, "low_up_to": low, "threshold_source": source}
    v = (GOOD if us <= good else LOW if us <= low else VERY_LOW) if run.on_gpu else INFO
    if v not in SHORT:
        return v, "", [], added
    if mode == "back_to_back":
        return v, (f"each eager op costs {us:.1f} us to launch: a model made of many small ops is limited by "
                   "launches, not by the GPU"), [
            "Cut launches: torch.compile(mode='reduce-overhead') or CUDA/HIP graphs, larger batches, fused kernels "
            "(SDPA, fused optimizers)."], added
    if mode == "sync_each":
        return v, f"each launch and synchronisation round trip costs {us:.0f} us: {NOT_EXPLAINED}", [
            "Each .item(), .cpu() or print of a GPU value pays this round trip: keep them out of the per-step path "
            "(log every N steps)."], added
    return v, f"graph replay costs {us:.1f} us per kernel", [], added


def _sdpa(run: _Run, line: dict) -> Judged:
    if not line["details"].get("math_only"):
        return GOOD, "a fused attention backend runs for every tested shape and dtype", [], {}
    reasons = line["context"].get("unavailable") or {}
    return LOW, ("only the math backend runs attention here (an unfused O(S^2) path with several kernels and an fp32 "
                 "score matrix): " + "; ".join(f"{k.lower()}: {v}" for k, v in reasons.items())), [
        "On ROCm, use a torch whose AOTriton supports this gfx, or set TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 "
        "where the warning says the arch is experimental.",
        "On NVIDIA, flash attention needs sm80+ and fp16/bf16 inputs."], {}


def _decode(run: _Run, line: dict) -> Judged:
    rule = THRESHOLDS["decode_roofline"]
    on_gpu, explanation = line["key"].endswith(".gpu"), line["explanation"]
    added = {"good_at": rule["good"], "low_at": rule["low"]}
    v = verdict(line["fraction"], rule["good"], rule["low"]) if on_gpu else INFO
    remedy = (["Prefer flash attention for decoding: TORCH_CUDNN_SDPA_DEPRIORITIZED=1, or "
               "`with torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)`."]
              if line["context"].get("cudnn_plans") else [])
    if on_gpu and v in SHORT:
        remedy = remedy or ["Batch requests, or cut per-token launches: static KV cache with "
                            "torch.compile(mode='reduce-overhead') / CUDA graphs, or an inference engine "
                            "(vLLM, llama.cpp)."]
        busy = line["details"].get("gpu_busy_fraction")
        if busy is not None and busy < LAUNCH_BOUND_BUSY:  # the GPU idles between kernels: eager decode's nature
            v = INFO
            explanation = (f"{explanation}. Eager PyTorch decodes one token at a time with a kernel launch per op on "
                           "every machine; the bandwidth roofline is what a batched or graph-captured engine "
                           "reaches, not this workload") if explanation else explanation
    if not line["expected"]:
        v = UNKNOWN if on_gpu else INFO
    return v, explanation, remedy, added


def _conv(run: _Run, line: dict) -> Judged:
    """A convolution against the GEMM rate of its dtype; its summary in values["conv"] gets the same verdict."""
    context, details = line["context"], line["details"]
    key, peak_key, tflops = context["config"], details.get("peak_key"), line["value"]
    reference, source = context.get("gemm_tflops"), f"{peak_key} matmul measured in this run"
    if not reference and run.on_gpu and line["expected"]:
        good = THRESHOLDS["matmul"]["good"]
        reference, source = line["expected"] * good, f"{good:.0%} of the {peak_key} peak"
    of_gemm = tflops / reference if tflops and reference else None
    v, explanation = INFO, line["explanation"]
    if context.get("judged") and of_gemm is not None:
        v = GOOD if of_gemm >= CONV_OF_GEMM["good"] else VERY_LOW if of_gemm < CONV_OF_GEMM["very_low"] else LOW
        explanation = "; ".join(filter(None, [f"{of_gemm:.0%} of the GEMM rate ({source})", explanation]))
    conv = run.values.get("conv") or {}
    conv["configs"][key] = dict(conv["configs"][key], of_gemm=of_gemm, verdict=v)
    if v not in (GOOD, INFO):
        conv["slow"].append(key)
    return v, explanation, [], {}


def _failed(run: _Run, line: dict) -> Judged:
    return FAILED, line["explanation"], [], {}


def _cnn_speedup(run: _Run, line: dict) -> Judged:
    return INFO, "why: bench-cnn-speedup-low, from the cnn, sweep and conv sections", [], {}


def _is_matmul(line: dict) -> bool:
    return line["section"] == "matmul" and line["value"] is not None and line["key"].count(".") == 1 \
        and line["key"] != "matmul.bf16_vs_fp16"


# Which judgement each line gets, by its key; a line none names is information (its explanation as measured).
JUDGES: list[tuple[Callable[[dict], bool], Callable[[_Run, dict], Judged]]] = [
    (lambda l: l["figure"] == "section", _failed),
    (_is_matmul, _matmul),
    (lambda l: l["key"] == "matmul.bf16_vs_fp16", _bf16),
    (lambda l: l["key"] in ("memory.copy", "memory.read", "memory.write"), _bandwidth),
    (lambda l: l["key"].startswith("host.pinned."), _pinned),
    (lambda l: l["key"].startswith("host.pageable."), _pageable),
    (lambda l: l["section"] == "launch" and l["value"] is not None, _launch),
    (lambda l: l["key"] == "sdpa.fused", _sdpa),
    (lambda l: l["key"].startswith("decoder.decode."), _decode),
    (lambda l: l["section"] == "conv" and "config" in l["context"], _conv),
    (lambda l: l["key"] == "compare.speedup.cnn", _cnn_speedup),
]


def judge(figures: dict[str, Any]) -> dict[str, Any]:
    """The figures with the verdict, explanation and remedy of each line (the lines the renderers show and the
    checks report): device, expectation, expectation_match, thresholds, lines, values, observed."""
    values = dict(figures.get("values") or {})
    if "conv" in values:
        conv = dict(values["conv"])
        values["conv"] = conv
        if "configs" in conv:
            conv.update(configs=dict(conv["configs"]), slow=[])
    run = _Run(dict(figures, values=values))
    lines = []
    for line in figures.get("lines") or []:
        found = next((how for applies, how in JUDGES if applies(line)), None)
        v, explanation, remedy, added = found(run, line) if found else (INFO, line["explanation"], [], {})
        out = {k: line[k] for k in ("section", "key", "label", "value", "unit", "expected", "fraction")}
        out.update(verdict=v, explanation=explanation, remedy=remedy, figure=line["figure"],
                   details=dict(line["details"], **added))
        if "unreliable" in line:
            out["unreliable"] = line["unreliable"]
        lines.append(out)
    _matmul_lows(run, lines)
    _tf32_gain(run, lines)
    observed = dict(figures.get("observed") or {})
    observed["switches"] = [dict(c, slows=slows(c)) for c in observed.get("switches") or []]
    _switches(observed["switches"], lines)
    _interference(figures.get("lines") or [], lines)
    return {"device": figures.get("device"), "expectation": figures.get("expectation"),
            "expectation_match": figures.get("expectation_match"), "thresholds": THRESHOLDS, "lines": lines,
            "values": values, "observed": observed}


def _switches(compared: list[dict], lines: list[dict]) -> None:
    """A short figure a switch's re-run measured: the switch is its explanation when it slowed it, else what the
    re-run measured is added to it."""
    by_key = {line["key"]: line for line in lines}
    for comparison in compared:
        name = f"{comparison['variable']}={comparison['value']}"
        for figure in comparison["figures"]:
            line = by_key[figure["key"]]
            if line["verdict"] not in SHORT:
                continue
            if comparison["slows"] and slowed(figure) and not comparison["unreliable"]:
                line["explanation"] = f"{name} is set, and a re-run without it in a fresh child measured " \
                                      + describe(figure)
                line["remedy"] = [f"Unset {comparison['variable']} (see the finding "
                                  f"env-switch-slows:{comparison['variable']})."]
            else:
                effect = ("it helps" if helped(figure) else f"{figure['speedup']:.2f}x, under the "
                          f"{slows_at(figure['key'])}x told apart from run-to-run variation")
                line["explanation"] = "; ".join(filter(None, [line["explanation"], (
                    f"{name} is set, but a re-run without it measured {figure['without']:.3g} {figure['unit']} "
                    f"({effect})")]))


def _interference(measured: list[dict], lines: list[dict]) -> None:
    """A short figure measured while the GPU was shared or slowed says little; one with no cause to name says
    what the samples showed."""
    for figure, line in zip(measured, lines):
        if line["value"] is None or line["verdict"] not in SHORT:
            continue
        if line.get("unreliable"):
            line["explanation"] = f"measured while {line['unreliable']}: the figure says little about this machine"
            line["remedy"] = [RERUN]
        elif NOT_EXPLAINED in (line["explanation"] or ""):
            line["explanation"] += f" ({figure['context'].get('observed')})"
