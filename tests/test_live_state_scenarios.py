"""Live GPU state and visibility judged against the real GPUs: snapshots recorded on a real H200 with
benchmarks/run_live_state.sh (idle; a second process holding 93% of the memory and spinning a matmul; a
CUDA_VISIBLE_DEVICES UUID of no GPU) replayed with `check --from`, UUID judgement cases, and end-to-end runs with a
fake nvidia-smi on PATH printing the recorded outputs."""

import json
from pathlib import Path

import pytest

from rocm_doctor.parsers.nvidia_smi import GPU_FIELDS
from rocm_doctor.testing import Case, run_case

SNAPSHOTS = Path(__file__).parent / "snapshots"
NV = Path(__file__).parent / "fixtures" / "nvidia-smi"
H200_UUID = "GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0"
BAD_UUID = "GPU-00000000-1111-2222-3333-444444444444"
PROBLEMS = ("warn", "fail", "error")



def test_another_process_holding_most_of_an_h200_is_the_first_root_cause(replayed):
    report = replayed("linux-h200-other-process-holds-93pct-of-memory")
    root = report["diagnosis"]["root_causes"][0]
    assert root["finding"] == "gpu-memory-held:0" and root["status"] == "fail"
    assert "pid 736 (python3): 133648 MiB" in root["message"] and "(93%)" in root["message"]
    assert root["symptoms"] == ["gpu-other-process:0"]
    held = next(f for f in report["findings"] if f["id"] == "gpu-memory-held:0")
    assert any("kill 736" in line for line in held["remediation"])


def test_a_uuid_that_matches_no_gpu_explains_torch_seeing_none(replayed):
    report = replayed("linux-h200-cuda-visible-devices-uuid-of-no-gpu")
    (root,) = report["diagnosis"]["root_causes"]
    assert root["finding"] == "gpu-visibility-unknown-id:CUDA_VISIBLE_DEVICES"
    assert root["symptoms"] == ["torch-cuda-unavailable"]
    steps = [s for s in report["diagnosis"]["plan"] if s["id"] in root["plan"]]
    assert [(s["step"]["kind"], s["step"]["name"]) for s in steps] == [("unset_env", "CUDA_VISIBLE_DEVICES")]
    finding = next(f for f in report["findings"] if f["id"] == root["finding"])
    assert any("GPU-e18b29f7-17a0-c1fd-9673-feb6ae6954b6" in line for line in finding["evidence"])


@pytest.mark.parametrize("name", ["linux-h200-live-state-idle-healthy", "linux-2x-h200-cuda-torch2.11"])
def test_healthy_h200s_raise_nothing_at_warn_or_above(replayed, name):
    report = replayed(name)
    assert [f["id"] for f in report["findings"] if f["status"] in PROBLEMS] == []


def live(gpus):
    return {"gpu.live": {"gpus": gpus, "processes": [], "sources": {"nvidia-smi": "ok"}}}


H200 = {"vendor": "nvidia", "index": 0, "uuid": H200_UUID, "name": "NVIDIA H200", "mig_devices": []}
A100_MIG = {"vendor": "nvidia", "index": 0, "uuid": "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16", "name": "A100",
            "mig_devices": [{"profile": "1g.10gb", "device": 0, "uuid": "MIG-feb88891-0321-5fef-9c87-d4af3b54259e"}]}
CHECK = "gpu-visibility-unknown-id"


@pytest.mark.parametrize("value,gpu,status", [
    (BAD_UUID, H200, "fail"),
    (f"{BAD_UUID},0", H200, "fail"),  # the runtime stops at the first entry that names nothing
    (f"0,{BAD_UUID}", H200, "warn"),
    (H200_UUID, H200, "ok"),
    ("GPU-ea8e14dc", H200, "ok"),  # CUDA takes a unique prefix
    ("MIG-feb88891-0321-5fef-9c87-d4af3b54259e", A100_MIG, "ok"),
    ("MIG-GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16/1/0", A100_MIG, "ok"),  # the pre-R470 MIG form
    ("MIG-00000000-0321-5fef-9c87-d4af3b54259e", A100_MIG, "fail"),
])
def test_cuda_visible_devices_uuids_against_nvidia_smi(value, gpu, status):
    run_case(Case(check=CHECK, env={"CUDA_VISIBLE_DEVICES": value}, facts=live([gpu]),
                  expect={f"{CHECK}:CUDA_VISIBLE_DEVICES": status}))


def test_the_failure_lists_the_real_ids():
    (finding,) = run_case(Case(check=CHECK, env={"CUDA_VISIBLE_DEVICES": BAD_UUID}, facts=live([H200]),
                               expect={f"{CHECK}:CUDA_VISIBLE_DEVICES": "fail"}, text=f"GPU 0 (NVIDIA H200): {H200_UUID}"))
    assert finding.fix[0].kind == "unset_env"


def test_without_a_uuid_list_it_says_it_cannot_tell():
    (finding,) = run_case(Case(check=CHECK, env={"CUDA_VISIBLE_DEVICES": BAD_UUID},
                               expect={f"{CHECK}:CUDA_VISIBLE_DEVICES": "skip"}))
    assert "nvidia-smi listed no GPU UUIDs" in finding.message


ROCMINFO_GPU = {"device_type": "GPU", "uuid": "GPU-d3a4b08172fa4a0c", "marketing_name": "AMD Instinct MI100"}
KFD_GPU = {"node": 1, "kind": "gpu", "name": "gfx908", "gfx": "gfx908"}


def test_hip_visible_devices_uuid_against_rocminfo():
    run_case(Case(check=CHECK, env={"HIP_VISIBLE_DEVICES": "GPU-0000000000000000"},
                  facts={"rocminfo.agents": [ROCMINFO_GPU]}, expect={f"{CHECK}:HIP_VISIBLE_DEVICES": "fail"}))
    run_case(Case(check=CHECK, env={"HIP_VISIBLE_DEVICES": "GPU-d3a4b08172fa4a0c"},
                  facts={"rocminfo.agents": [ROCMINFO_GPU]}, expect={f"{CHECK}:HIP_VISIBLE_DEVICES": "ok"}))


def test_rocr_visible_devices_uuid_that_leaves_rocminfo_without_a_gpu_while_kfd_has_one():
    facts = {"kfd.nodes": [KFD_GPU], "rocminfo.status": {"state": "ok"}, "rocminfo.agents": [{"device_type": "CPU"}]}
    run_case(Case(check=CHECK, env={"ROCR_VISIBLE_DEVICES": "GPU-0000000000000000"}, facts=facts,
                  expect={f"{CHECK}:ROCR_VISIBLE_DEVICES": "fail"}, text="KFD lists 1"))
    run_case(Case(check=CHECK, env={"ROCR_VISIBLE_DEVICES": "GPU-d3a4b08172fa4a0c"},
                  facts={**facts, "rocminfo.agents": [ROCMINFO_GPU]}, expect={f"{CHECK}:ROCR_VISIBLE_DEVICES": "skip"}))


def test_an_index_past_the_gpus_nvidia_smi_lists_fails_when_pci_is_hidden():
    """In a container without the PCI tree the count comes from nvidia-smi."""
    run_case(Case(check="gpu-visibility-env", env={"CUDA_VISIBLE_DEVICES": "1"}, facts={**live([H200]), "gpu.pci": []},
                  expect={"gpu-visibility-env:CUDA_VISIBLE_DEVICES": "fail"}, text="nvidia-smi 1"))


def fake_nvidia_smi(fake_bin, query, apps="", reject=None):
    """nvidia-smi printing recorded outputs; with `reject`, it refuses that field the way an older driver does."""
    refuse = (f'case "$*" in *{reject}*) echo \'Field "{reject}" is not a valid field to query.\'; echo; exit 2;; '
              "esac\n") if reject else ""
    fake_bin.add("nvidia-smi", refuse + f"""case "$*" in
      *query-gpu*) cat '{query}' ;;
      *query-compute-apps*) {f"cat '{NV / apps}'" if apps else "true"} ;;
      -L) cat '{NV / "linux-h200-driver580-list.txt"}' ;;
    esac
    """)


def findings(doctor, env):
    result = doctor("check", "--no-gpu", "--json", env=env)
    assert result.returncode in (0, 1), result.stderr
    return {f["id"]: f for f in json.loads(result.stdout)["findings"]}


def test_end_to_end_another_process_on_a_fake_nvidia_smi(doctor, fake_bin, isolated_env):
    fake_nvidia_smi(fake_bin, NV / "linux-h200-driver580-query-gpu-busy-other-process.txt",
                    "linux-h200-driver580-compute-apps-busy-other-process.txt")
    found = findings(doctor, isolated_env)
    assert found["gpu-memory-held:0"]["status"] == "warn" and "pid 461 (python3)" in found["gpu-memory-held:0"]["message"]
    assert found["gpu-other-process:0"]["status"] == "warn"
    assert found["gpu-throttling:0"]["status"] == "info"


def test_end_to_end_bad_uuid_and_a_driver_without_one_field(doctor, fake_bin, isolated_env, tmp_path):
    cells = (NV / "linux-h200-driver580-query-gpu-idle.txt").read_text().strip().split(", ")
    del cells[GPU_FIELDS.index("mig.mode.current")]  # what a driver without that field prints
    (tmp_path / "query.txt").write_text(", ".join(cells) + "\n")
    fake_nvidia_smi(fake_bin, tmp_path / "query.txt", reject="mig.mode.current")
    found = findings(doctor, dict(isolated_env, CUDA_VISIBLE_DEVICES=BAD_UUID))
    assert found[f"{CHECK}:CUDA_VISIBLE_DEVICES"]["status"] == "fail"
    assert found["gpu-mig-enabled"]["status"] == "skip"  # the field was dropped and the query asked again
    assert found["gpu-clocks-held-low"]["status"] == "ok"
