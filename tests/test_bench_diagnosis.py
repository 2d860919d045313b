"""bench --json carries a diagnosis like check's: on a real H200 with CUBLAS_WORKSPACE_CONFIG=:0:0
(benchmarks/run_runtime_limits.sh, docs/measurements.md, 2026-12-01), the switch the re-run measured (tf32 mm 404
TFLOP/s without it, 212 with it) is the root cause and the low matmul figure is folded under it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocm_doctor.report.bench_view import BenchResult
from rocm_doctor.testing.stages import bench_report

RESULTS = Path(__file__).parent / "fixtures" / "h200" / "bench-matmul-cublas-workspace-results.json"


def test_the_measured_switch_is_the_root_of_the_low_matmul():
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    judged = bench_report(results, env={"CUBLAS_WORKSPACE_CONFIG": ":0:0"})  # the shell it ran in
    report = BenchResult(results, judged.stages["bench"]["analysis"], judged.findings, judged.diagnosis).document()
    roots = report["diagnosis"]["root_causes"]
    assert roots[0]["finding"].startswith("env-switch-slows") and "bench-matmul-low" in roots[0]["symptoms"]
    low = next(f for f in report["findings"] if f["check"] == "bench-matmul-low")
    assert low["status"] == "warn" and low["caused_by"] == [roots[0]["finding"]]
    assert [r["finding"] for r in roots].count(low["id"]) == 0


def test_bench_is_a_stage_only_request_through_the_pipeline(monkeypatch):
    """`bench` runs no machine-wide probe (only the live GPU state before it), and its findings are those of the
    checks that require the bench's facts and of the live-state checks; the renderers get every line judged from
    the pipeline's summary."""
    import copy

    from click.testing import CliRunner

    import rocm_doctor.diagnose as diagnose
    from rocm_doctor.cli.main import cli
    from rocm_doctor.engine.registry import load_registry
    from rocm_doctor.gpu.bench import session

    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    monkeypatch.setattr(session, "run", lambda *args, **kwargs: copy.deepcopy(results))
    monkeypatch.setattr(diagnose, "collect", lambda *args, **kwargs: pytest.fail("a probe ran for bench"))
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":0:0")
    done = CliRunner().invoke(cli, ["bench", "--json"])
    document = json.loads(done.output)
    judging = {c.id for c in load_registry().checks if "bench.figures" in c.requires or c.area == "gpu-state"}
    assert {f["check"] for f in document["findings"]} == judging
    assert document["diagnosis"]["root_causes"][0]["finding"] == "env-switch-slows:CUBLAS_WORKSPACE_CONFIG"
    assert all("verdict" in line for line in document["analysis"]["lines"])
