"""The small-CNN answer on synthetic results: the cnn, sweep and conv analyses, the sweep chart, and the reason
bench-cnn-speedup-low gives (launch-bound, slow conv kernels, MIOpen's database), with the measured steps."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from rocm_doctor.engine.model import Status
from rocm_doctor.gpu.bench.analysis import analyze
from rocm_doctor.gpu.bench.stage import findings

H200 = {"type": "cuda", "index": 0, "name": "NVIDIA H200", "major": 9, "minor": 0}
RX6650 = {"type": "cuda", "index": 0, "name": "AMD Radeon RX 6650 XT", "gcnArchName": "gfx1032"}
MIOPEN = Path(__file__).parent / "fixtures" / "miopen"
CHECK = "bench-cnn-speedup-low"


def results(sections, device=H200, hip=None):
    return {"schema": 1, "preset": "full", "env": {},
            "header": {"device": device, "import": {"ok": True, "version": "2.11", "hip": hip,
                                                     "cuda": None if hip else "13.0"},
                       "cpu": {"threads": 16, "name": "test cpu"}},
            "sections": {name: {"state": "ok", "detail": "completed", "seconds": 1.0, "records": recs}
                         for name, recs in sections.items()},
            "elapsed_s": 10.0, "measured_s": 8.0}


def compare(gpu_ms=1.0, cpu_ms=4.8, mm_gpu=40.0, mm_cpu=2.0):
    return [{"bench": "compare_matmul", "target": "gpu", "n": 4096, "median_tflops": mm_gpu, "best_tflops": mm_gpu,
             "one_call_ms": 3.6},
            {"bench": "compare_matmul", "target": "cpu", "n": 4096, "median_tflops": mm_cpu, "best_tflops": mm_cpu,
             "one_call_ms": 70.0},
            {"bench": "compare_cnn", "target": "gpu", "ms_per_step": gpu_ms, "batch": 64, "steps": 100},
            {"bench": "compare_cnn", "target": "cpu", "ms_per_step": cpu_ms, "batch": 64, "steps": 30}]


def cnn(steady=1.0, busy_us=180.0, kernels=60, opt_ms=0.2, first=900.0, graph_ms=0.3):
    return [
        {"bench": "cnn_model", "batch": 64, "flops_per_step": 1.1e9, "params": 25578},
        {"bench": "cnn_steps", "batch": 64, "first_ms": first, "next_ms": [2.0, 1.1], "steady_ms": steady,
         "synced_median_ms": steady * 1.1},
        {"bench": "cnn_launch", "us_per_launch": 9.0},
        {"bench": "cnn_profile", "batch": 64, "steady_ms": steady, "calls": 5, "device_busy_us_per_call": busy_us,
         "kernels_per_call": kernels, "regions_host_us_per_call": {"Optimizer.step": 250.0},
         "top_host_ops": [{"name": "aten::convolution_backward", "self_cpu_us_per_call": 120.0, "count_per_call": 2}],
         "top_device_ops": [{"name": "aten::cudnn_convolution", "self_device_us_per_call": 60.0}],
         "top_kernels": [{"name": "sm90_xmma_fprop_implicit_gemm", "self_device_us_per_call": 30.0}]},
        {"bench": "cnn_optimizer", "variant": "for_loop", "default": False, "available": True, "ms_per_step": 1.6,
         "opt_ms": 0.8, "opt_kernels": 96},
        {"bench": "cnn_optimizer", "variant": "foreach", "default": True, "available": True, "ms_per_step": steady,
         "opt_ms": opt_ms, "opt_kernels": 12},
        {"bench": "cnn_optimizer", "variant": "fused", "default": False, "available": True, "ms_per_step": 0.85,
         "opt_ms": 0.05, "opt_kernels": 1},
        {"bench": "cnn_variant", "variant": "channels_last", "ms_per_step": 1.02, "speedup": steady / 1.02},
        {"bench": "cnn_variant", "variant": "fused_adam", "ms_per_step": 0.85, "speedup": steady / 0.85},
        {"bench": "cnn_variant", "variant": "cuda_graph", "ms_per_step": graph_ms, "speedup": steady / graph_ms},
    ]


def sweep(points=((16, 0.95, 1.3, 0.05), (64, 1.0, 4.8, 0.18), (256, 1.2, 19.0, 0.6), (1024, 2.5, 80.0, 0.9))):
    return [{"bench": "sweep_point", "batch": b, "gpu_ms_per_step": g, "cpu_ms_per_step": c, "speedup": c / g,
             "busy_fraction": busy, "kernels_per_step": 60} for b, g, c, busy in points]


def conv_records(tflops=120.0, kernel="sm90_xmma_fprop_implicit_gemm_tf32", passes=("default", "benchmark"),
                 log=None, db=None):
    recs = [{"bench": "conv_env", "is_hip": log is not None, "allow_tf32": True, "cudnn_available": True,
             "env": {"MIOPEN_FIND_MODE": "FAST"} if log is not None else {}}]
    for name in passes:
        first = {"benchmark": 600.0, "default-again": 2.0 if db and db.get("kept") else 400.0}.get(name, 400.0)
        for shape, dtype, layout, value in (("3x3", "fp32", "nchw", tflops), ("3x3", "fp16", "channels_last", 400.0),
                                            ("depthwise", "fp16", "channels_last", 2.0)):
            recs.append({"bench": "conv", "pass_name": name, "shape": shape, "dtype": dtype, "layout": layout,
                         "tflops": value, "median_ms": 1.0 if name != "benchmark" else 0.8, "first_ms": first,
                         "gbs": 900.0, "kernels": [{"name": kernel, "us": 100.0}], "ops": ["aten::convolution"],
                         "backend": "Cudnn"})
        recs.append({"bench": "conv_pass", "pass_name": name, "state": "ok", "seconds": 5.0, "records": 3,
                     "import_s": 3.0})
    if db is not None:
        sample = "4-8-8-3x3-4-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F=ConvDirectNaiveConvFwd:9.5,0,miopenConvolutionFwdAlgoDirect\n"
        folder = {"MIOPEN_USER_DB_PATH": {"path": "/home/u/.config/miopen", "writable": db["writable"],
                                          "files": [{"name": "gfx1032_16.HIP.3_3_0.ufdb.txt", "records": 4,
                                                     "sample": sample}]}}
        recs += [{"bench": "conv_db", "when": "before", "folders": folder},
                 {"bench": "conv_db", "when": "after", "folders": folder}]
    if log is not None:
        recs.append({"bench": "conv_pass", "pass_name": "miopen-log", "state": "ok", "records": 1,
                     "log": (MIOPEN / log).read_text(), "log_cut": 0})
    return recs


def answer(res):
    return next(f for f in findings(res) if f.check == CHECK)


def line(res, key):
    return next(l for l in analyze(res)["lines"] if l["key"] == key)


def test_launch_bound_h200_names_the_measured_reason_and_gain():
    res = results({"compare": compare(), "cnn": cnn(), "sweep": sweep(), "conv": conv_records()})
    finding = answer(res)
    assert finding.status is Status.INFO  # launch-bound: the small model's property, with the measured gains
    assert finding.data["reason"] == "launch-bound"
    assert "4.8x faster than the CPU (fp32 matmul 20x)" in finding.message
    assert ("GPU is busy 18% of the 1.00 ms step and waits for the host the rest; launching its 60 kernels costs "
            "0.54 ms (9.0 us each), Adam's step 0.20 ms, the rest is PyTorch's host-side work") in finding.message
    assert "at batch 1024 it trains 32x faster than the CPU, 6.7x the speed-up at batch 64" in finding.message
    assert "first step took 900 ms" in finding.message  # also reported, not the main reason
    steps = finding.remediation
    assert steps[0].startswith("Train with larger batches") and "32.0x over the CPU against 4.8x" in steps[0]
    assert "CUDA/HIP graph" in steps[1] and "1.000 -> 0.300 ms per step (3.33x)" in steps[1]
    assert any("fused=True" in s for s in steps) and not any("channels_last" in s for s in steps)  # 2% is no help
    assert any("GPU busy 18%" in e for e in finding.evidence)


def test_the_cnn_lines_carry_the_profile():
    res = results({"compare": compare(), "cnn": cnn(), "sweep": sweep()})
    assert line(res, "cnn.busy")["value"] == 18.0
    assert "60 x 9.0 us per launch = 0.540 ms of the 1.000 ms step" in line(res, "cnn.kernels")["explanation"]
    assert "optimizer.step() alone 0.050 ms, 1 kernel" in line(res, "cnn.optimizer.fused")["explanation"]
    assert "torch's default" in line(res, "cnn.optimizer.foreach")["label"]
    best = line(res, "sweep.best")
    assert best["value"] == 32.0 and "from batch 1024" in best["explanation"]
    assert line(res, "compare.speedup.matmul_one_call")["value"] == 70.0 / 3.6


def test_optimizer_bound_when_adam_is_the_step():
    res = results({"compare": compare(), "cnn": cnn(busy_us=800.0, opt_ms=0.45), "sweep": sweep()})
    finding = answer(res)
    assert finding.data["reasons"][0] == "optimizer-bound" and "Adam's step takes 45%" in finding.message


def test_slow_conv_kernels_on_rdna2_come_first():
    res = results({"compare": compare(), "cnn": cnn(), "sweep": sweep(),
                   "conv": conv_records(tflops=0.3, kernel="naive_conv_ab_nonpacked_fwd_nchw_float_double_float",
                                        passes=("default", "default-again", "benchmark"),
                                        log="windows-gfx1150-therock-naive-conv-fp32-nhwc-invoker-kernel-runs-excerpt.txt",
                                        db={"writable": False})},
                  RX6650, "6.4")
    finding = answer(res)
    assert finding.data["reasons"][:2] == ["slow-conv-kernels", "launch-bound"]
    assert "naive_conv_ab_nonpacked_fwd_nchw_float_double_float" in finding.message
    assert "did not keep its results" in finding.message
    assert any("fastest 3x3 convolution here was 3x3 fp16 channels_last at 400.0 TFLOP/s" in s
               for s in finding.remediation)
    assert any("miopen-db-not-writable" in s for s in finding.remediation)
    plain = line(res, "conv.3x3.fp32.nchw")
    assert plain["verdict"] == "very low" and plain["expected"] == 10.79  # RDNA2: fp32 peak, no TF32


def test_conv_judges_fp32_against_tf32_on_hopper():
    res = results({"conv": conv_records(tflops=120.0)})
    plain = line(res, "conv.3x3.fp32.nchw")
    assert plain["details"]["peak_key"] == "tf32" and plain["expected"] == 494.7
    assert plain["verdict"] == "good" and "40% of the GEMM rate (60% of the tf32 peak)" in plain["explanation"]
    assert line(res, "conv.depthwise.fp16.channels_last")["verdict"] == "info"
    bench = line(res, "conv.benchmark")
    assert bench["value"] == 1.25 and "its search adds 601 ms to the first calls" in bench["explanation"]
    assert line(res, "conv.pass.default")["value"] == 3 * (400.0 - 1.0)


def test_miopen_find_mode_database_and_log_lines():
    recs = conv_records(passes=("default", "default-again"), db={"writable": True, "kept": True},
                        log="windows-gfx1150-therock-miopen3.5.1-naive-conv-fp16-nhwc-selected-and-stored-in-ufdb-"
                            "excerpt.txt")
    res = results({"conv": recs}, RX6650, "6.4")
    assert line(res, "conv.miopen.find_mode")["label"] == "MIOPEN_FIND_MODE FAST (2)"
    assert "no search" in line(res, "conv.miopen.find_mode")["explanation"]
    database = line(res, "conv.miopen.db")["explanation"]
    assert "writable; 1 database files, 4 find records" in database
    assert "1 of the 1 records read have a naive solver as the fastest (4-8-8-3x3-" in database
    log_line = line(res, "conv.miopen.log")
    assert "chose ConvDirectNaiveConvFwd (fwd)" in log_line["explanation"]
    assert "naive fallback: ConvDirectNaiveConvFwd" in log_line["explanation"]
    assert "MIOpen found what the first process stored" in line(res, "conv.db.reuse")["explanation"]


def test_good_speedup_is_ok_cpu_is_info_and_nothing_is_skip():
    fast = results({"compare": compare(gpu_ms=0.4, cpu_ms=8.0), "cnn": cnn(), "sweep": sweep()})
    assert answer(fast).status is Status.OK
    cpu = results({"sweep": [{"bench": "sweep_point", "batch": 4, "cpu_ms_per_step": 2.0}]},
                  {"type": "cpu", "name": "cpu"})
    assert answer(cpu).status is Status.INFO
    assert answer(results({"launch": []})).status is Status.SKIP


def test_sweep_chart_in_the_terminal():
    from rocm_doctor.report.bench_view import render

    res = results({"compare": compare(), "cnn": cnn(), "sweep": sweep()})
    console = Console(record=True, width=130, no_color=True)
    render(console, res, analyze(res), findings(res))
    text = console.export_text()
    assert "speed-up over the CPU" in text and "64 *" in text and "32.0x" in text and "90%" in text
    assert "####################" in text  # the largest speed-up fills its bar
    assert "bench-cnn-speedup-low" in text and "launch-bound" in text


def test_the_recorded_h200_run_is_launch_bound_with_the_sweep_gain():
    """The --json run of benchmarks/run_cnn_speedup.sh on a real H200 (docs/measurements.md, 2026-12-01)."""
    import json

    recorded = Path(__file__).parent / "fixtures" / "h200" / "bench-cnn-compare-sweep-conv-results.json"
    res = json.loads(recorded.read_text(encoding="utf-8"))
    finding = answer(res)
    assert finding.status is Status.INFO and finding.data["reasons"] == ["launch-bound", "first-use-search"]
    assert "the workload's property, not this machine's" in finding.message
    assert finding.message.startswith("The small CNN trains 2.6x faster than the CPU (fp32 matmul 43x)")
    assert "busy 14% of the 1.95 ms step" in finding.message and "45 kernels costs 0.32 ms" in finding.message
    assert "at batch 1024 it trains 51x faster than the CPU, 18.0x the speed-up at batch 64" in finding.message
    assert finding.remediation[0].startswith("Train with larger batches") and "CUDA/HIP graph" in finding.remediation[1]
    analysis = analyze(res)
    assert analysis["values"]["conv"]["configs"]["3x3.fp32.nchw"]["peak_key"] == "tf32"
    assert analysis["values"]["conv"]["slow"] == [] and analysis["values"]["conv"]["naive"] == []
    top = next(l for l in analysis["lines"] if l["key"] == "cnn.top_host")
    assert top["label"] == "top host-side op: aten::fill_"  # the profiler's own events are left out


def test_a_cpu_side_on_fewer_cpus_is_not_judged_against_the_gpu():
    res = results({"compare": compare(), "cnn": cnn(), "sweep": sweep(), "conv": conv_records()})
    res["header"]["cpu"].update(affinity=1, cpu_count=16)
    finding = answer(res)
    assert finding.status is Status.INFO
    assert "ran on 1 of the machine's 16 CPUs" in finding.message and finding.data["cpu_share"]["usable"] == 1
