"""sm-not-in-torch-arch-list: a CUDA torch's compiled targets against each NVIDIA GPU's compute capability, judged by
NVIDIA's rules (machine code within a major for an equal or higher minor, 'a' code only on its own capability, PTX
JIT-compiled upwards), the index planned for a GPU torch has no code for, the two messages folding under it, and
the healthy machines."""

import json
from pathlib import Path

import pytest

from rocm_doctor.knowledge import nvidia_arch, signatures
from rocm_doctor.testing import Case, run_case

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
CHECK = "sm-not-in-torch-arch-list"
CU126 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
CU130 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
SM120 = "linux-docker-rtx5060ti-sm_120-torch-cu126-without-sm_120"
RTX5090_LOG = "errors/linux-rtx5090-sm_120-torch-sm_50-to-sm_90-no-kernel-image-available-excerpt.txt"
HEALTHY_NVIDIA = ["linux-2x-h200-cuda-torch2.11", "linux-h200-live-state-idle-healthy"]
HEALTHY_AMD = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy"]


def device(name, major, minor, index=0):
    return {"index": index, "name": name, "major": major, "minor": minor, "is_integrated": 0}


def cuda_torch(archs, *devices, version="2.9.1+cu128", cuda="12.8", **more):
    return dict({"torch.flavour": "cuda", "torch.version": version, "torch.cuda_version": cuda,
                 "torch.available": True, "torch.arch_list": archs, "torch.devices": list(devices)}, **more)


def judged(name, facts, status, text=None, finding=f"{CHECK}:0"):
    found = run_case(Case(name=name, check=CHECK, facts=facts, expect={finding: status}, text=text or ()))
    return next(f for f in found if f.id == finding)


# ---- NVIDIA's rules ------------------------------------------------------------------------------------------------

def test_machine_code_of_a_lower_minor_runs_within_the_major():
    judged("sm_86-gpu-sm_80-code", cuda_torch(["sm_80"], device("NVIDIA GeForce RTX 3090", 8, 6)), "ok",
           text="has sm_80 machine code, which runs on GPU 0 (NVIDIA GeForce RTX 3090, sm_86)")
    judged("sm_80-gpu-sm_86-code", cuda_torch(["sm_86"], device("NVIDIA A100", 8, 0)), "fail",
           text="has no code for GPU 0 (NVIDIA A100, sm_80)")


def test_arch_specific_code_runs_only_on_its_own_capability():
    judged("sm_90a-on-h100", cuda_torch(["sm_90a"], device("NVIDIA H100", 9, 0)), "ok", text="sm_90a")
    judged("sm_90a-on-b200", cuda_torch(["sm_90a"], device("NVIDIA B200", 10, 0)), "fail",
           text="(NVIDIA B200, sm_100)")
    judged("compute_90a-on-b200", cuda_torch(["compute_90a"], device("NVIDIA B200", 10, 0)), "fail")


def test_family_code_runs_on_a_later_minor_of_its_major_only():
    judged("sm_100f-on-b300", cuda_torch(["sm_100f"], device("NVIDIA B300", 10, 3)), "ok")
    judged("sm_100f-on-rtx-5090", cuda_torch(["sm_100f"], device("NVIDIA GeForce RTX 5090", 12, 0)), "fail")


def test_ptx_alone_is_jit_compiled_on_a_newer_gpu():
    finding = judged("compute_90-on-sm_120", cuda_torch(["sm_80", "sm_90", "compute_90"],
                                                        device("NVIDIA GeForce RTX 5090", 12, 0)), "info",
                     text="only compute_90 PTX: the driver JIT-compiles every kernel")
    assert finding.remediation == ["For native sm_120 code, install torch from https://download.pytorch.org/whl/cu128."]
    assert not finding.fix


def test_integrated_gpus_and_the_renumbered_capability_keep_apart():
    assert not nvidia_arch.runs_natively(nvidia_arch.parse("sm_80"), (8, 7))  # Jetson Orin
    assert nvidia_arch.runs_natively(nvidia_arch.parse("sm_87"), (8, 7))
    assert not nvidia_arch.runs_natively(nvidia_arch.parse("sm_100"), (10, 1))
    assert nvidia_arch.runs_natively(nvidia_arch.parse("sm_101"), (11, 0))
    assert nvidia_arch.parse("gfx90a") is None and nvidia_arch.parse("sm_9") is None


# ---- what the failure plans ----------------------------------------------------------------------------------------

def test_blackwell_under_a_cu126_torch_gets_the_first_index_that_builds_sm_120():
    finding = judged("rtx-5060-ti-cu126", cuda_torch(CU126, device("NVIDIA GeForce RTX 5060 Ti", 12, 0),
                                                     version="2.7.1+cu126", cuda="12.6"), "fail",
                     text="torch 2.7.1+cu126 built for sm_50 … sm_90 has no code for GPU 0 (NVIDIA GeForce RTX 5060 Ti, "
                          "sm_120): CUDA kernels fail with 'no kernel image is available for execution on the device'.")
    (step,) = finding.fix
    assert (step.kind, step.index_url, step.packages) == ("pip_install", "https://download.pytorch.org/whl/cu128",
                                                          ["torch"])
    assert ("sm_120 (Blackwell) machine code needs CUDA 12.8 or later; this torch is built with CUDA 12.6"
            in finding.evidence)
    assert [a.title for a in finding.alternatives] == ["build torch for sm_120 from source"]


def test_a_pascal_gpu_under_a_cuda_13_torch_is_sent_back_to_cu126():
    finding = judged("gtx-1080-cu130", cuda_torch(CU130, device("NVIDIA GeForce GTX 1080", 6, 1),
                                                  version="2.11.0+cu130", cuda="13.0"), "fail",
                     text="built for sm_75 … sm_120")
    assert finding.fix[0].index_url == "https://download.pytorch.org/whl/cu126"
    assert not any("needs CUDA" in line for line in finding.evidence)  # CUDA 13 is not too old for Pascal: too new


def test_a_gpu_no_recorded_wheel_covers_gets_advice():
    finding = judged("jetson-orin-x86-wheels", cuda_torch(CU126, device("Orin", 8, 7)), "fail")
    (step,) = finding.fix
    assert step.kind == "advice" and "TORCH_CUDA_ARCH_LIST set to 8.7" in step.text


def test_aarch64_hosts_read_the_aarch64_wheel_lists():
    assert nvidia_arch.index_for((7, 5), "aarch64", "2.11.0") is None  # the aarch64 wheels start at 8.0
    assert nvidia_arch.index_for((7, 5), "x86_64", "2.11.0") == "https://download.pytorch.org/whl/cu126"
    assert nvidia_arch.index_for((11, 0), "aarch64", "2.11.0") == "https://download.pytorch.org/whl/cu130"


# ---- when there is nothing to judge, or only the wheel's table -----------------------------------------------------

def test_the_wheel_table_stands_in_when_torch_cannot_report_its_list():
    facts = cuda_torch(None, device("NVIDIA GeForce RTX 5090", 12, 0), version="2.7.1+cu126", cuda="12.6")
    judged("no-arch-list", facts, "fail",
           text="the machine code of the cu126 wheels (torch could not report its own list)")


@pytest.mark.parametrize("facts,why", [
    ({"torch.flavour": "rocm", "torch.version": "2.7.1+rocm6.3"}, "torch is a ROCm build, not a CUDA one"),
    ({"torch.flavour": "cpu", "torch.version": "2.7.1+cpu"}, "torch is a CPU build, not a CUDA one"),
    ({"torch.flavour": "cuda", "torch.version": "2.7.1+cu126", "torch.available": False},
     "torch sees no GPU, so there is no compute capability to judge"),
])
def test_skips_say_why(facts, why):
    judged("skip", facts, "skip", text=why, finding=CHECK)


# ---- replayed: the real case, its messages, the healthy machines ---------------------------------------------------

def test_both_messages_point_at_the_check():
    text = (FIXTURES / RTX5090_LOG).read_text(encoding="utf-8")
    assert {(m.id, m.check) for m in signatures.match(text)} >= {("cuda-capability-not-compatible", CHECK),
                                                                  ("cuda-no-kernel-image", CHECK)}


def test_the_rtx_5060_ti_case_leads_with_the_gap_and_folds_the_log_under_it(replayed):
    document = replayed(SM120, "--log", str(FIXTURES / RTX5090_LOG))
    root = document["diagnosis"]["root_causes"][0]
    assert (root["finding"], root["status"]) == (f"{CHECK}:0", "fail")
    assert {"known-error-signatures:cuda-capability-not-compatible",
            "known-error-signatures:cuda-no-kernel-image"} <= set(root["symptoms"])
    (item,) = [i for i in document["diagnosis"]["plan"] if i["id"] == root["plan"][0]]
    assert item["step"]["index_url"] == "https://download.pytorch.org/whl/cu128"


@pytest.mark.parametrize("name", HEALTHY_NVIDIA)
def test_healthy_h200_machines_have_their_sm_90_code(replayed, name):
    findings = [f for f in replayed(name)["findings"] if f["check"] == CHECK]
    assert findings and {f["status"] for f in findings} == {"ok"}
    assert all("has sm_90 machine code" in f["message"] for f in findings)


@pytest.mark.parametrize("name", HEALTHY_AMD)
def test_healthy_amd_machines_are_not_judged(replayed, name):
    (finding,) = [f for f in replayed(name)["findings"] if f["check"] == CHECK]
    assert finding["status"] == "skip"


def test_the_snapshot_holds_the_capability_torch_printed():
    snapshot = json.loads((SNAPSHOTS / f"{SM120}.json").read_text(encoding="utf-8"))
    stages = [json.loads(line) for line in snapshot["observations"]["commands"]["torch-probe"]["stdout"].splitlines()]
    (gpu,) = [s for s in stages if s["stage"] == "device"]
    assert nvidia_arch.sm_name((gpu["major"], gpu["minor"])) == "sm_120"


def test_kernels_that_fail_with_no_kernel_image_confirm_it_and_a_clean_gpu_run_refutes_it():
    import importlib

    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.gpu.kernels.signatures import analyse

    judge = importlib.import_module("rocm_doctor.checks.gpu_confirm").GpuKernelsFailed()

    def evidence(suite):
        analyse(suite)
        facts = Facts(Observations())
        facts.set("gpu.kernels", {"ran": True, "suite": suite})
        return judge.evidence_on(facts)

    error = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    failed = {"hello": {"device_type": "cuda"}, "results": [{"case": "matmul-float32", "outcome": "error", "error": error}]}
    assert evidence(failed)[CHECK]["cases"] == ["matmul-float32"]
    clean = {"hello": {"device_type": "cuda"}, "results": [{"case": f"case-{i}", "outcome": "ok"} for i in range(12)]}
    assert evidence(clean)[CHECK]["refuted"]
