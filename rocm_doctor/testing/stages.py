"""A GPU stage's recorded result judged through the one pipeline, as the command that measured it judges it: for
testing the checks that judge a stage's facts, and what the renderers are given."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from rocm_doctor.diagnose import judge_recorded
from rocm_doctor.gpu.bench.stage import BenchStage
from rocm_doctor.report.model import Report


def bench_report(results: dict[str, Any], env: Optional[Mapping[str, str]] = None) -> Report:
    """`rocm-doctor bench`'s report of `results` measured in the environment `env`: findings, Diagnosis and the
    bench summary (the results, every line judged)."""
    return judge_recorded(BenchStage(), results, env)[0]


def bench_findings(results: dict[str, Any], env: Optional[Mapping[str, str]] = None) -> list:
    return bench_report(results, env).findings


def bench_analysis(results: dict[str, Any]) -> dict[str, Any]:
    """Every line of `results` with the verdict the bench checks gave it (what the renderers show)."""
    return bench_report(results).stages["bench"]["analysis"]
