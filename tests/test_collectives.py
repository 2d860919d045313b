"""Collectives across local processes (gloo on CPU), the busbw formulas, and the multi-GPU checks on facts."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time

import pytest

from rocm_doctor.checks import collectives_expectations as expectations
from rocm_doctor.knowledge.collectives_env import transport_settings
from rocm_doctor.parsers.collectives_formulas import algbw_gbs, bus_factor, busbw_gbs
from rocm_doctor.distributed.launch import Watchdogs
from rocm_doctor.distributed.local import LocalOptions, run_local
from rocm_doctor.distributed.results import assemble, describe_hang
from rocm_doctor.diagnose import judge_recorded
from rocm_doctor.distributed.stage import CollectivesStage
from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.engine.model import Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.interpret import run_env
from rocm_doctor.facts.observations import Observations

try:
    importlib.import_module("torch")  # only to know whether the CPU runs can happen; the doctor never imports it

    HAVE_TORCH = True
except Exception:  # pragma: no cover
    HAVE_TORCH = False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed in the test interpreter")


# ------------------------------------------------------------------------------------------ formulas


@pytest.mark.parametrize("op,n,factor", [("all_reduce", 2, 1.0), ("all_reduce", 8, 1.75), ("all_reduce", 1, 0.0),
                                         ("all_gather", 2, 0.5), ("all_gather", 8, 0.875), ("broadcast", 8, 1.0),
                                         ("reduce_scatter", 4, 0.75)])
def test_bus_factor_matches_nccl_tests(op, n, factor):
    assert bus_factor(op, n) == pytest.approx(factor)


def test_algbw_and_busbw():
    # 1 GB in 10 ms is 100 GB/s algbw; all-reduce on 8 ranks: x 2*7/8
    assert algbw_gbs(1e9, 0.01) == pytest.approx(100.0)
    assert busbw_gbs("all_reduce", 1e9, 0.01, 8) == pytest.approx(175.0)
    assert busbw_gbs("all_gather", 1e9, 0.01, 4) == pytest.approx(75.0)
    assert busbw_gbs("broadcast", 1e9, 0.01, 4) == pytest.approx(100.0)
    assert algbw_gbs(1e9, 0) is None
    with pytest.raises(ValueError):
        bus_factor("gather_scatter", 2)


def test_op_size_counts_the_whole_all_gather_array():
    """The sizes the collectives child measures (it runs stand-alone, so it is loaded here by path)."""
    saved = sys.modules.get("_doctor_childlib")
    path = os.path.join(os.path.dirname(__file__), os.pardir, "rocm_doctor", "distributed", "_collectives_child.py")
    spec = importlib.util.spec_from_file_location("_doctor_collectives_child_under_test", path)
    child = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(child)
    finally:
        if saved is None:
            sys.modules.pop("_doctor_childlib", None)
        else:
            sys.modules["_doctor_childlib"] = saved
    assert child.op_size("all_reduce", 1024, 3) == (1024, 256)
    nbytes, per_rank = child.op_size("all_gather", 1024, 3)
    assert per_rank == 85 and nbytes == 85 * 3 * 4


def test_expectations_only_where_sources_have_figures():
    h200 = ["NVIDIA H200"] * 8
    assert expectations.allreduce_expectation(h200, 8, nvls_enabled=False)["busbw_gbs"] == 365.6
    assert expectations.allreduce_expectation(h200, 8, nvls_enabled=True)["busbw_gbs"] == 473.1
    assert expectations.allreduce_expectation(["NVIDIA H200"] * 2, 2, nvls_enabled=False) is None
    assert expectations.allreduce_expectation(["AMD Instinct MI300X"] * 2, 2, False)["busbw_gbs"] == 47.7
    assert expectations.allreduce_expectation(["NVIDIA H100 PCIe"] * 8, 8, False) is None
    assert expectations.allreduce_expectation(h200, 8, False, scope="world") is None
    assert expectations.peer_copy_expectation(["NVIDIA H200", "NVIDIA H200"])["gbs"] == 396.40


# ------------------------------------------------------------------------------------------ checks on facts


def facts_with(results=None, env=None, cmdline=None, extra=None):
    observations = Observations()
    observations.env = dict(env or {})
    facts = Facts(observations)
    facts.set("platform.os", "linux")
    run_env.interpret(observations, facts)  # the environment given is the one seen
    if results is not None:
        facts.set("collectives.results", results)
    if cmdline is not None:
        facts.set("linux.kernel_cmdline", {"raw": cmdline})
    for key, value in (extra or {}).items():
        facts.set(key, value)
    return facts


def judge(results):
    """The findings of `results` judged through the pipeline, as `bench --collectives` judges them."""
    return judge_recorded(CollectivesStage(), results)[0].findings


def static(check_id, facts):
    """One of the collectives' static checks (the NCCL/RCCL variables, the kernel command line) on `facts`."""
    return run_one(load_registry(include_plugins=False).by_id(check_id), facts)


def by_check(findings):
    out = {}
    for f in findings:
        out.setdefault(f.check, []).append(f)
    return out


def gpu_results(busbw, names=("NVIDIA H200",) * 8, world=8, matrix=None, copies=None, env=None):
    rows = [{"op": "all_reduce", "bytes": 1 << 30, "size": "1 GiB", "busbw_gbs": busbw, "algbw_gbs": busbw / 1.75,
             "correct": True}]
    return {"ran": True, "state": "ok", "device": "cuda", "backend": "nccl", "world_size": world, "scope": "local",
            "devices": [{"name": n} for n in names], "results": rows, "env": env or {},
            "peers": {"matrix": matrix, "copies": copies or [], "convention": "bytes once / time"}}


def test_bandwidth_far_under_the_published_figure_fails():
    findings = by_check(judge(gpu_results(50.0, env={"NCCL_NVLS_ENABLE": "0"})))
    (bw,) = findings["collective-bandwidth-low"]
    assert bw.status is Status.FAIL and "365.6" in bw.message and "NVLS off" in bw.message
    (bw,) = by_check(judge(gpu_results(150.0)))["collective-bandwidth-low"]  # NVLS on by default
    assert bw.status is Status.WARN and "473.1" in bw.message
    findings = by_check(judge(gpu_results(330.0)))
    assert findings["collective-bandwidth-low"][0].status is Status.OK


def test_two_h200_have_no_expectation_and_show_raw_figures():
    results = gpu_results(300.0, names=("NVIDIA H200",) * 2, world=2)
    (bw,) = by_check(judge(results))["collective-bandwidth-low"]
    assert bw.status is Status.INFO and "no published" in bw.message and "300.0" in bw.message


def test_peer_access_missing_and_slow_pair():
    matrix = [[None, True, False], [True, None, True], [False, True, None]]
    copies = [{"src": 0, "dst": 1, "gbs": 380.0}, {"src": 0, "dst": 2, "gbs": 20.0}, {"src": 1, "dst": 0, "gbs": 385.0},
              {"src": 1, "dst": 2, "gbs": 381.0}, {"src": 2, "dst": 0, "gbs": 21.0}, {"src": 2, "dst": 1, "gbs": 383.0}]
    results = gpu_results(300.0, names=("NVIDIA H200",) * 3, world=3, matrix=matrix, copies=copies)
    findings = by_check(judge(results))
    (peer,) = findings["gpu-peer-access-missing"]
    assert peer.status is Status.FAIL and "0->2" in peer.message and "2->0" in peer.message
    (bw,) = findings["collective-bandwidth-low"]
    assert bw.status is Status.FAIL and "GPU 0 -> GPU 2" in " ".join(bw.evidence)


def test_checks_skip_with_the_reason_when_not_run():
    findings = by_check(judge({"ran": False, "state": "not-run", "detail": "only one GPU is visible"}))
    for check in ("collective-hang", "collective-wrong-result", "collective-bandwidth-low"):
        assert findings[check][0].status is Status.SKIP and "only one GPU" in findings[check][0].message


def test_nccl_transport_variables():
    env = {"NCCL_P2P_DISABLE": "1", "NCCL_NVLS_ENABLE": "0", "NCCL_IB_DISABLE": "1", "NCCL_ALGO": "Tree",
           "NCCL_P2P_LEVEL": "LOC"}
    levels = {s["name"]: s["level"] for s in transport_settings(env)}
    assert levels == {"NCCL_P2P_DISABLE": "warn", "NCCL_P2P_LEVEL": "warn", "NCCL_IB_DISABLE": "info",
                      "NCCL_ALGO": "info", "NCCL_NVLS_ENABLE": "info"}
    findings = static("nccl-transport-disabled", facts_with(env=env))
    statuses = {f.id: f.status for f in findings}
    assert statuses["nccl-transport-disabled:NCCL_NVLS_ENABLE"] is Status.INFO
    assert statuses["nccl-transport-disabled:NCCL_P2P_DISABLE"] is Status.WARN
    clean = static("nccl-transport-disabled", facts_with(env={"NCCL_NVLS_ENABLE": "1"}))
    assert [f.status for f in clean] == [Status.OK]


@pytest.mark.parametrize("cmdline,status", [("quiet amd_iommu=on", Status.WARN), ("amd_iommu=on iommu=pt", Status.OK),
                                            ("quiet", Status.INFO), ("intel_iommu=off", Status.OK)])
def test_iommu_on_amd_multi_gpu(cmdline, status):
    facts = facts_with(cmdline=cmdline, extra={"torch.hip": "6.4", "torch.device_count": 2})
    (finding,) = static("iommu-multi-gpu-hang-risk", facts)
    assert finding.status is status


def test_iommu_needs_two_amd_gpus():
    facts = facts_with(cmdline="amd_iommu=on", extra={"torch.cuda_version": "13.0", "torch.device_count": 2})
    (finding,) = static("iommu-multi-gpu-hang-risk", facts)
    assert finding.status is Status.SKIP


def test_hang_description_names_the_op_and_the_lagging_rank():
    ranks = [
        {"rank": 0, "records": [{"coll": "ready"}, {"coll": "begin", "op": "all_reduce", "bytes": 1024, "phase": "warmup"}]},
        {"rank": 1, "records": [{"coll": "ready"}]},
        {"rank": 2, "records": [{"coll": "ready"}, {"coll": "begin", "op": "all_reduce", "bytes": 1024, "phase": "warmup"}]},
    ]
    hang = describe_hang(ranks, "no rank made progress for 5 s")
    assert hang["op"] == "all_reduce" and hang["waiting_ranks"] == [0, 2] and hang["lagging_ranks"] == [1]
    results = assemble([dict(r, state="killed") for r in ranks], world_size=3, device="cpu", backend="gloo",
                       watchdog="no rank made progress for 5 s", watchdog_kind="progress")
    assert results["state"] == "hung"
    (finding,) = by_check(judge(results))["collective-hang"]
    assert finding.status is Status.FAIL and "all_reduce of 1 KiB" in finding.message


# ------------------------------------------------------------------------------------------ real runs (gloo on CPU)


def fault_env(fault=None):
    env = dict(os.environ)
    env.pop("ROCM_DOCTOR_TEST_FAULT", None)
    if fault:
        env["ROCM_DOCTOR_TEST_FAULT"] = fault
    return env


@needs_torch
@pytest.mark.slow
def test_stalled_rank_becomes_a_hang_finding_in_bounded_time():
    started = time.monotonic()
    results = run_local(sys.executable, LocalOptions(device="cpu", preset="tiny", world_size=3,
                                                     env=fault_env("stall:rank1"),
                                                     watchdogs=Watchdogs(op_s=3, grace_s=2, startup_s=60)))
    assert time.monotonic() - started < 60
    assert results["state"] == "hung"
    hang = results["hang"]
    assert hang["op"] == "all_reduce" and hang["bytes"] == 1024 and hang["lagging_ranks"] == [1]
    assert hang["waiting_ranks"] == [0, 2]
    assert all(r["state"] == "killed" for r in results["ranks"])
    findings = by_check(judge(results))
    (hang_finding,) = findings["collective-hang"]
    assert hang_finding.status is Status.FAIL
    assert "rank 1 stopped before all_reduce of 1 KiB" in hang_finding.message


@needs_torch
@pytest.mark.slow
def test_corrupted_rank_becomes_a_wrong_result_finding():
    results = run_local(sys.executable, LocalOptions(device="cpu", preset="tiny", world_size=3,
                                                     env=fault_env("corrupt:rank2"),
                                                     watchdogs=Watchdogs(op_s=30, startup_s=60)))
    assert results["state"] == "ok"
    rows = {(r["op"], r["bytes"]): r for r in results["results"]}
    assert all(not r["correct"] for (op, _), r in rows.items() if op in ("all_reduce", "all_gather"))
    assert all(r["correct"] for (op, _), r in rows.items() if op == "broadcast")  # root 0 is not the corrupt rank
    assert all(r["bad_source_ranks"] == [2] for (op, _), r in rows.items() if op == "all_gather")
    assert results["random_check"]["correct"] is False
    findings = by_check(judge(results))
    (wrong,) = findings["collective-wrong-result"]
    assert wrong.status is Status.FAIL and "rank(s) 2" in wrong.message
    assert findings["collective-hang"][0].status is Status.OK
    assert all(r["busbw_gbs"] is not None and r["busbw_gbs"] > 0 for r in results["results"])


@needs_torch
@pytest.mark.slow
def test_bench_collectives_cli_on_cpu(tmp_path):
    env = fault_env()
    proc = subprocess.run([sys.executable, "-m", "rocm_doctor", "bench", "--collectives", "--device", "cpu",
                           "--preset", "tiny", "--json", "--python", sys.executable],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["kind"] == "bench-collectives"
    results = data["results"]
    assert results["state"] == "ok" and results["world_size"] == 2 and results["backend"] == "gloo"
    assert {r["op"] for r in results["results"]} == {"all_reduce", "all_gather", "broadcast"}
    assert all(r["correct"] for r in results["results"]) and results["random_check"]["correct"]
    ar = next(r for r in results["results"] if r["op"] == "all_reduce")
    # busbw = algbw x 2(n-1)/n with n = 2, algbw = bytes / mean time
    assert ar["busbw_gbs"] == pytest.approx(ar["algbw_gbs"], rel=1e-3)
    assert ar["algbw_gbs"] == pytest.approx(ar["bytes"] / (ar["time_us"] * 1e-6) / 1e9, rel=1e-2)
    statuses = {f["check"]: f["status"] for f in data["findings"]}
    assert statuses["collective-hang"] == "ok" and statuses["collective-wrong-result"] == "ok"
