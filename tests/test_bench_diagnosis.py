"""bench --json carries a diagnosis like check's: on a real H200 with CUBLAS_WORKSPACE_CONFIG=:0:0
(benchmarks/run_runtime_limits.sh, docs/measurements.md, 2026-12-01), the switch the re-run measured (tf32 mm 404
TFLOP/s without it, 212 with it) is the root cause and the low matmul figure is folded under it."""

from __future__ import annotations

import json
from pathlib import Path

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.gpu.bench.analysis import analyze
from rocm_doctor.gpu.bench.stage import findings
from rocm_doctor.report.bench_view import BenchResult

RESULTS = Path(__file__).parent / "fixtures" / "h200" / "bench-matmul-cublas-workspace-results.json"


def test_the_measured_switch_is_the_root_of_the_low_matmul():
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    found = findings(results, Facts(Observations(env={"CUBLAS_WORKSPACE_CONFIG": ":0:0"})))  # the shell it ran in
    report = BenchResult(results, analyze(results), found).document()
    roots = report["diagnosis"]["root_causes"]
    assert roots[0]["finding"].startswith("env-switch-slows") and "bench-matmul-low" in roots[0]["symptoms"]
    low = next(f for f in report["findings"] if f["check"] == "bench-matmul-low")
    assert low["status"] == "warn" and low["caused_by"] == [roots[0]["finding"]]
    assert [r["finding"] for r in roots].count(low["id"]) == 0
