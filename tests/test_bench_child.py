"""The benchmark harness through real child processes on the CPU device, with tiny sizes (no timed assertions)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rocm_doctor.gpu.bench import plan
from rocm_doctor.gpu.bench.analysis import analyze
from rocm_doctor.gpu.bench.harness import run_bench

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory):
    seen = []
    db = tmp_path_factory.mktemp("miopen-db")  # a user find database as MIOpen leaves it, for the conv section
    (db / "gfx1150_8.HIP.3_5_1_test.ufdb.txt").write_text(
        (Path(__file__).parent / "fixtures" / "miopen" / "ufdb-records-fp16-winograd-igemm-gemm-and-naive-timings-"
         "excerpt.txt").read_text(encoding="utf-8"), encoding="utf-8")
    env = dict(os.environ, MIOPEN_USER_DB_PATH=str(db))
    results = run_bench(sys.executable, plan.build("tiny"), device="cpu", preset="tiny", on_record=seen.append,
                        env=env)
    return results, seen


def test_every_section_reports_on_the_cpu(tiny_results):
    results, seen = tiny_results
    assert results["header"]["device"]["type"] == "cpu"
    assert results["header"]["cpu"]["threads"] >= 1
    for name in plan.SECTION_ORDER:
        entry = results["sections"][name]
        assert entry["state"] == "ok", (name, entry)
        assert entry["records"], name
    kinds = {r["bench"] for s in results["sections"].values() for r in s["records"]}
    assert {"matmul", "memory", "launch", "sdpa", "compare_matmul", "compare_cnn", "cpu_memory", "decoder_model",
            "decoder_prefill", "decoder_decode", "decoder_profile", "reference", "cnn_model", "cnn_steps",
            "cnn_profile", "cnn_optimizer", "cnn_variant", "sweep_point", "conv_env", "conv", "conv_pass",
            "conv_db"} <= kinds
    assert any(r.get("bench") == "section_end" for r in seen)  # progress reached the callback


def test_records_count_bytes_and_flops(tiny_results):
    results, _ = tiny_results
    copy = next(r for r in results["sections"]["memory"]["records"] if r.get("op") == "copy")
    assert copy["bytes_counted"] == 2 * copy["bytes"]
    mm = next(r for r in results["sections"]["matmul"]["records"] if r.get("m") == 96)
    assert mm["flops"] == 2 * 96 * 32 * 64
    model = next(r for r in results["sections"]["decoder"]["records"] if r["bench"] == "decoder_model")
    cfg = model["config"]
    assert model["kv_bytes_per_position"] == cfg["layers"] * 2 * cfg["kv_heads"] * cfg["head_dim"] * 4  # fp32 on CPU
    decode = next(r for r in results["sections"]["decoder"]["records"] if r["bench"] == "decoder_decode")
    assert decode["tokens"] == decode["most_tokens"] == 2 and len(decode["chunk_ms_per_token"]) == 2  # no spread asked
    profile = next(r for r in results["sections"]["decoder"]["records"] if r["bench"] == "decoder_profile")
    assert profile["top_host_ops"] and "aten::" in profile["top_host_ops"][0]["name"]


def test_the_simple_cnn_and_every_conv_pass_ran(tiny_results):
    results, _ = tiny_results
    model = next(r for r in results["sections"]["cnn"]["records"] if r["bench"] == "cnn_model")
    assert model["params"] == 448 + 4640 + 20490  # the SimpleCNN: 3->16, 16->32 convs, 2048->10 linear
    passes = {r["pass_name"]: r for r in results["sections"]["conv"]["records"] if r["bench"] == "conv_pass"}
    assert set(passes) == {"default", "default-again", "benchmark", "miopen-log"}
    assert all(p["state"] == "ok" and p["records"] for p in passes.values()), passes
    assert passes["miopen-log"]["env"]["MIOPEN_LOG_LEVEL"] == "5" and "log" in passes["miopen-log"]
    convs = [r for r in results["sections"]["conv"]["records"] if r["bench"] == "conv"]
    assert {r["benchmark"] for r in convs} == {False, True}
    first = next(r for r in convs if r["shape"] == "3x3" and r["dtype"] == "fp32" and r["layout"] == "nchw")
    assert first["flops"] == 3 * 2 * 2 * 4 * 4 * 9 * 8 * 8 and first["ops"]
    db = next(r for r in results["sections"]["conv"]["records"] if r["bench"] == "conv_db")
    user = db["folders"]["MIOPEN_USER_DB_PATH"]
    assert user["source"] == "env" and user["writable"] and user["files"][0]["records"] == 3
    analysis = analyze(results)
    line = next(l for l in analysis["lines"] if l["key"] == "conv.miopen.db")
    assert "3 find records before the passes, 3 after" in line["explanation"]
    assert analysis["values"]["conv"]["miopen"]["db_naive_best"] == []  # Winograd is the fastest in every record


def test_analysis_of_a_real_run_is_json(tiny_results):
    results, _ = tiny_results
    result = analyze(results)
    assert result["expectation"] is None
    keys = {line["key"] for line in result["lines"]}
    assert {"matmul.fp32", "memory.copy", "launch.back_to_back", "decoder.decode.cpu", "reference.copy"} <= keys
    json.dumps(result)


def test_a_hanging_section_becomes_a_timeout_and_the_rest_still_run():
    sections = [plan.Section("hang", 1.0, kind="hang"), *plan.build("tiny", ("launch",))]
    results = run_bench(sys.executable, sections, device="cpu")
    assert results["sections"]["hang"]["state"] == "timeout"
    assert results["sections"]["launch"]["state"] == "ok" and results["sections"]["launch"]["records"]
    assert len(results["children"]) == 2
    lines = {l["key"]: l for l in analyze(results)["lines"]}
    assert lines["hang.state"]["verdict"] == "failed"


def test_parent_timeout_covers_a_child_whose_watchdog_cannot_fire():
    sections = [plan.Section("hang", 1.0, kind="hang"), *plan.build("tiny", ("launch",))]
    results = run_bench(sys.executable, sections, device="cpu", watchdog=False, grace_s=0.5)
    assert results["sections"]["hang"]["state"] == "timeout"
    assert results["children"][0]["stopped_in"] == "hang"
    assert results["sections"]["launch"]["state"] == "ok"


def test_missing_torch_marks_every_section_not_run(fake_python):
    python = fake_python("raise ImportError('No module named torch._C')\n")
    results = run_bench(str(python), plan.build("tiny"), device="cpu")
    states = {s["state"] for s in results["sections"].values()}
    assert states == {"not-run"}
    assert "torch could not be imported" in results["sections"]["matmul"]["detail"]


def test_bench_command_json_shape():
    from rocm_doctor.cli.main import cli

    out = CliRunner().invoke(cli, ["bench", "--preset", "tiny", "--device", "cpu", "--section", "launch",
                                   "--python", sys.executable, "--json"])
    assert out.exit_code in (0, 1), out.output
    data = json.loads(out.output)
    assert data["schema_version"] == 2 and data["kind"] == "bench"
    assert set(data) >= {"results", "analysis", "findings", "elapsed_s"}
    assert data["results"]["sections"]["launch"]["state"] == "ok"
    assert all(f["check"].startswith("bench-") or f["check"] == "env-switch-slows" for f in data["findings"])


def test_the_first_conv_pass_runs_in_the_benchmarks_process_unless_a_section_convolved_before():
    conv = plan.build("tiny", ("conv",))[0]
    params = dict(conv.params, in_process=True, passes=["default", "benchmark"], miopen=False)
    alone = run_bench(sys.executable, [plan.Section("conv", 120, params)], device="cpu")
    records = alone["sections"]["conv"]["records"]
    passes = {r["pass_name"]: r for r in records if r["bench"] == "conv_pass"}
    assert passes["default"]["process"] == "benchmark" and passes["default"]["import_s"] is None
    assert passes["default"]["records"] == len([r for r in records if r["bench"] == "conv"
                                                and r["pass_name"] == "default"]) > 0
    assert passes["benchmark"].get("process") is None and passes["benchmark"]["import_s"]  # a fresh process
    assert passes["benchmark"]["started_ahead_s"] > 0  # it imported torch while the default pass measured
    line = next(l for l in analyze(alone)["lines"] if l["key"] == "conv.pass.default")
    assert "the benchmark's process before any other convolution" in json.dumps(line)

    after = run_bench(sys.executable, [*plan.build("tiny", ("cnn",)),
                                       plan.Section("conv", 120, dict(params, passes=["default"]))], device="cpu")
    passes = {r["pass_name"]: r for r in after["sections"]["conv"]["records"] if r["bench"] == "conv_pass"}
    assert passes["default"].get("process") is None and passes["default"]["import_s"]  # the CNN convolved first
