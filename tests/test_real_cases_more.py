"""Real cases whose public threads established the cause: each snapshot is replayed with the thread's pasted output
given with --log, and the diagnosis must lead with that cause and plan the fix that worked. Fixtures and threads:
tests/fixtures/INDEX.md; what each snapshot constructs: its "note". A case the doctor does not yet diagnose is marked
xfail with what it says instead and what it should say."""

import json
import re
from pathlib import Path

from rocm_doctor.knowledge import wheels

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"

DRIVER_SNAPSHOT = "linux-ngc-container-torch-cuda12.1-on-a-cuda-11.0-nvidia-driver"
DRIVER_LOG = "errors/linux-ngc-pytorch-container-cuda12.1-nvidia-driver-too-old-found-version-11000-userwarning.txt"
SM120_SNAPSHOT = "linux-docker-rtx5060ti-sm_120-torch-cu126-without-sm_120"
SM120_LOG = "errors/linux-docker-rtx5060ti-sm_120-not-compatible-torch-supports-sm_50-to-sm_90-userwarning.txt"
CUDA_ON_AMD_SNAPSHOT = "linux-docker-gfx1150-890m-rocm-image-ships-cuda-torch2.12.0-cu130"
CUDA_ON_AMD_LOG = "errors/linux-docker-gfx1150-890m-rocm-image-ships-cuda-torch2.12.0-cu130-found-no-nvidia-driver-excerpt.txt"
GFX1151_SNAPSHOT = "linux-docker-strixhalo-gfx1151-rocm6.4.1-pytorch2.6.0-image-without-gfx1151"
GFX1151_LOG = "errors/linux-docker-strixhalo-gfx1151-rocm6.4.1-pytorch-release-2.6.0-image-invalid-device-function.txt"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def probe_stages(name: str) -> dict:
    snap = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
    lines = snap["observations"]["commands"]["torch-probe"]["stdout"].splitlines()
    stages: dict = {}
    for stage in map(json.loads, lines):
        stages.setdefault(stage["stage"], []).append(stage)
    return stages


def diagnose(doctor, name: str, log: str) -> dict:
    result = doctor("check", "--from", str(SNAPSHOTS / f"{name}.json"), "--json", "--log", str(FIXTURES / log))
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def first_cause_and_step(document: dict) -> tuple[dict, dict, dict]:
    """The first root cause, its finding and the step of its first planned item."""
    roots = document["diagnosis"]["root_causes"]
    assert roots, "the diagnosis names no root cause"
    root = roots[0]
    finding = next(f for f in document["findings"] if f["id"] == root["finding"])
    plan = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert root["plan"], f"{root['finding']} leads the diagnosis with no planned step"
    return root, finding, plan[root["plan"][0]]


# ---- the snapshots carry the threads' outputs ---------------------------------------------------------------------

def test_the_snapshots_carry_what_the_threads_printed():
    warning = fixture(DRIVER_LOG).split("UserWarning: ", 1)[1].strip()
    assert probe_stages(DRIVER_SNAPSHOT)["available"][0]["warnings"] == [warning]
    supported = re.search(r"supports CUDA capabilities ((?:sm_\d+ ?)+)\.", fixture(SM120_LOG)).group(1).split()
    sm120 = probe_stages(SM120_SNAPSHOT)
    assert sm120["arch_list"][0]["arch_list"] == supported
    assert (sm120["device"][0]["major"], sm120["device"][0]["minor"]) == (12, 0)  # "CUDA capability sm_120"
    imported = probe_stages(CUDA_ON_AMD_SNAPSHOT)["import"][0]
    assert (imported["version"], imported["hip"]) == ("2.12.0+cu130", None)  # what the reporter printed
    name = re.search(r"Device 0 Name: (.+)", fixture(GFX1151_LOG)).group(1)
    assert probe_stages(GFX1151_SNAPSHOT)["device"][0]["name"] == name


# ---- the doctor names the cause the thread established ------------------------------------------------------------

def test_cuda_torch_in_a_rocm_container_on_a_gfx1150_apu_is_the_cause(doctor):
    """ComfyUI-Docker's rocm7 image shipped torch 2.12.0+cu130 ('Found no NVIDIA driver'); a ROCm torch fixed it."""
    root, finding, step = first_cause_and_step(diagnose(doctor, CUDA_ON_AMD_SNAPSHOT, CUDA_ON_AMD_LOG))
    assert (root["finding"], root["status"]) == ("torch-build-mismatch", "fail")
    assert "2.12.0+cu130 is a CUDA build" in finding["message"]
    assert "torch-cuda-unavailable" in root["symptoms"]
    assert step["kind"] == "pip_install" and step["index_url"].startswith("https://download.pytorch.org/whl/rocm")
    index = step["index_url"].rstrip("/").rsplit("/", 1)[-1]
    assert wheels.covers(wheels.index_archs(index), "gfx1150"), index


def test_strix_halo_under_a_torch_without_gfx1151_code_is_the_cause(doctor):
    """rocm/pytorch's ROCm 6.4.1 image with torch 2.6.0 has no gfx1151 code: 'HIP error: invalid device function'."""
    document = diagnose(doctor, GFX1151_SNAPSHOT, GFX1151_LOG)
    root, finding, step = first_cause_and_step(document)
    assert (root["finding"], root["status"]) == ("gfx-not-in-torch-arch-list:0", "fail")
    assert "gfx1151" in finding["message"]
    assert "known-error-signatures:hip-invalid-device-function" in root["symptoms"]  # the log's line folds under it
    assert step["kind"] == "pip_install"
    index = step["index_url"].rstrip("/").rsplit("/", 1)[-1]
    assert wheels.covers(wheels.index_archs(index), "gfx1151"), index


def test_an_nvidia_driver_older_than_the_torch_cuda_is_the_cause(doctor):
    """Yuan-2.0: an NGC container with CUDA 12.1 on a driver reporting CUDA 11.0; updating the driver fixed it."""
    root, finding, step = first_cause_and_step(diagnose(doctor, DRIVER_SNAPSHOT, DRIVER_LOG))
    assert (root["finding"], root["status"]) == ("nvidia-driver-older-than-torch-cuda", "fail")
    assert "built with CUDA 12.1; this NVIDIA driver supports CUDA 11.0 at most" in finding["message"]
    assert {"torch-cuda-unavailable", "known-error-signatures:nvidia-driver-too-old"} <= set(root["symptoms"])
    # the thread's fix, a driver for CUDA 12.x (535), on the host: the container uses the host's driver
    assert step["kind"] == "advice" and "host that runs this container to 525.60.13 or newer" in step["text"]
    (alternative,) = root["alternatives"]
    assert alternative["steps"][0]["step"]["index_url"] == "https://download.pytorch.org/whl/cu118"


def test_an_rtx_50_gpu_under_a_torch_without_sm_120_is_the_cause(doctor):
    """wyoming-xtts: the image's torch supports sm_50-sm_90; the cu128 build made the RTX 5060 Ti work."""
    root, finding, step = first_cause_and_step(diagnose(doctor, SM120_SNAPSHOT, SM120_LOG))
    assert (root["finding"], root["status"]) == ("sm-not-in-torch-arch-list:0", "fail")
    assert "sm_120" in finding["message"] and "sm_50 … sm_90" in finding["message"]
    assert "known-error-signatures:cuda-capability-not-compatible" in root["symptoms"]  # the warning folds under it
    assert step["kind"] == "pip_install" and step["packages"] == ["torch"]
    assert re.search(r"/whl/cu(12[89]|1[3-9]\d)$", step["index_url"].rstrip("/")), step["index_url"]
