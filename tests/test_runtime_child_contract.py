"""The runtime child against stand-in libraries built from C with the CUDA driver, HIP and HSA signatures
(tests/fixtures/fake_runtimes): its ctypes calls, by-reference outputs and error-name lookups, end to end through
the interpreter and the check. No GPU runtime exists here; these test the calling contract, not a real driver."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocm_doctor.checks.runtime_status import GpuRuntimeRefuses
from rocm_doctor.engine.model import Status
from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.facts.keys import OWN_LIMITS_KEY, RUNTIME_PROBE_KEY
from rocm_doctor.interpret import runtime_facts

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "tests" / "fixtures" / "fake_runtimes"
CHILD = ROOT / "rocm_doctor" / "probes" / "_runtime_child.py"
pytestmark = pytest.mark.skipif(not shutil.which("gcc") or not sys.platform.startswith("linux"),
                                reason="needs gcc on Linux to build the stand-in libraries")


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runtimes")
    (folder / "lib").mkdir()
    for source, name in (("fake_cuda.c", "libcuda.so.1"), ("fake_hip.c", "lib/libamdhip64.so"),
                         ("fake_hsa.c", "lib/libhsa-runtime64.so.1")):
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(folder / name), str(SOURCES / source)], check=True)
    return folder


def run_child(libraries, tmp_path):
    env = dict(os.environ, LD_LIBRARY_PATH=str(libraries), ROCM_PATH=str(libraries))
    done = subprocess.run([sys.executable, str(CHILD)], capture_output=True, text=True, timeout=60, env=env,
                          cwd=tmp_path)
    observations = Observations()
    observations.add_command(RUNTIME_PROBE_KEY, CommandResult(argv=["python3"], returncode=done.returncode,
                                                                      stdout=done.stdout, stderr=done.stderr))
    facts = Facts(observations)
    runtime_facts.interpret(observations, facts)
    return facts


def test_the_cuda_drivers_refusal_is_read_through_ctypes(libraries, tmp_path):
    facts = run_child(libraries, tmp_path)
    driver = facts["runtime.status"]["apis"]["cuda-driver"]
    assert driver["path"] == "libcuda.so.1"
    assert driver["calls"][0] == {"call": "cuDriverGetVersion", "code": 0, "name": "CUDA_SUCCESS",
                                  "text": "no error", "value": 13000}
    assert driver["calls"][1]["call"] == "cuInit" and driver["calls"][1]["code"] == 100
    assert len(driver["calls"]) == 2  # no device count after a failed cuInit
    facts.set("torch.flavour", "cuda")
    finding = GpuRuntimeRefuses().run(facts)
    assert finding.status == Status.FAIL and "CUDA_ERROR_NO_DEVICE (100)" in finding.message
    assert finding.data["points_to"] == "gpu-visibility-env"


def test_hip_and_rocr_are_read_and_a_rocr_without_a_gpu_agent_is_named(libraries, tmp_path):
    facts = run_child(libraries, tmp_path)
    apis = facts["runtime.status"]["apis"]
    hip = {c["call"]: c for c in apis["hip"]["calls"]}
    assert hip["hipGetDeviceCount"]["name"] == "hipErrorNoDevice" and hip["hipDriverGetVersion"]["value"] == 70226015
    assert apis["hsa"]["agents"] == [{"name": "AMD Ryzen 9 7950X", "gpu": False}]
    facts.set("torch.flavour", "rocm")
    finding = GpuRuntimeRefuses().run(facts)
    assert finding.status == Status.FAIL and finding.id == "gpu-runtime-refuses:hip"
    assert "hipGetDeviceCount() returned hipErrorNoDevice (100)" in finding.message
    del apis["hip"]  # with HIP's own refusal gone, ROCr's empty agent list is what is left to say
    finding = GpuRuntimeRefuses().run(facts)
    assert finding.id == "gpu-runtime-refuses:hsa" and "lists no GPU agent" in finding.message
    assert "AMD Ryzen 9 7950X" in finding.evidence[0]
