"""Analysis lines for workload-shaped figures: attention backends, CPU against GPU, the LLM-shaped decoder against
its bandwidth roofline (with where a token's time goes), and the plain reference measurements.

Each public function takes the Analysis under way and adds its lines and values to it; they run after the
throughput ones, whose values (matmul and bandwidth figures, launch cost) they compare with.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from rocm_doctor.gpu.bench.formulas import decode_bytes_per_token, roofline_tokens_per_s
from rocm_doctor.gpu.bench.lines import make_line, records
from rocm_doctor.gpu.bench.verdicts import GOOD, INFO, LOW, THRESHOLDS, UNKNOWN, VERY_LOW, verdict

LAUNCH_BOUND_BUSY = 0.5  # GPU busy below this share of each token: the host's launches set the pace

if TYPE_CHECKING:
    from rocm_doctor.gpu.bench.analysis import Analysis


def sdpa(a: Analysis) -> None:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for rec in records(a.results, "sdpa", "sdpa"):
        if rec.get("error"):
            a.add(make_line("sdpa", "sdpa.error", "SDPA", None, "", explanation=rec["error"]))
            continue
        groups.setdefault((rec["shape"], rec["dtype"]), []).append(rec)
    mm = a.values.get("matmul_median_tflops") or {}
    math_only = []
    for (shape, dtype), recs in groups.items():
        ok = [r for r in recs if r.get("available")]
        fused = [r for r in ok if r["backend"] != "MATH"]
        unavailable = {r["backend"]: r.get("reason") for r in recs if not r.get("available")}
        decode = shape == "decode"
        unit = "GB/s" if decode else "TFLOP/s"
        for rec in recs:
            value = (rec.get("gbs") if decode else rec.get("tflops")) if rec.get("available") else None
            a.add(make_line("sdpa", f"sdpa.{shape}.{dtype}.{rec['backend'].lower()}",
                            f"{shape} {dtype} {rec['backend'].lower()}", value, unit, verdict_=INFO,
                            explanation="" if rec.get("available") else f"unavailable: {rec.get('reason')}",
                            median_ms=rec.get("median_ms"), default_backend=rec.get("default_backend"),
                            fraction_of_matmul=(rec.get("tflops") / mm[dtype]) if value and not decode and mm.get(dtype) else None))
        if a.on_gpu and ok and not fused:
            math_only.append((shape, dtype, unavailable))
    if a.on_gpu and groups:
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
        a.add(make_line("sdpa", "sdpa.fused", "fused SDPA backend available",
                        float(len(groups) - len(math_only)), f"of {len(groups)} cases", figure="sdpa_fused",
                        verdict_=v, explanation=explanation, remedy=remedy,
                        math_only=[f"{s} {d}" for s, d, _ in math_only]))


def compare(a: Analysis) -> None:
    cpu_info = (a.results.get("header") or {}).get("cpu") or {}
    mm = {r["target"]: r for r in records(a.results, "compare", "compare_matmul") if not r.get("error")}
    cnn = {r["target"]: r for r in records(a.results, "compare", "compare_cnn") if not r.get("error")}
    threads = cpu_info.get("threads")
    if isinstance(cpu_info.get("affinity"), int) and isinstance(cpu_info.get("cpu_count"), int):
        a.values["cpu_share"] = {"usable": cpu_info["affinity"], "present": cpu_info["cpu_count"]}
    for target, rec in mm.items():
        a.add(make_line("compare", f"compare.matmul.{target}", f"fp32 mm {rec['n']}^3 on {target.upper()}",
                        rec["median_tflops"], "TFLOP/s", verdict_=INFO,
                        cpu_threads=threads if target == "cpu" else None))
    if "gpu" in mm and "cpu" in mm and mm["cpu"]["median_tflops"]:
        a.values["speedup_matmul"] = mm["gpu"]["median_tflops"] / mm["cpu"]["median_tflops"]
        a.add(make_line("compare", "compare.speedup.matmul", "GPU / CPU speed-up, fp32 matmul",
                        a.values["speedup_matmul"], "x", verdict_=INFO, cpu_threads=threads))
        if mm["gpu"].get("one_call_ms") and mm["cpu"].get("one_call_ms"):
            a.add(make_line("compare", "compare.speedup.matmul_one_call",
                            "GPU / CPU speed-up, fp32 matmul, one call timed with time.time()",
                            mm["cpu"]["one_call_ms"] / mm["gpu"]["one_call_ms"], "x", verdict_=INFO,
                            gpu_ms=mm["gpu"]["one_call_ms"], cpu_ms=mm["cpu"]["one_call_ms"]))
    for target, rec in cnn.items():
        a.add(make_line("compare", f"compare.cnn.{target}", f"small CNN training step on {target.upper()}",
                        rec["ms_per_step"], "ms/step", verdict_=INFO, images_per_s=rec.get("images_per_s"),
                        batch=rec.get("batch"), steps=rec.get("steps")))
    if "gpu" in cnn and "cpu" in cnn and cnn["gpu"]["ms_per_step"]:
        speedup = cnn["cpu"]["ms_per_step"] / cnn["gpu"]["ms_per_step"]
        a.values["speedup_cnn"] = speedup
        a.add(make_line("compare", "compare.speedup.cnn", "GPU / CPU speed-up, small CNN training", speedup, "x",
                        verdict_=INFO, explanation="why: bench-cnn-speedup-low, from the cnn, sweep and conv sections",
                        cpu_threads=threads))
    cpu_mem = records(a.results, "compare", "cpu_memory")
    if cpu_mem:
        a.values["cpu_read_gbs"] = cpu_mem[0]["median_gbs"]
        a.add(make_line("compare", "compare.cpu_read", "CPU memory read (sum)", cpu_mem[0]["median_gbs"], "GB/s",
                        verdict_=INFO, cpu_threads=threads))


def decoder(a: Analysis) -> None:
    models = {r["target"]: r for r in records(a.results, "decoder", "decoder_model")}
    prefill = {r["target"]: r for r in records(a.results, "decoder", "decoder_prefill")}
    decode = {r["target"]: r for r in records(a.results, "decoder", "decoder_decode")}
    profiles = {r["target"]: r for r in records(a.results, "decoder", "decoder_profile")}
    for target, model in models.items():
        on_gpu = target == "gpu"
        if target in prefill:
            rec = prefill[target]
            flops = model["layer_flops_per_token"] * rec["tokens"] + model["lm_head_flops_per_token"]
            achieved = flops / (rec["ms"] * 1e-3) / 1e12
            ref = (a.values.get("matmul_median_tflops") or {}).get(model["dtype"]) if on_gpu else None
            a.add(make_line("decoder", f"decoder.prefill.{target}",
                            f"prefill {rec['tokens']} tokens, {model['dtype']}, {target.upper()}",
                            rec["tokens_per_s"], "tok/s", verdict_=INFO, achieved_tflops=achieved,
                            fraction_of_matmul=achieved / ref if ref else None, ms=rec["ms"],
                            first_ms=rec.get("first_ms"), explanation=_first_prefill(rec)))
        if target not in decode:
            continue
        rec = decode[target]
        per_token = decode_bytes_per_token(model["weight_bytes_per_token"], model["kv_bytes_per_position"],
                                           rec["mean_context"])
        if on_gpu:
            bw = a.values.get("memory_read_gbs") or a.values.get("memory_copy_gbs")
            bw_source = "measured device read" if a.values.get("memory_read_gbs") else "measured device copy"
            if not bw and a.bandwidth_peak():
                bw, bw_source = a.bandwidth_peak(), "catalog peak"
        else:
            bw, bw_source = a.values.get("cpu_read_gbs"), "measured CPU read"
        roof = roofline_tokens_per_s(bw, per_token) if bw else None
        fraction = rec["tokens_per_s"] / roof if roof else None
        rule = THRESHOLDS["decode_roofline"]
        v = verdict(fraction, rule["good"], rule["low"]) if on_gpu else INFO
        explanation, remedy, profile_details = _explain_decode(a, target, rec, profiles.get(target), fraction)
        if profile_details.get("remedy_first"):
            remedy = [profile_details.pop("remedy_first")]
        if on_gpu and v in (LOW, VERY_LOW):
            remedy = remedy or ["Batch requests, or cut per-token launches: static KV cache with "
                                "torch.compile(mode='reduce-overhead') / CUDA graphs, or an inference engine "
                                "(vLLM, llama.cpp)."]
            busy = profile_details.get("gpu_busy_fraction")
            if busy is not None and busy < LAUNCH_BOUND_BUSY:  # the GPU idles between kernels: eager decode's nature
                v = INFO
                explanation = (f"{explanation}. Eager PyTorch decodes one token at a time with a kernel launch per "
                               "op on every machine; the bandwidth roofline is what a batched or graph-captured "
                               "engine reaches, not this workload") if explanation else explanation
        a.values[f"decode_{target}_tokens_per_s"] = rec["tokens_per_s"]
        a.add(make_line("decoder", f"decoder.decode.{target}",
                        f"decode {rec['tokens']} tokens, {model['dtype']}, {target.upper()}", rec["tokens_per_s"],
                        "tok/s", figure="decode" if on_gpu else None, expected=roof,
                        fraction=fraction, verdict_=v if roof else (UNKNOWN if on_gpu else INFO),
                        explanation=explanation, remedy=remedy, ms_per_token=rec["ms_per_token"],
                        bytes_per_token=per_token, bandwidth_gbs=bw, bandwidth_source=bw_source,
                        good_at=rule["good"], low_at=rule["low"], **profile_details))
    if "gpu" in decode and "cpu" in decode and decode["cpu"]["tokens_per_s"]:
        speedup = decode["gpu"]["tokens_per_s"] / decode["cpu"]["tokens_per_s"]
        a.values["speedup_decode"] = speedup
        a.add(make_line("compare", "compare.speedup.decode", "GPU / CPU speed-up, LLM decode", speedup, "x",
                        verdict_=INFO, note="GPU in %s, CPU in %s" % (models.get("gpu", {}).get("dtype"),
                                                                      models.get("cpu", {}).get("dtype"))))
    if "gpu" in prefill and "cpu" in prefill and prefill["cpu"]["tokens_per_s"]:
        a.add(make_line("compare", "compare.speedup.prefill", "GPU / CPU speed-up, LLM prefill",
                        prefill["gpu"]["tokens_per_s"] / prefill["cpu"]["tokens_per_s"], "x", verdict_=INFO))


def _first_prefill(rec: dict[str, Any]) -> str:
    first = rec.get("first_ms")
    if not first:
        return ""
    return (f"the first prefill took {first:.0f} ms against {rec['ms']:.1f} ms once warm (kernel selection and "
            "the libraries' set-up for these shapes)")


def _explain_decode(a: Analysis, target: str, rec: dict[str, Any], profile: Optional[dict[str, Any]],
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
    launch = a.values.get("launch_back_to_back_us")
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


def reference(a: Analysis) -> None:
    for rec in records(a.results, "reference", "reference"):
        if rec.get("what") == "mm":
            shapes = (a.values.get("matmul_shape_tflops") or {}).get("bf16") or {}
            ours = shapes.get(f"{rec['n']}x{rec['n']}x{rec['n']}")
            a.add(make_line("reference", "reference.mm", f"reference bf16 mm {rec['n']}^3 ({rec['method']})",
                            rec["tflops"], "TFLOP/s", verdict_=INFO, ours=ours,
                            ratio=(ours / rec["tflops"]) if ours and rec["tflops"] else None))
        elif rec.get("what") == "copy":
            ours = a.values.get("memory_copy_gbs")
            a.add(make_line("reference", "reference.copy", f"reference copy_ ({rec['method']})", rec["gbs"], "GB/s",
                            verdict_=INFO, ours=ours, ratio=(ours / rec["gbs"]) if ours and rec["gbs"] else None))
