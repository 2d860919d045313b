"""On a real H200, what lowered the benchmark's figures is the root cause of the findings it lowered: a speed switch
a re-run without it measured, or another process the live state showed computing on the GPU. The three recordings
(tests/fixtures/INDEX.md) are one `bench --quick` as the machine is, with CUDA_LAUNCH_BLOCKING=1, and beside a second
process; each is judged as the bench command judges it: the stage's result with the live sample taken before it."""

import json
from pathlib import Path

import pytest

from rocm_doctor import diagnose
from rocm_doctor.diagnose import LIVE_STATE, STAGES, Options, replay
from rocm_doctor.facts.observations import Observations
from rocm_doctor.gpu.bench.stage import BenchStage

H200 = Path(__file__).parent / "fixtures" / "h200"


def judged(name: str, env: dict):
    results = json.loads((H200 / f"bench-quick-{name}-results.json").read_text())
    before = Observations.from_dict(results["live"]["samples"][0])
    observations = Observations(platform={"os": "linux"}, env=env, commands=before.commands, files=before.files,
                                probes=dict(before.probes))
    stage = BenchStage()
    observations.add_probe(stage.probe_key, results)
    report, _ = replay(observations, "recorded", Options(scope=STAGES, stages=[stage], areas=(LIVE_STATE,)))
    return report.diagnosis


def test_a_healthy_h200_bench_has_no_problem():
    diagnosis = judged("plain", {})
    assert diagnosis.verdict == "healthy" and not diagnosis.root_causes


def test_a_slowing_switch_is_the_one_cause_of_the_launch_and_bandwidth_figures_it_lowered():
    diagnosis = judged("launch-blocking", {"CUDA_LAUNCH_BLOCKING": "1"})
    assert [r.finding.id for r in diagnosis.root_causes] == ["env-switch-slows:CUDA_LAUNCH_BLOCKING"]
    assert set(diagnosis.root_causes[0].symptoms) == {"bench-launch-bound", "bench-bandwidth-low"}


def test_another_process_on_the_gpu_is_the_cause_of_the_figures_measured_beside_it():
    diagnosis = judged("other-process", {})
    first = diagnosis.root_causes[0]
    assert first.finding.id == "gpu-other-process:0" and "pid 2903 (python3)" in first.finding.message
    assert {"bench-matmul-low", "bench-launch-bound"} <= set(first.symptoms)


@pytest.mark.parametrize("watched,areas,sampled", [(True, (LIVE_STATE,), True), (False, (LIVE_STATE,), False),
                                                   (True, ("multi-gpu",), False)])
def test_a_watched_stage_request_observes_the_live_state_before_it(monkeypatch, watched, areas, sampled):
    sample = json.loads((H200 / "bench-quick-other-process-results.json").read_text())["live"]["samples"][0]
    import rocm_doctor.probes.gpu_sample as gpu_sample

    monkeypatch.setattr(gpu_sample, "sampler", lambda env, platform_os: lambda: sample)
    observed = diagnose.observe(Options(scope=STAGES, watch=watched, areas=areas, env={"PATH": "/usr/bin"}))
    assert ("nvidia-smi-compute-apps" in observed.commands) is sampled
