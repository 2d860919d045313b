"""Speed switches proven by measurement: which set switches the bench re-runs without, the comparison of both runs,
the env-switch-slows verdicts and what they explain, the static warning a harmless switch refutes, and the whole
loop for real on the CPU device with OMP_NUM_THREADS."""

import json

import pytest

from rocm_doctor.engine import diagnosis, relations
from rocm_doctor.engine.model import Status
from rocm_doctor.engine.pipeline import run_stages
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.observations import Observations
from rocm_doctor.gpu.bench import switches
from rocm_doctor.gpu.bench.analysis import measure
from rocm_doctor.gpu.bench.stage import FACT, PROBE_KEY, BenchStage
from rocm_doctor.interpret import interpret
from rocm_doctor.testing.stages import bench_analysis as analyze, bench_findings as findings

H200 = {"type": "cuda", "index": 0, "name": "NVIDIA H200", "major": 9, "minor": 0}
BLOCKING = {"CUDA_LAUNCH_BLOCKING": "1"}
REGISTRY = load_registry(include_plugins=False)


def launch(back_to_back, sync_each=17.0):
    return [{"bench": "launch", "mode": "back_to_back", "us_per_launch": back_to_back},
            {"bench": "launch", "mode": "sync_each", "us_per_launch": sync_each},
            {"bench": "launch", "mode": "graph", "us_per_launch": 1.0}]


def section(records, state="ok"):
    return {"state": state, "detail": "completed", "seconds": 1.0, "records": records}


def results(back_to_back, device=H200):
    return {"schema": 1, "preset": "quick", "env": {},
            "header": {"device": device, "import": {"ok": True, "version": "2.11", "hip": None, "cuda": "13.0"},
                       "cpu": {"threads": 16}},
            "sections": {"launch": section(launch(back_to_back))}, "live": {"samples": []}}


def ab(back_to_back, without, env=BLOCKING, state="ok"):
    """Results whose launch section measured `back_to_back`, re-run without the switch at `without`."""
    out = results(back_to_back)
    out["switch_ab"] = switches.choose(out, env, measure(out)["lines"], ["launch"])
    for run in out["switch_ab"]["runs"]:
        run["results"] = {"sections": {"launch": section(launch(without), state)}, "live": {"samples": []}}
    return out


def judged(res, env=BLOCKING):
    return {f.id: f for f in findings(res, env)}


# -- which switches are re-run ----------------------------------------------------------------------------------


def test_a_figure_a_set_switch_moves_is_re_run_without_it():
    chosen = ab(18.0, 6.0)["switch_ab"]
    (run,) = chosen["runs"]
    assert (run["variable"], run["sections"]) == ("CUDA_LAUNCH_BLOCKING", ["launch"])
    assert run["why"].startswith("it moves back-to-back launches 18 us/launch")
    assert run["figures"] == ["launch.back_to_back", "launch.sync_each"]


def test_a_switch_is_re_run_whatever_the_verdict_on_its_figures():
    """The stage holds no verdicts: a figure that would measure good is re-run too, and the re-run judges it."""
    chosen = ab(6.0, 6.0)["switch_ab"]
    assert [run["variable"] for run in chosen["runs"]] == ["CUDA_LAUNCH_BLOCKING"] and chosen["not_run"] == []
    finding = judged(ab(6.0, 6.0))["env-switch-slows:CUDA_LAUNCH_BLOCKING"]
    assert finding.status is Status.INFO and "measured harmless here" in finding.message


def test_another_vendors_switch_is_not_set_for_this_build_and_cpu_switches_need_cpu_figures():
    res = results(18.0)
    chosen = switches.choose(res, {"AMD_SERIALIZE_KERNEL": "3", "OMP_NUM_THREADS": "1"}, measure(res)["lines"],
                             ["launch"])
    assert [s["variable"] for s in chosen["set"]] == ["OMP_NUM_THREADS"]
    assert chosen["not_run"] == [{"variable": "OMP_NUM_THREADS", "value": "1",
                                  "why": "none of the figures it moves was measured in this run"}]


def test_at_most_three_switches_are_re_run():
    res = results(18.0)
    res["sections"]["matmul"] = section([{"bench": "matmul", "dtype": d, "m": 4096, "n": 4096, "k": 4096,
                                          "median_tflops": 10.0, "best_tflops": 10.0} for d in ("fp32", "bf16")])
    env = {"CUDA_LAUNCH_BLOCKING": "1", "CUBLAS_WORKSPACE_CONFIG": ":16:8", "CUBLASLT_LOG_LEVEL": "5",
           "CUBLAS_LOGINFO_DBG": "1", "PYTORCH_TUNABLEOP_ENABLED": "1"}
    chosen = switches.choose(res, env, measure(res)["lines"], ["matmul", "launch"])
    assert len(chosen["runs"]) == 3 and "only 3 switches" in chosen["not_run"][-1]["why"]


# -- the comparison and the verdicts ---------------------------------------------------------------------------


def test_a_switch_that_slows_a_figure_is_the_cause_with_both_figures_and_an_unset_step():
    res = ab(18.0, 6.0)
    (comparison,) = analyze(res)["observed"]["switches"]
    assert comparison["slows"] and comparison["figures"][0]["speedup"] == 3.0
    found = judged(res)
    cause = found["env-switch-slows:CUDA_LAUNCH_BLOCKING"]
    assert cause.status is Status.WARN
    assert "6 us/launch without it against 18 with it (3.00x)" in cause.message
    assert [(s.kind, s.name, s.scope) for s in cause.fix] == [("unset_env", "CUDA_LAUNCH_BLOCKING", "process")]
    symptom = found["bench-launch-bound"]
    assert "CUDA_LAUNCH_BLOCKING=1 is set, and a re-run without it in a fresh child measured" in symptom.message
    linked = relations.link(list(found.values()), REGISTRY.checks)
    assert next(f for f in linked if f.id == "bench-launch-bound").caused_by == [cause.id]
    (root,) = diagnosis.build(linked).root_causes
    assert (root.finding.id, root.symptoms, root.plan) == (cause.id, ["bench-launch-bound"],
                                                           ["unset-cuda-launch-blocking-process"])


@pytest.mark.parametrize("without,word", [(17.0, "measured harmless"), (40.0, "helps here")])
def test_a_switch_measured_harmless_or_helpful_is_info(without, word):
    finding = judged(ab(18.0, without))["env-switch-slows:CUDA_LAUNCH_BLOCKING"]
    assert finding.status is Status.INFO and word in finding.message and not finding.fix


def test_a_re_run_that_failed_cannot_tell():
    finding = judged(ab(18.0, 6.0, state="crashed"))["env-switch-slows:CUDA_LAUNCH_BLOCKING"]
    assert finding.status is Status.INFO and "could not tell" in finding.message


def test_a_switch_no_longer_set_is_not_reported():
    assert judged(ab(18.0, 6.0), env={})["env-switch-slows"].status is Status.OK


def test_the_static_logging_warning_is_refuted_when_the_switch_measured_harmless():
    observations = Observations(env=dict(BLOCKING))
    observations.add_probe(PROBE_KEY, ab(18.0, 17.0))
    facts = interpret(observations)
    static = [f for f in REGISTRY.checks if f.id == "gpu-library-logging-enabled"][0]().run(facts)
    staged = run_stages([BenchStage()], REGISTRY, facts, static if isinstance(static, list) else [static],
                        replay=True)
    refuted = next(f for f in staged.findings if f.id == "gpu-library-logging-enabled:CUDA_LAUNCH_BLOCKING")
    assert refuted.status is Status.INFO and refuted.refuted_by[0]["kind"] == "bench-switch-ab"
    assert facts.get(FACT)["switch_ab"]["runs"]


# -- for real, on the CPU device --------------------------------------------------------------------------------


def test_omp_num_threads_is_re_run_without_on_the_cpu_and_both_figures_are_reported(doctor, isolated_env):
    env = dict(isolated_env, OMP_NUM_THREADS="1")
    done = doctor("bench", "--preset", "tiny", "--device", "cpu", "--section", "compare", "--json", env=env,
                  timeout=240)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    (run,) = report["results"]["switch_ab"]["runs"]
    assert run["variable"] == "OMP_NUM_THREADS" and run["sections"] == ["compare"]
    assert report["results"]["header"]["cpu"]["threads_set_by"] == "OMP_NUM_THREADS"
    assert run["results"]["sections"]["compare"]["state"] == "ok"
    (comparison,) = report["analysis"]["observed"]["switches"]
    keys = {f["key"] for f in comparison["figures"]}
    assert {"compare.matmul.cpu", "compare.cnn.cpu"} <= keys
    assert all(f["with"] > 0 and f["without"] > 0 for f in comparison["figures"])
    finding = next(f for f in report["findings"] if f["id"] == "env-switch-slows:OMP_NUM_THREADS")
    assert finding["status"] == ("warn" if comparison["slows"] else "info")
    assert any("without it against" in line for line in finding["evidence"])
    assert report["results"]["live"]["samples"][0]["marks"] == ["before"]
