"""nvidia-driver-older-than-torch-cuda: the parser on the real outputs (torch's warnings, the CUDA runtime's error,
nvidia-smi's header, the libcuda torch loaded), the table, and the check as torch probe observations in, findings
out; the replayed NGC case leads with it, and the healthy H200 machines get an ok."""

import json
from pathlib import Path

import pytest

from rocm_doctor.knowledge import cuda_driver as table
from rocm_doctor.parsers.cuda_driver import cuda_of_number, libcuda_version, read_text
from rocm_doctor.testing import Case, run_case

CHECK = "nvidia-driver-older-than-torch-cuda"
FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOTS = Path(__file__).parent / "snapshots"
NGC_LOG = "errors/linux-ngc-pytorch-container-cuda12.1-nvidia-driver-too-old-found-version-11000-userwarning.txt"
CI_LOG = "errors/linux-ci-torch-cu130-nvidia-driver-too-old-found-version-12080-userwarning.txt"
RUNTIME_LOG = "errors/linux-docker-torch-cuda-runtime-error-35-driver-insufficient-for-runtime-traceback.txt"
SMI_LOG = ("errors/linux-ubuntu21.04-rtx3050-laptop-driver470.86-cuda11.4-torch-too-old-found-version-11040-"
           "nvidia-smi-header-excerpt.txt")
NVIDIA_PCI = [{"slot": "0000:01:00.0", "class": "0x030000", "vendor": "0x10de", "device": "0x2335", "driver": "nvidia"}]
AMD_PCI = [{"slot": "0000:03:00.0", "class": "0x030000", "vendor": "0x1002", "device": "0x150e", "driver": "amdgpu"}]
UBUNTU = {"id": "ubuntu", "id_like": ["debian"], "version_id": "24.04", "pretty_name": "Ubuntu 24.04.3 LTS"}


def fixture(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def warning_of(name):
    """The UserWarning's message as torch's warnings list holds it (what follows 'UserWarning: ')."""
    return fixture(name).split("UserWarning: ", 1)[1].splitlines()[0].strip()


def machine(version, cuda, available, warnings=(), libraries=(), pci=NVIDIA_PCI, log=None, container=False):
    """Raw observations: the torch probe's stages, the PCI devices, a log given with --log, /.dockerenv."""
    stages = [{"stage": "start", "python": "3.12.3"},
              {"stage": "import", "ok": True, "version": version, "file": "/venv/torch/__init__.py", "cuda": cuda,
               "hip": None},
              {"stage": "available", "available": available, "error": None, "warnings": list(warnings)},
              {"stage": "count", "device_count": 1 if available else 0},
              {"stage": "libraries", "paths": list(libraries)}, {"stage": "done", "seconds": 2.0}]
    probe = {"argv": ["/venv/bin/python", "_torch_child.py"], "returncode": 0, "stderr": "", "duration_s": 2.0,
             "timed_out": False, "error": None, "stdout": "\n".join(json.dumps(s) for s in stages) + "\n"}
    probes = {"pci.sysfs": list(pci)}
    if log:
        probes["user.log"] = {"path": f"/home/u/{Path(log).name}", "text": fixture(log), "truncated": False}
    files = {"/.dockerenv": {"path": "/.dockerenv", "exists": container, "content": "" if container else None}}
    return {"commands": {"torch-probe": probe}, "probes": probes, "files": files}


def judged(observations, os="linux", facts=None):
    (finding,) = [f for f in run_case(Case(check=CHECK, expect={}, os=os, observations=observations,
                                           facts=facts or {})) if f.check == CHECK]
    return finding


# ---- the parser on real outputs -----------------------------------------------------------------------------------

def test_torch_warnings_give_the_drivers_cuda_version():
    assert read_text(fixture(NGC_LOG))["driver_cuda"] == "11.0"  # found version 11000
    assert read_text(fixture(CI_LOG))["driver_cuda"] == "12.8"  # found version 12080
    assert (cuda_of_number(12020), cuda_of_number(13000)) == ("12.2", "13.0")


def test_the_runtime_error_and_the_nvidia_smi_header_are_read():
    runtime = read_text(fixture(RUNTIME_LOG))
    assert runtime["insufficient"].startswith("THCudaCheck FAIL") and runtime["driver_cuda"] is None
    smi = read_text(fixture(SMI_LOG))
    assert (smi["driver_version"], smi["driver_cuda"]) == ("470.86", "11.4")
    assert "found version 11040" in smi["too_old"] and "Driver Version: 470.86" in smi["smi"]


def test_the_driver_library_torch_loaded_names_the_driver():
    snapshot = json.loads((SNAPSHOTS / "linux-2x-h200-cuda-torch2.11.json").read_text(encoding="utf-8"))
    stages = [json.loads(line) for line in snapshot["observations"]["commands"]["torch-probe"]["stdout"].splitlines()]
    paths = next(s["paths"] for s in stages if s["stage"] == "libraries")
    assert libcuda_version(paths) == ("580.159.04", "/usr/local/nvidia/lib64/libcuda.so.580.159.04")
    assert libcuda_version(["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/opt/libcudart.so.12"]) is None


def test_the_table_reads_nvidia_s_numbers():
    assert (table.minimum("12.1", "linux"), table.minimum("12.1", "windows")) == ("525.60.13", "528.33")
    assert (table.minimum("11.8", "linux"), table.minimum("13.0", "linux")) == ("450.80.02", "580")
    assert table.release_driver("12.8", "linux") == "570.26" and table.release_driver("13.0", "windows") is None
    assert table.cuda_of_driver("470.86", "linux") == "11.4" and table.cuda_of_driver("535.104.05", "linux") == "12.2"
    assert table.index_for_driver("12.2") == ("https://download.pytorch.org/whl/cu121", "12.1")
    assert table.index_for_driver("11.0") == ("https://download.pytorch.org/whl/cu118", "11.8")


# ---- the check ----------------------------------------------------------------------------------------------------

def test_too_old_by_the_driver_version_alone():
    finding = judged(machine("2.5.1+cu121", "12.1", False, libraries=["/usr/lib/x86_64-linux-gnu/libcuda.so.520.61.05"]),
                     facts={"os.release": UBUNTU})
    assert finding.status.value == "fail"
    assert "built with CUDA 12.1; this NVIDIA driver (520.61.05) supports CUDA 11.8 at most" in finding.message
    assert "525.60.13 or newer" in finding.message and "530.30.02 is the driver CUDA 12.1 ships with" in finding.message
    (step,) = finding.fix
    assert step.kind == "run_command" and step.argv() == ["sudo", "ubuntu-drivers", "install"]
    (alternative,) = finding.alternatives
    assert alternative.steps[0].index_url == "https://download.pytorch.org/whl/cu118"


def test_too_old_by_torch_warning_only_in_a_container():
    finding = judged(machine("2.1.0a0+b5021ba", "12.1", False, warnings=[warning_of(NGC_LOG)], container=True))
    assert finding.status.value == "fail" and "supports CUDA 11.0 at most" in finding.message
    assert any("found version 11000" in line for line in finding.evidence)
    (step,) = finding.fix
    assert step.kind == "advice" and "host that runs this container to 525.60.13 or newer" in step.text


def test_a_cuda_13_torch_on_a_cuda_12_8_driver():
    """PyTorch CI: cu130 torch, 'found version 12080'; the torch alternative is CUDA 12.8, which that driver runs."""
    finding = judged(machine("2.9.0+cu130", "13.0", False, warnings=[warning_of(CI_LOG)]))
    assert finding.status.value == "fail" and "needs NVIDIA driver 580 or newer" in finding.message
    (alternative,) = finding.alternatives
    assert alternative.title == "install a torch built for CUDA 12.8, which this driver runs"


def test_a_log_with_nvidia_smi_names_the_driver_version():
    finding = judged(machine("2.1.0+cu121", "12.1", False))
    assert finding.status.value == "skip"  # nothing recorded without the log
    finding = judged(machine("2.1.0+cu121", "12.1", False, log=SMI_LOG))
    assert finding.status.value == "fail"
    assert "this NVIDIA driver (470.86) supports CUDA 11.4 at most" in finding.message
    assert "NVIDIA driver 470.86 (nvidia-smi in the log /home/u/" in " ".join(finding.evidence)
    assert finding.fix[0].kind == "advice" and "distribution's packages" in finding.fix[0].text


def test_the_runtime_error_without_numbers_still_fails_without_a_torch_alternative():
    finding = judged(machine("2.1.0+cu121", "12.1", False, log=RUNTIME_LOG))
    assert finding.status.value == "fail" and "is older than CUDA 12.1 needs" in finding.message
    assert finding.alternatives == []


def test_the_h200_driver_580_runs_torch_2_11_cu130():
    finding = judged(machine("2.11.0+cu130", "13.0", True,
                             libraries=["/usr/local/nvidia/lib64/libcuda.so.580.159.04"]))
    assert finding.status.value == "ok"
    assert finding.message == ("torch 2.11.0+cu130 was built with CUDA 13.0; this NVIDIA driver (580.159.04) "
                               "supports CUDA 13.0 (torch reached the GPU)")


@pytest.mark.parametrize("available", [True, False])
def test_cuda_12_8_torch_on_a_525_driver_runs_under_minor_version_compatibility(available):
    finding = judged(machine("2.7.1+cu128", "12.8", available, libraries=["/usr/lib64/libcuda.so.525.60.13"]))
    assert finding.status.value == "info"
    assert "supports CUDA 12.0 in full and runs CUDA 12.8 under NVIDIA's minor version compatibility" in finding.message
    assert finding.remediation == ["For every CUDA 12.8 feature, update the NVIDIA driver to 570.26."]


def test_a_log_that_says_too_old_does_not_overrule_a_torch_that_reached_the_gpu():
    finding = judged(machine("2.11.0+cu130", "13.0", True, libraries=["/usr/lib/libcuda.so.580.95.05"], log=CI_LOG))
    assert finding.status.value == "ok" and "(580.95.05) supports CUDA 13.0" in finding.message
    assert any("not about this run" in line for line in finding.evidence)


def test_windows_steps_name_the_windows_driver():
    finding = judged(machine("2.9.0+cu130", "13.0", False, warnings=[warning_of(CI_LOG)], pci=[]), os="windows")
    assert "needs NVIDIA driver 580 or newer" in finding.message
    assert "nvidia.com/Download" in finding.fix[0].text and "580 or newer" in finding.fix[0].text


@pytest.mark.parametrize("observations,why", [
    (machine("2.7.1+rocm6.3", None, True), "is not a CUDA build"),
    (machine("2.12.0+cu130", "13.0", False, pci=AMD_PCI), "no NVIDIA GPU shows on PCI"),
    (machine("2.12.0+cu130", "13.0", False), "nothing recorded which NVIDIA driver runs"),
])
def test_skips_say_why(observations, why):
    finding = judged(observations)
    assert finding.status.value == "skip" and why in finding.message


def test_an_old_snapshot_without_the_torch_probe_skips():
    finding = judged({"probes": {"pci.sysfs": NVIDIA_PCI}})
    assert finding.status.value == "skip"


# ---- replayed -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["linux-2x-h200-cuda-torch2.11", "linux-h200-live-state-idle-healthy"])
def test_the_healthy_h200_snapshots_are_ok(replayed, name):
    (finding,) = [f for f in replayed(name)["findings"] if f["check"] == CHECK]
    assert finding["status"] == "ok" and "580.159.04" in finding["message"]


def test_the_ngc_case_folds_its_log_line_under_the_driver(replayed):
    document = replayed("linux-ngc-container-torch-cuda12.1-on-a-cuda-11.0-nvidia-driver", "--log",
                        str(FIXTURES / NGC_LOG))
    (root,) = document["diagnosis"]["root_causes"]
    assert root["finding"] == CHECK
    assert {"torch-cuda-unavailable", "known-error-signatures:nvidia-driver-too-old"} <= set(root["symptoms"])
