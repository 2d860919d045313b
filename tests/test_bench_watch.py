"""The live GPU state watched around the stages and the bench sections: the parent's cheap sample, its reading, the
marks a bench run leaves, and figures measured while the GPU was shared or throttled, on the real recorded H200
nvidia-smi outputs of tests/fixtures (a variant changes one field of a real line and says which)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocm_doctor.engine.model import Status
from rocm_doctor.engine.pipeline import Stage, apply_evidence, run_stages
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.gpu.bench import interference
from rocm_doctor.gpu.bench.harness import run_bench
from rocm_doctor.gpu.bench.plan import build
from rocm_doctor.gpu.bench.session import Watch
from rocm_doctor.testing.stages import bench_analysis as analyze, bench_findings as findings
from rocm_doctor.checks.bench_judge import NOT_EXPLAINED
from rocm_doctor.interpret.live_sample import read
from rocm_doctor.parsers.nvidia_smi import APP_FIELDS, GPU_FIELDS
from rocm_doctor.probes.gpu_sample import FIELDS, sampler

NV = Path(__file__).parent / "fixtures" / "nvidia-smi"
IDLE = (NV / "linux-h200-driver580-query-gpu-idle.txt").read_text()
BUSY = (NV / "linux-h200-driver580-query-gpu-busy-other-process.txt").read_text()
APPS = (NV / "linux-h200-driver580-compute-apps-busy-other-process.txt").read_text()
H200 = {"type": "cuda", "index": 0, "name": "NVIDIA H200", "major": 9, "minor": 0}
MATMUL = [{"bench": "matmul", "dtype": d, "m": 4096, "n": 4096, "k": 4096, "median_tflops": t, "best_tflops": t}
          for d, t in (("fp32", 20.0), ("tf32", 150.0), ("fp16", 300.0), ("bf16", 310.0))]


def command(argv, stdout):
    return {"argv": argv, "returncode": 0, "stdout": stdout, "stderr": "", "duration_s": 0.05, "timed_out": False,
            "error": None, "timeout_s": 5.0}


def field(line: str, name: str, value: str) -> str:
    """A real query line with one field changed."""
    cells = line.strip().split(", ")
    cells[GPU_FIELDS.index(name)] = value
    return ", ".join(cells) + "\n"


def sample(query, apps="", *marks):
    return {"commands": {
        "nvidia-smi-query-gpu": command(["nvidia-smi", "--query-gpu=" + ",".join(GPU_FIELDS)], query),
        "nvidia-smi-compute-apps": command(["nvidia-smi", "--query-compute-apps=" + ",".join(APP_FIELDS)], apps)},
        "files": {}, "probes": {"gpu.live.self": {"pid": 900}}, "seconds": 0.05, "marks": list(marks or ["before"])}


def results(samples, sections=None):
    return {"schema": 1, "preset": "quick", "env": {},
            "header": {"device": H200, "import": {"ok": True, "version": "2.11", "hip": None, "cuda": "13.0"},
                       "cpu": {"threads": 16}},
            "sections": {name: {"state": "ok", "detail": "completed", "seconds": 1.0, "records": recs}
                         for name, recs in (sections or {"matmul": MATMUL}).items()},
            "live": {"samples": samples}, "switch_ab": {"set": [], "runs": [], "not_run": []}}


def around(query, apps="", before=None):
    """Samples before the run and at the start and end of the matmul section."""
    first = before if before is not None else (query, apps)
    return [sample(*first, "before"), sample(query, apps, "matmul.start"), sample(query, apps, "matmul.end")]


def line(analysis, key):
    return next(l for l in analysis["lines"] if l["key"] == key)


# -- the sample -------------------------------------------------------------------------------------------------


def test_the_sampler_runs_one_gpu_query_and_one_process_query_and_tells_own_children(fake_bin):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        values = dict(zip(GPU_FIELDS, BUSY.strip().split(", ")), **{"pci.bus_id": "00000000:19:00.0"})
        row = ", ".join(values[name] for name in FIELDS)
        fake_bin.add("nvidia-smi", f"""\
            case "$1" in
              --query-gpu=*) echo '{row}' ;;
              --query-compute-apps=*) echo 'GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0, {child.pid}, python3, 512' ;;
            esac
            """)
        taken = sampler({"PATH": str(fake_bin.path)}, "linux")()
    finally:
        child.kill()
        child.wait()
    assert sorted(taken["commands"]) == ["nvidia-smi-compute-apps", "nvidia-smi-query-gpu"]
    assert f"/proc/{child.pid}/status" in taken["files"] and taken["seconds"] >= 0
    state, why = read(taken)
    assert why == "" and state["gpus"][0]["bdf"] == "00000000:19:00.0" and state["gpus"][0]["utilization_pct"] == 100
    assert state["processes"][0]["pid"] == child.pid and state["processes"][0]["own"] is True


def test_a_sample_without_any_tool_says_why():
    state, why = read(sampler({"PATH": "/nonexistent"}, "linux")())
    assert state is None and why == "nvidia-smi not found on PATH"


def test_a_section_start_right_after_an_end_shares_its_sample():
    taken = []
    watch = Watch(lambda: taken.append(1) or {"seconds": 0.0})
    hook = watch.hook(None)
    for record in ({"bench": "section_start", "section": "matmul"}, {"bench": "section_end", "section": "matmul"},
                   {"bench": "section_start", "section": "memory"}, {"bench": "section_timeout", "section": "memory"}):
        hook(record)
    assert [s["marks"] for s in watch.record()["samples"]] == [["matmul.start"], ["matmul.end", "memory.start"],
                                                               ["memory.end"]]
    assert Watch(None).record() == {"samples": [], "reason": "the live GPU state was not sampled in this run"}


def test_a_busy_first_sample_is_taken_again_once_the_doctors_own_work_drained(monkeypatch):
    monkeypatch.setattr("rocm_doctor.gpu.bench.session.SETTLE_S", 0)
    queue = [sample(field(IDLE, "utilization.gpu", "60")), sample(IDLE)]
    watch = Watch(lambda: queue.pop(0))
    watch.baseline()
    assert [s["marks"] for s in watch.samples] == [["before.first"], ["before"]]


# -- figures measured while the GPU was shared or throttled ----------------------------------------------------


def test_a_figure_measured_while_another_process_computed_names_it_and_stays_a_warning():
    shared = results(around(BUSY, APPS))
    assert "pid 461 (python3, 123882 MiB)" in line(analyze(shared), "matmul.fp32")["unreliable"]
    (finding,) = [f for f in findings(shared) if f.check == "bench-matmul-low"]
    assert finding.status is Status.WARN  # very low, but measured on a shared GPU
    assert "measured while pid 461 (python3, 123882 MiB) was on GPU 0 (NVIDIA H200), which was 100% busy before " \
           "the benchmark started" in finding.message
    assert "BLAS" not in finding.message and "SKU" not in finding.message


def test_a_process_that_arrived_during_the_run_counts_even_on_a_gpu_idle_before():
    judged = interference.judge(results(around(BUSY, APPS, before=(IDLE, ""))))
    assert judged["sections"]["matmul"]["reasons"] == [
        "pid 461 (python3, 123882 MiB) was on GPU 0 (NVIDIA H200), having started on it after the benchmark began"]


def test_a_process_holding_memory_on_an_idle_gpu_is_only_noted():
    idle_holder = field(IDLE, "memory.used", "123891")
    judged = interference.judge(results(around(idle_holder, APPS)))
    assert judged["sections"]["matmul"]["reasons"] == []
    assert "held memory" in judged["sections"]["matmul"]["notes"][0]


@pytest.mark.parametrize("mask,words", [("0x0000000000000040", "hardware thermal slowdown"),
                                        ("0x0000000000000002", "applications-clocks setting")])
def test_throttling_in_a_section_makes_its_figures_unreliable(mask, words):
    hot = field(BUSY, "clocks_throttle_reasons.active", mask)  # the busy line with another active reason
    judged = interference.judge(results(around(hot, "", before=(IDLE, ""))))
    assert any(words in reason for reason in judged["sections"]["matmul"]["reasons"])


def test_a_power_limit_below_its_default_that_the_gpu_runs_into_counts_and_the_default_cap_does_not():
    capped = field(BUSY, "power.limit", "500.00")
    assert "power limit of 500 W, below its default 700 W" in \
        interference.judge(results(around(capped, "", before=(IDLE, ""))))["sections"]["matmul"]["reasons"][0]
    assert interference.judge(results(around(BUSY, "", before=(IDLE, ""))))["sections"]["matmul"]["reasons"] == []


def test_a_busy_gpu_with_no_process_listed_before_the_run_makes_every_figure_unreliable():
    judged = interference.judge(results(around(BUSY, "")))
    assert "no process listed on it" in judged["run"]["reasons"][0]


def test_a_low_figure_with_nothing_observed_says_so_and_what_was_sampled():
    explained = line(analyze(results(around(IDLE))), "matmul.fp32")["explanation"]
    assert explained == (f"every dtype is below what this card reaches: {NOT_EXPLAINED} (the GPU state sampled at "
                         "the start and end of the section showed no other process computing and no throttling)")
    unsampled = results([])
    assert "the live GPU state was not sampled in this run" in line(analyze(unsampled), "matmul.fp32")["explanation"]


def test_gpus_are_matched_by_pci_address_before_index():
    two = {"gpus": [{"index": 0, "bdf": "00000000:19:00.0"}, {"index": 1, "bdf": "00000000:3B:00.0"}]}
    device = dict(H200, pci_domain_id=0, pci_bus_id=0x3B, pci_device_id=0)
    assert interference.measured_gpu(two, device, {})["index"] == 1
    assert interference.measured_gpu(two, H200, {"CUDA_VISIBLE_DEVICES": "1"}) is None
    assert interference.measured_gpu(two, H200, {})["index"] == 0


# -- every stage runs between two samples ---------------------------------------------------------------------


class _Stage(Stage):
    name, probe_key, provides = "toy", "toy", ("toy.result",)

    def run(self, facts, progress=None):
        return {"ran": True}

    def interpret(self, observations, facts):
        facts.set("toy.result", observations.probes.get("toy"))


def test_a_stage_runs_between_two_samples_kept_with_its_result_and_replayed():
    facts = Facts(Observations())
    run_stages([_Stage()], load_registry(include_plugins=False), facts, [], sample=lambda: sample(IDLE))
    samples = facts.observations.probes["toy"]["live"]["samples"]
    assert [s["marks"] for s in samples] == [["before"], ["after"]] and read(samples[0])[0]["gpus"]
    replayed = Facts(Observations.from_dict(facts.observations.to_dict()))
    run_stages([_Stage()], load_registry(include_plugins=False), replayed, [], replay=True)
    assert replayed.get("toy.result")["live"] == facts.observations.probes["toy"]["live"]


def test_a_sampler_that_raises_is_recorded_and_the_stage_still_runs():
    def broken():
        raise OSError("no such device")

    facts = Facts(Observations())
    run_stages([_Stage()], load_registry(include_plugins=False), facts, [], sample=broken)
    result = facts.observations.probes["toy"]
    assert result["ran"] and result["live"]["samples"][0]["error"] == "OSError: no such device"


def test_evidence_can_name_one_finding_of_a_check():
    from rocm_doctor.engine.model import Finding

    one = Finding(check="c", id="c:A", status=Status.WARN, message="a", title="t")
    two = Finding(check="c", id="c:B", status=Status.WARN, message="b", title="t")
    out = apply_evidence([one, two], {"c:B": {"refuted": True, "kind": "k", "detail": "d"}})
    assert [f.status for f in out] == [Status.WARN, Status.INFO]


def test_the_start_sample_lets_the_held_section_go(tmp_path):
    watch = Watch(lambda: {"seconds": 0.0})
    watch.hook(None, str(tmp_path))({"bench": "section_start", "section": "launch"})
    assert (tmp_path / "launch.go").exists() and watch.samples[0]["marks"] == ["launch.start"]


def test_a_held_child_waits_for_its_go_and_goes_on_without_one(tmp_path):
    started = time.monotonic()
    out = run_bench(sys.executable, build("tiny", ("launch",)), device="cpu", hold_dir=str(tmp_path))
    assert out["sections"]["launch"]["state"] == "ok" and time.monotonic() - started >= 5
