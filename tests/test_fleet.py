"""The fleet diff over recorded node reports, `rocm-doctor fleet diff`, and a two-node torchrun launch on localhost."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rocm_doctor.distributed.fleet import FLEET_KIND, diff
from rocm_doctor.report.fleet_view import render_table

FLEET = Path(__file__).parent / "fixtures" / "fleet"
NODES = ["gpu-node-01", "gpu-node-02", "gpu-node-03"]


def load():
    return [json.loads((FLEET / f"{name}.json").read_text()) for name in NODES]


def test_fixtures_are_real_diagnoses_with_one_odd_node():
    nodes = load()
    assert [n["node"]["hostname"] for n in nodes] == NODES
    assert all(n["summary"]["gpus"] == ["NVIDIA H200"] for n in nodes)
    assert nodes[2]["summary"]["env"]["NCCL_P2P_DISABLE"] == "1"
    assert all(n["summary"]["env"]["NCCL_NVLS_ENABLE"] == "0" for n in nodes)


def test_diff_names_the_odd_node_and_what_differs():
    fleet = diff(load())
    assert fleet["kind"] == FLEET_KIND
    fields = {d["field"]: d for d in fleet["differences"]}
    assert set(fields) == {"torch", "torch_cuda", "driver_nvidia", "env.NCCL_P2P_DISABLE"}
    assert all(d["odd"] == ["gpu-node-03"] for d in fields.values())
    assert fields["torch"]["majority"] == "2.11.0+cu130"
    assert fields["torch"]["values"]["gpu-node-03"] == "2.10.0+cu128"
    checks = {d["check"]: d for d in fleet["finding_differences"]}
    assert checks["nccl-transport-disabled"]["statuses"] == {"gpu-node-01": "info", "gpu-node-02": "info",
                                                             "gpu-node-03": "warn"}
    (all_reduce,) = [b for b in fleet["bandwidth"] if b["op"] == "all_reduce"]
    assert all_reduce["odd"] == ["gpu-node-03"]
    assert [o["node"] for o in fleet["odd_nodes"]] == ["gpu-node-03"]
    assert "env.NCCL_NVLS_ENABLE" in fleet["same"]
    table = render_table(fleet)
    assert "2.10.0+cu128*" in table and "gpu-node-03: 8 difference(s)" in table


def test_same_nodes_show_no_difference_and_two_nodes_name_no_culprit():
    nodes = load()
    fleet = diff([nodes[0], nodes[1]])
    assert fleet["differences"] == [] and fleet["finding_differences"] == [] and fleet["odd_nodes"] == []
    pair = diff([nodes[0], nodes[2]])
    assert pair["differences"] and pair["odd_nodes"] == [] and all(d["odd"] == [] for d in pair["differences"])


def test_a_fleet_report_is_diffed_again_through_its_nodes():
    fleet = diff(load())
    again = diff([json.loads(json.dumps(fleet, default=str))])
    assert [n["name"] for n in again["nodes"]] == NODES
    assert {d["field"] for d in again["differences"]} == {d["field"] for d in fleet["differences"]}


def run_cli(*args, env=None):
    env = dict(os.environ if env is None else env)
    return subprocess.run([sys.executable, "-m", "rocm_doctor", *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=tempfile.gettempdir())  # not the checkout: the installed package runs


def test_fleet_diff_cli(tmp_path):
    out = tmp_path / "fleet.json"
    proc = run_cli("fleet", "diff", *[str(FLEET / f"{n}.json") for n in NODES], "-o", str(out))
    assert proc.returncode == 1, proc.stderr  # differences found
    assert "gpu-node-03" in proc.stdout and "env.NCCL_P2P_DISABLE" in proc.stdout
    assert json.loads(out.read_text())["odd_nodes"][0]["node"] == "gpu-node-03"
    same = run_cli("fleet", "diff", str(FLEET / "gpu-node-01.json"), str(FLEET / "gpu-node-02.json"), "--json")
    assert same.returncode == 0 and json.loads(same.stdout)["differences"] == []
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    assert run_cli("fleet", "diff", str(bad)).returncode == 2


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_two_node_torchrun_launch_on_localhost(tmp_path):
    pytest.importorskip("torch.distributed.run")
    port = free_port()
    out = tmp_path / "fleet.json"
    env = {k: v for k, v in os.environ.items() if k != "ROCM_DOCTOR_TEST_FAULT"}
    env["NCCL_P2P_DISABLE"] = "1"  # shows up in both node reports (same on both: not a difference)
    procs = []
    for node_rank in (0, 1):
        argv = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", str(node_rank),
                "--nproc-per-node", "1", "--master-addr", "127.0.0.1", "--master-port", str(port),
                "-m", "rocm_doctor.distributed", "-o", str(out), "--collectives", "--device", "cpu",
                "--preset", "tiny", "--op-timeout", "20", "--startup-timeout", "60", "--timeout", "120"]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
                                      start_new_session=True))
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=150)[0].decode(errors="replace"))
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
    assert all(p.returncode == 0 for p in procs), outputs[0][-3000:] + outputs[1][-3000:]
    fleet = json.loads(out.read_text())
    assert len(fleet["nodes"]) == 2 and {n["node_rank"] for n in fleet["nodes"]} == {0, 1}
    assert all(r["report"]["findings"] for r in fleet["node_reports"])
    assert all(r["summary"]["env"].get("NCCL_P2P_DISABLE") == "1" for r in fleet["node_reports"])
    world = fleet["world_collectives"]
    assert world["state"] == "ok" and world["world_size"] == 2 and world["backend"] == "gloo"
    assert all(r["correct"] for r in world["results"])
    assert (out.with_suffix(".txt")).read_text().startswith("Fleet: 2 node(s)")
    assert "World collectives: 2 ranks, gloo: ok" in outputs[0]
