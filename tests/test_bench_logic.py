"""Benchmark logic on synthetic results: formulas, expectations, verdicts and explanations, checks, JSON shape."""

from __future__ import annotations

import json

import pytest

from rocm_doctor.engine.model import Status
from rocm_doctor.gpu.bench import analysis as A
from rocm_doctor.gpu.bench import formulas as F
from rocm_doctor.checks import bench_judge as V
from rocm_doctor.gpu.bench.expectations import expected_for, lookup
from rocm_doctor.gpu.bench.stage import FACT
from rocm_doctor.testing.stages import bench_analysis as analyze, bench_findings as findings
from rocm_doctor.interpret.stage_results import interpret
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.gfx import base_gfx

H200 = {"type": "cuda", "index": 0, "name": "NVIDIA H200", "major": 9, "minor": 0}
RX6650 = {"type": "cuda", "index": 0, "name": "AMD Radeon RX 6650 XT", "gcnArchName": "gfx1032"}


def results(device=H200, hip=None, sections=None, env=None):
    return {
        "schema": 1, "preset": "full", "env": env or {},
        "header": {"device": device, "import": {"ok": True, "version": "2.11", "hip": hip, "cuda": None if hip else "13.0"},
                   "cpu": {"threads": 16, "name": "test cpu"}},
        "sections": {name: {"state": "ok", "detail": "completed", "seconds": 1.0, "records": recs}
                     for name, recs in (sections or {}).items()},
        "elapsed_s": 10.0, "measured_s": 8.0,
    }


def mm(dtype, tflops, m=8192):
    return {"bench": "matmul", "dtype": dtype, "m": m, "n": m, "k": m, "median_tflops": tflops, "best_tflops": tflops * 1.02}


def line(analysis, key):
    return next(l for l in analysis["lines"] if l["key"] == key)


# -- formulas ------------------------------------------------------------------------------------------


def test_flop_and_byte_formulas():
    assert F.matmul_flops(8192, 8192, 8192) == 2 * 8192 ** 3
    assert F.tflops(F.matmul_flops(8192, 8192, 8192), 1.0) == pytest.approx(1099.5, rel=1e-3)
    assert F.copy_bytes(1 << 30) == 2 * (1 << 30)
    assert F.gbs(2 * (1 << 30), 0.5) == pytest.approx(4294.97, rel=1e-4)
    assert F.sdpa_flops(1, 16, 2048, 2048, 128, causal=True) == 0.5 * 4 * 16 * 2048 * 2048 * 128
    assert F.sdpa_flops(1, 16, 1, 2048, 128, causal=True) == 4 * 16 * 2048 * 128  # not square: no halving


def test_qwen3_roofline_matches_the_reference_note():
    # perf-anchors sec. 6: 1.192 GB per token in bf16 -> 4027 tok/s at 4.8 TB/s, 235 tok/s at 280 GB/s.
    cfg = {"hidden": 1024, "layers": 28, "heads": 16, "kv_heads": 8, "head_dim": 128, "intermediate": 3072, "vocab": 151936}
    h, hd = cfg["hidden"], cfg["head_dim"]
    per_layer = (cfg["heads"] * hd * h * 2 + cfg["kv_heads"] * hd * h * 2 + 3 * cfg["intermediate"] * h
                 + 2 * h + 2 * hd)
    weight_bytes = (cfg["layers"] * per_layer + cfg["vocab"] * h + h) * 2
    assert weight_bytes / 1e9 == pytest.approx(1.192, abs=0.002)
    kv = cfg["layers"] * 2 * cfg["kv_heads"] * hd * 2
    assert kv == 112 * 1024
    per_token = F.decode_bytes_per_token(weight_bytes, kv, 0)
    assert F.roofline_tokens_per_s(4800, per_token) == pytest.approx(4027, rel=0.01)
    assert F.roofline_tokens_per_s(280, per_token) == pytest.approx(235, rel=0.01)


@pytest.mark.parametrize("speed,width,expected", [
    ("32.0 GT/s PCIe", "16", 63.01), ("16.0 GT/s PCIe", "8", 15.75), ("8.0 GT/s", "16", 15.76),
    ("2.5 GT/s PCIe", "1", 0.25), ("Unknown", "16", None), (None, None, None), ("16.0 GT/s", "x", None),
])
def test_pcie_link_rate(speed, width, expected):
    assert F.pcie_gbs(speed, width) == (pytest.approx(expected, abs=0.02) if expected else None)


@pytest.mark.parametrize("fraction,verdict", [(0.8, "good"), (0.6, "good"), (0.59, "low"), (0.3, "low"),
                                              (0.29, "very low"), (None, "unknown")])
def test_verdict_thresholds(fraction, verdict):
    assert V.verdict(fraction, 0.6, 0.3) == verdict


# -- expectations ------------------------------------------------------------------------------------


def test_expectation_by_name_and_gfx():
    h200 = expected_for("NVIDIA H200")
    assert h200["peak_tflops"]["bf16"] == pytest.approx(989.4)
    assert h200["bandwidth_gbs"] == 4800
    assert h200["peak_tflops"]["tf32"] == pytest.approx(494.7)  # derived: half the fp16 tensor rate
    rx = expected_for("AMD Radeon RX 6650 XT", "gfx1032")
    assert rx["peak_tflops"]["bf16"] is None and rx["bandwidth_gbs"] == 280
    assert base_gfx("gfx90a:sramecc+:xnack-") == "gfx90a"
    missing, why = lookup("Some Future GPU", None)
    assert missing is None and "not in the GPU catalog" in why


# -- verdicts and explanations (data-driven) --------------------------------------------------------

CASES = [
    # id, device, hip, sections, key, expected verdict, text in explanation
    ("h200-bf16-good", H200, None, {"matmul": [mm("bf16", 780), mm("fp16", 760)]}, "matmul.bf16", "good", ""),
    ("h200-bf16-low", H200, None, {"matmul": [mm("bf16", 400), mm("fp16", 760)]}, "matmul.bf16", "low",
     "other dtypes reach it on the same GPU in the same run: not explained by anything observed"),
    ("h200-all-low", H200, None, {"matmul": [mm("bf16", 200), mm("fp16", 210)]}, "matmul.fp16", "very low",
     "clocks"),
    ("rdna2-bf16-emulated", RX6650, "6.4", {"matmul": [mm("bf16", 4.9), mm("fp16", 17.3)]}, "matmul.bf16_vs_fp16",
     "very low", "no bf16 matrix units"),
    ("rdna2-fp16-good", RX6650, "6.4", {"matmul": [mm("fp16", 17.3)]}, "matmul.fp16", "good", ""),
    ("copy-good", H200, None, {"memory": [{"bench": "memory", "op": "copy", "median_gbs": 4300, "bytes": 1 << 30}]},
     "memory.copy", "good", ""),
    ("read-low", H200, None, {"memory": [{"bench": "memory", "op": "read", "median_gbs": 3000}]}, "memory.read", "low",
     "not explained by anything observed"),
    ("pageable-slow", H200, None, {"memory": [
        {"bench": "host_copy", "memory": "pinned", "direction": "h2d", "median_gbs": 53.0},
        {"bench": "host_copy", "memory": "pageable", "direction": "h2d", "median_gbs": 9.0},
        {"bench": "pcie", "current_link_speed": "32.0 GT/s PCIe", "current_link_width": "16",
         "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}]}, "host.pageable.h2d", "info", "pin_memory"),
    ("link-downgraded", H200, None, {"memory": [
        {"bench": "host_copy", "memory": "pinned", "direction": "h2d", "median_gbs": 12.0},
        {"bench": "pcie", "current_link_speed": "8.0 GT/s PCIe", "current_link_width": "16",
         "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}]}, "host.pinned.h2d", "very low", "8.0 GT/s"),
    # Recorded on a healthy H200 host (2026-12-02): five 64 MiB copies, the fastest at 51.9 GB/s, the median 43.9.
    ("pinned-copies-varied", H200, None, {"memory": [
        {"bench": "host_copy", "memory": "pinned", "direction": "h2d", "best_gbs": 51.86, "median_gbs": 43.91,
         "iters": 5},
        {"bench": "pcie", "current_link_speed": "32.0 GT/s PCIe", "current_link_width": "16",
         "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}]}, "host.pinned.h2d", "good",
     "the median of 5 copies ran at 43.9 GB/s, 15% below the fastest"),
    ("pinned-slow-every-copy", H200, None, {"memory": [
        {"bench": "host_copy", "memory": "pinned", "direction": "h2d", "best_gbs": 30.2, "median_gbs": 29.8},
        {"bench": "pcie", "current_link_speed": "32.0 GT/s PCIe", "current_link_width": "16",
         "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}]}, "host.pinned.h2d", "low", "numactl"),
    ("launch-windows", RX6650, "6.4", {"launch": [{"bench": "launch", "mode": "back_to_back", "us_per_launch": 18.0}]},
     "launch.back_to_back", "low", "limited by launches"),
    ("sync-slow", RX6650, "6.4", {"launch": [{"bench": "launch", "mode": "sync_each", "us_per_launch": 250.0}]},
     "launch.sync_each", "very low", ".item()"),
    ("unknown-card", {"type": "cuda", "name": "Mystery GPU"}, None, {"matmul": [mm("bf16", 100)]}, "matmul.bf16",
     "unknown", "no expectation"),
]


def test_the_stage_measures_and_the_checks_judge():
    """bench.figures holds the figure and what the card should reach, no verdict, explanation of one or threshold;
    the checks' judgement adds them, with the threshold and its source on the line."""
    figures = A.measure(results(H200, None, {"matmul": [mm("bf16", 200), mm("fp16", 760)]}))
    measured = line(figures, "matmul.bf16")
    assert measured["fraction"] == pytest.approx(200 / 989.4, rel=1e-3) and measured["expected"] == pytest.approx(989.4)
    assert "verdict" not in measured and "remedy" not in measured and not measured["explanation"]
    assert not {"good_at", "low_at", "threshold_source"} & set(measured["details"])
    judged = line(V.judge(figures), "matmul.bf16")
    assert judged["verdict"] == "very low" and "context" not in judged
    assert judged["details"]["good_at"] == V.THRESHOLDS["matmul"]["good"]
    assert judged["details"]["threshold_source"] == V.THRESHOLDS["matmul"]["source"]
    assert analyze(results(H200, None, {"matmul": [mm("bf16", 200), mm("fp16", 760)]})) == V.judge(figures)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_verdicts_and_explanations(case):
    _, device, hip, sections, key, verdict, text = case
    result = analyze(results(device, hip, sections))
    found = line(result, key)
    assert found["verdict"] == verdict, found
    assert text in found["explanation"] + " ".join(found["remedy"])


def test_math_only_sdpa_names_the_reasons():
    recs = [{"bench": "sdpa", "shape": "prefill", "dtype": "fp16", "backend": b, "available": b == "MATH",
             "reason": None if b == "MATH" else f"{b} not compiled for gfx1032", "tflops": 1.0, "median_ms": 2.0}
            for b in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH")]
    result = analyze(results(RX6650, "6.4", {"sdpa": recs}))
    fused = line(result, "sdpa.fused")
    assert fused["verdict"] == "low" and "not compiled for gfx1032" in fused["explanation"]


def decoder_records(tokens_per_s, busy_us, kernels=900, top="aten::mul", sdpa_op="aten::_scaled_dot_product_flash_attention"):
    return [
        {"bench": "decoder_model", "target": "gpu", "dtype": "bf16", "weight_bytes_per_token": 1.192e9,
         "kv_bytes_per_position": 114688, "layer_flops_per_token": 8.8e8, "lm_head_flops_per_token": 3.1e8},
        {"bench": "decoder_prefill", "target": "gpu", "tokens": 512, "ms": 20.0, "tokens_per_s": 25600},
        {"bench": "decoder_decode", "target": "gpu", "tokens": 64, "ms_per_token": 1000 / tokens_per_s,
         "tokens_per_s": tokens_per_s, "mean_context": 544.5},
        {"bench": "decoder_profile", "target": "gpu", "device_busy_us_per_token": busy_us, "kernels_per_token": kernels,
         "sdpa_ops": {sdpa_op: 28},
         "top_host_ops": [{"name": top, "self_cpu_us_per_token": 900.0, "count_per_token": 200}],
         "top_device_ops": [{"name": "aten::mm", "self_device_us_per_token": 300.0, "count_per_token": 197}],
         "top_kernels": [{"name": "nvjet_gemm", "self_device_us_per_token": 300.0}]},
    ]


def test_decode_launch_bound_names_busy_fraction_and_top_op():
    sections = {"memory": [{"bench": "memory", "op": "read", "median_gbs": 3900.0}],
                "launch": [{"bench": "launch", "mode": "back_to_back", "us_per_launch": 5.0}],
                "decoder": decoder_records(tokens_per_s=200.0, busy_us=600.0)}
    result = analyze(results(H200, None, sections))
    decode = line(result, "decoder.decode.gpu")
    assert decode["expected"] == pytest.approx(3900e9 / (1.192e9 + 114688 * 544.5), rel=1e-6)
    assert decode["verdict"] == "info"  # launch-bound: eager decode's nature, on every machine
    assert "busy only 12%" in decode["explanation"] and "launch-bound" in decode["explanation"]
    assert "not this workload" in decode["explanation"]
    assert "aten::mul" in decode["explanation"]
    assert decode["remedy"]


def test_decode_gpu_busy_names_device_op_and_math_path():
    sections = {"memory": [{"bench": "memory", "op": "read", "median_gbs": 3900.0}],
                "decoder": decoder_records(tokens_per_s=2500.0, busy_us=380.0,
                                           sdpa_op="aten::_scaled_dot_product_attention_math")}
    decode = line(analyze(results(H200, None, sections)), "decoder.decode.gpu")
    assert decode["verdict"] == "good"
    assert "aten::mm" in decode["explanation"] and "math path" in decode["explanation"]


def test_failed_section_and_speedups():
    res = results(H200, None, {"compare": [
        {"bench": "compare_matmul", "target": "gpu", "n": 8192, "median_tflops": 50.0},
        {"bench": "compare_matmul", "target": "cpu", "n": 2048, "median_tflops": 2.5},
        {"bench": "compare_cnn", "target": "gpu", "ms_per_step": 2.0},
        {"bench": "compare_cnn", "target": "cpu", "ms_per_step": 6.0}]})
    res["sections"]["sdpa"] = {"state": "timeout", "detail": "no result within its 60 s budget", "records": []}
    result = analyze(res)
    assert line(result, "compare.speedup.matmul")["value"] == pytest.approx(20.0)
    assert line(result, "compare.speedup.cnn")["value"] == pytest.approx(3.0)
    assert line(result, "sdpa.state")["verdict"] == "failed"


# -- checks and facts ------------------------------------------------------------------------------


def test_checks_read_the_fact_and_map_verdicts_to_statuses():
    res = results(RX6650, "6.4", {"matmul": [mm("bf16", 4.9), mm("fp16", 17.3), mm("fp32", 9.4)]})
    by_check = {f.check: f for f in findings(res)}
    assert by_check["bench-bf16-slow"].status is Status.WARN
    assert "float16" in " ".join(by_check["bench-bf16-slow"].remediation)
    assert by_check["bench-matmul-low"].status is Status.OK
    assert by_check["bench-decode-under-roofline"].status is Status.SKIP
    assert by_check["bench-section-failed"].status is Status.OK
    slow = results(H200, None, {"matmul": [mm("bf16", 100), mm("fp16", 100)]})
    assert {f.check: f for f in findings(slow)}["bench-matmul-low"].status is Status.FAIL


def test_unknown_card_gives_info_with_raw_figures():
    res = results({"type": "cuda", "name": "Mystery GPU"}, None, {"matmul": [mm("bf16", 123.0)]})
    finding = {f.check: f for f in findings(res)}["bench-matmul-low"]
    assert finding.status is Status.INFO and "123" in finding.message


def test_fact_round_trips_through_a_snapshot():
    from rocm_doctor.facts import snapshot

    res = results(H200, None, {"matmul": [mm("bf16", 780)]})
    obs = Observations()
    obs.add_probe("bench", res)
    replayed = snapshot.from_dict(json.loads(json.dumps(snapshot.to_dict(obs))))
    facts = Facts(replayed)
    interpret(replayed, facts)
    assert facts[FACT] == res
    empty = Facts(Observations())
    interpret(empty.observations, empty)
    assert not empty.has(FACT) and "did not run" in empty.why_missing(FACT)


def bench_checks():
    from rocm_doctor.engine.registry import load_registry

    return [c for c in load_registry(include_plugins=False).checks if FACT in c.requires]


def test_the_bench_stage_replaces_skips_and_adds_the_stage():
    from rocm_doctor.engine.engine import run_one
    from rocm_doctor.engine.pipeline import run_stages
    from rocm_doctor.engine.registry import load_registry
    from rocm_doctor.gpu.bench.stage import BenchStage

    facts = Facts(Observations())
    interpret(facts.observations, facts)
    skips = [f for c in bench_checks() for f in run_one(c, facts)]
    assert all(f.status is Status.SKIP for f in skips)
    facts.observations.add_probe("bench", results(H200, None, {"matmul": [mm("bf16", 780)]}))
    staged = run_stages([BenchStage()], load_registry(include_plugins=False), facts, list(skips), replay=True)
    assert len([f for f in staged.findings if f.check == "bench-matmul-low"]) == 1
    assert staged.findings != skips
    lines = staged.stages["bench"]["analysis"]["lines"]
    assert lines and all(line.get("verdict") for line in lines)  # judged by the bench checks, through the pipeline
    json.dumps(staged.stages, default=str)


def test_without_the_bench_checks_the_summary_shows_the_figures_unjudged():
    from rocm_doctor.engine.pipeline import run_stages
    from rocm_doctor.engine.registry import Registry
    from rocm_doctor.gpu.bench.stage import BenchStage

    res = results(H200, None, {"matmul": [mm("bf16", 780)]})
    facts = Facts(Observations(probes={"bench": res}))
    staged = run_stages([BenchStage()], Registry(), facts, [], replay=True)
    assert staged.stages["bench"]["analysis"] == A.measure(res)
    assert not any("verdict" in line for line in staged.stages["bench"]["analysis"]["lines"])


def test_every_bench_check_has_a_doc():
    from rocm_doctor.engine.registry import check_doc

    checks = bench_checks()
    assert len(checks) >= 7
    for check in checks:
        doc = check_doc(check)
        assert doc and all(s in doc for s in ("## What it checks", "## Why it matters", "## How to fix", "## References"))


def test_render_human_and_bars():
    from rich.console import Console
    from rocm_doctor.report.bench_view import bar, render

    assert bar(0.5, width=10, plain=True) == "#####....."
    assert bar(0.2, width=10, plain=True, mark=0.6) == "##....|..."
    assert bar(2.0, width=4, plain=True) == "####"
    res = results(RX6650, "6.4", {"matmul": [mm("bf16", 4.9), mm("fp16", 17.3)]})
    console = Console(record=True, width=120, no_color=True)
    render(console, res, analyze(res), findings(res))
    text = console.export_text()
    assert "bf16 / fp16" in text and "bench-bf16-slow" in text and "Elapsed" in text


def test_decode_far_from_the_roofline_with_the_gpu_busy_stays_a_machine_figure():
    sections = {"memory": [{"bench": "memory", "op": "read", "median_gbs": 3900.0}],
                "decoder": decoder_records(tokens_per_s=200.0, busy_us=4900.0)}
    decode = line(analyze(results(H200, None, sections)), "decoder.decode.gpu")
    assert decode["verdict"] == "very low" and "not this workload" not in decode["explanation"]


def test_a_cpu_run_is_not_titled_as_a_comparison_with_a_gpu_it_did_not_measure():
    from rocm_doctor.gpu.bench.plan import title

    assert title("compare") == "CPU vs GPU" and title("sweep").endswith("GPU against CPU")
    assert "GPU against" not in title("sweep", on_cpu=True) and title("compare", on_cpu=True).startswith("CPU figures")
    assert title("matmul", on_cpu=True) == title("matmul") == "Matmul throughput"
