"""Facts in, findings out, for the torch, platform and visibility checks."""

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.report import diagnosis_view
from rocm_doctor.interpret import run_env

REGISTRY = load_registry(include_plugins=False)
AMD_GPU = [{"vendor": "amd", "vendor_id": "0x1002", "device_id": "0x73ef", "source": "sysfs"}]
NVIDIA_GPU = [{"vendor": "nvidia", "vendor_id": "0x10de", "device_id": "0x2335", "source": "sysfs"}]
TARGET = {"python": "/home/u/venv/bin/python", "reason": "the active virtual environment"}


def facts_from(values: dict, env: dict | None = None) -> Facts:
    facts = Facts(Observations(env=env or {}))
    facts.set("platform.os", "linux")
    run_env.interpret(facts.observations, facts)  # the environment given is the one seen
    for key, value in values.items():
        facts.set(key, value)
    return facts


CASES = [
    # (check id, facts, env, expected status, text expected in message or remediation)
    ("torch-build-mismatch", {"torch.flavour": "cpu", "torch.version": "2.13.0+cpu", "gpu.pci": AMD_GPU,
                              "python.target": TARGET}, {}, "fail", "download.pytorch.org/whl/rocm"),
    ("torch-build-mismatch", {"torch.flavour": "cuda", "torch.version": "2.13.0+cu128", "gpu.pci": AMD_GPU,
                              "python.target": TARGET}, {}, "fail", "AMD"),
    ("torch-build-mismatch", {"torch.flavour": "rocm", "torch.version": "2.13.0+rocm7.2", "gpu.pci": NVIDIA_GPU,
                              "python.target": TARGET}, {}, "fail", "whl/cu"),
    ("torch-build-mismatch", {"torch.flavour": "rocm", "torch.version": "2.13.0+rocm7.2", "gpu.pci": AMD_GPU},
     {}, "ok", "ROCm build"),
    ("torch-build-mismatch", {"torch.flavour": "cpu", "torch.version": "2.13.0+cpu", "gpu.pci": []}, {}, "ok", "no AMD"),
    ("torch-not-installed", {"torch.installed": False, "python.target": TARGET, "gpu.pci": AMD_GPU}, {}, "fail",
     "/home/u/venv/bin/python -m pip install torch --index-url https://download.pytorch.org/whl/rocm"),
    ("torch-not-installed", {"torch.installed": True, "torch.import_error": "OSError: libamdhip64.so.6: cannot open",
                             "python.target": TARGET}, {}, "fail", "libamdhip64"),
    ("torch-cuda-unavailable", {"torch.available": False, "torch.flavour": "rocm",
                                "torch.warnings": ["CUDA initialization: no HIP GPUs are available"]}, {}, "fail",
     "no HIP GPUs"),
    ("torch-cuda-unavailable", {"torch.available": False, "torch.flavour": "cpu"}, {}, "skip", "CPU build"),
    ("torch-cuda-unavailable", {"torch.available": True, "torch.flavour": "cuda", "torch.device_count": 1,
                                "torch.devices": [{"name": "NVIDIA H200"}]}, {}, "ok", "NVIDIA H200"),
    ("gpu-visibility-env", {"gpu.pci": AMD_GPU}, {"HIP_VISIBLE_DEVICES": ""}, "fail", "empty"),
    ("gpu-visibility-env", {"gpu.pci": AMD_GPU}, {"ROCR_VISIBLE_DEVICES": "-1"}, "fail", "hides every GPU"),
    ("gpu-visibility-env", {"gpu.pci": AMD_GPU}, {"CUDA_VISIBLE_DEVICES": "0,gpu1"}, "fail", "malformed"),
    ("gpu-visibility-env", {"gpu.pci": AMD_GPU}, {"HIP_VISIBLE_DEVICES": "2"}, "fail", "do not exist"),
    ("gpu-visibility-env", {"gpu.pci": AMD_GPU}, {"HIP_VISIBLE_DEVICES": "0"}, "info", "limits"),
    ("gpu-visibility-env", {"gpu.pci": AMD_GPU}, {}, "ok", "no GPU visibility"),
    ("python-version", {"python.target": TARGET, "python.target.version": "3.7.16"}, {}, "fail", "older"),
    ("python-version", {"python.target": TARGET, "python.target.version": "3.12.1"}, {}, "ok", "3.12.1"),
    ("platform-supported", {"platform.machine": "aarch64"}, {}, "warn", "x86_64"),
]


@pytest.mark.parametrize("check_id, values, env, status, text", CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_case(check_id, values, env, status, text):
    findings = run_one(REGISTRY.by_id(check_id), facts_from(values, env))
    assert [f.status.value for f in findings] == [status], [f.message for f in findings]
    commands = [line for step in findings[0].fix for line in diagnosis_view.commands(step, "bash")]
    blob = " ".join([findings[0].message, *findings[0].remediation, *commands])
    assert text in blob, blob


GFX1032_INVENTORY = [{"index": 0, "gfx": "gfx1032", "igpu": False}]


@pytest.mark.parametrize("check_id, values, index, packages", [
    ("torch-build-mismatch", {"torch.flavour": "rocm", "torch.version": "2.13.0+rocm7.2", "gpu.pci": NVIDIA_GPU},
     "https://download.pytorch.org/whl/cu130", ["torch"]),
    ("torch-build-mismatch", {"torch.flavour": "cpu", "torch.version": "2.9.1+cpu", "gpu.pci": NVIDIA_GPU},
     "https://download.pytorch.org/whl/cu128", ["torch"]),
    ("torch-not-installed", {"torch.installed": False, "gpu.pci": NVIDIA_GPU},
     "https://download.pytorch.org/whl/cu130", ["torch"]),
    ("torch-build-mismatch", {"torch.flavour": "cpu", "torch.version": "2.5.1+cpu", "gpu.pci": AMD_GPU,
                              "gpu.inventory": GFX1032_INVENTORY},
     "https://repo.amd.com/rocm/whl-multi-arch/", ["torch[device-gfx1032]"]),
    ("torch-not-installed", {"torch.installed": False, "gpu.pci": AMD_GPU, "gpu.inventory": GFX1032_INVENTORY},
     "https://repo.amd.com/rocm/whl-multi-arch/", ["torch[device-gfx1032]"]),
])
def test_torch_install_step_names_an_index_that_has_that_torch(check_id, values, index, packages):
    """CUDA torch comes from an index built for its release (cu128 has nothing after 2.11); an AMD gfx that no
    download.pytorch.org wheel builds gets AMD's multi-arch index with its device extra."""
    (finding,) = run_one(REGISTRY.by_id(check_id), facts_from(dict(values, **{"python.target": TARGET})))
    (step,) = finding.fix
    assert (step.index_url, step.packages) == (index, packages)


def test_with_no_gpu_found_the_cpu_build_comes_first_and_the_rocm_build_is_the_alternative():
    """No GPU on PCI or from any tool and no torch: the CPU build is what runs here; the ROCm build (whose newest
    wheels need AMD's rocm packages beside them) is offered as a labelled alternative, not planned."""
    none = {"torch.installed": False, "python.target": TARGET, "gpu.pci": [], "gpu.inventory": []}
    (finding,) = run_one(REGISTRY.by_id("torch-not-installed"), facts_from(none))
    (step,) = finding.fix
    assert (step.index_url, step.packages) == ("https://download.pytorch.org/whl/cpu", ["torch"])
    assert finding.evidence == ["no GPU found: no AMD or NVIDIA GPU on the PCI bus or from any GPU tool, and torch "
                                "is not installed to look"]
    (alternative,) = finding.alternatives
    assert alternative.steps[0].index_url == "https://download.pytorch.org/whl/rocm7.14"
    assert "rocm[libraries]" in alternative.why_not_first and "Prefer it when" in alternative.why_not_first
    # where the GPUs cannot be told apart from none (WSL hides the PCI list) the GPU build stays first
    wsl = facts_from(none)
    wsl.set("platform.os", "wsl")
    (finding,) = run_one(REGISTRY.by_id("torch-not-installed"), wsl)
    assert not finding.alternatives and all("whl/cpu" not in str(s.to_dict()) for s in finding.fix)


def test_torch_probe_states():
    check = REGISTRY.by_id("torch-probe-crashed")
    base = {"argv": ["python", "child"], "returncode": -11, "duration_s": 1.0, "stderr_tail": "Segmentation fault"}
    crashed = run_one(check, facts_from({"torch.probe": dict(base, state="crashed", detail="killed by SIGSEGV (11)")}))
    assert crashed[0].status.value == "fail" and any("Segmentation fault" in e for e in crashed[0].evidence)
    ok = run_one(check, facts_from({"torch.probe": dict(base, returncode=0, state="ok", detail="completed")}))
    assert ok[0].status.value == "ok"
