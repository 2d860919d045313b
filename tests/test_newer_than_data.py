"""A release the tables have no row for because it is newer than they are: "newer than rocm-doctor's data (which
ends at X)", judged by what the machine shows, with `data update` suggested; never "unsupported"."""

import json
from pathlib import Path

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import derive_again
from rocm_doctor.knowledge import currency, os_support, support

REGISTRY = load_registry(include_plugins=False)
LAYER_CASES = json.loads((Path(__file__).parent / "cases" / "layer-fix-cases.json").read_text())["cases"]


def gpu(gfx, igpu=False):
    return {"index": 0, "gfx": gfx, "igpu": igpu, "node": 1, "name": f"GPU {gfx}", "uuid": None, "device_id": None,
            "sources": {"kfd": gfx}}


def rocblas(gfx):
    return [{"path": "/opt/rocm/lib/rocblas/library", "library": "rocblas", "owner": "/opt/rocm", "exists": True,
             "files": 12, "gfx": gfx}]


def run(check_id, values, os="linux"):
    facts = Facts(Observations(platform={"os": os}, env={}))
    facts.set("platform.os", os)
    for key, value in values.items():
        facts.set(key, value)
    derive_again(facts, values)  # gpu.targets from the GPUs
    return run_one(REGISTRY.by_id(check_id), facts)


@pytest.mark.parametrize("kind,end", [("rocm", "10.0"), ("torch", "2.14"), ("cuda", "13.3"), ("hip-sdk", "7.2")])
def test_each_table_says_where_it_ends(kind, end):
    assert currency.ends_at(kind) == end


def test_only_a_release_past_the_newest_row_is_newer():
    assert currency.newer("rocm", "11.0.0") == "ROCm 11.0.0 is newer than rocm-doctor's data (which ends at 10.0)"
    assert currency.newer("rocm", "10.1.0a20260910") is not None
    assert currency.newer("rocm", "10.0.1") is None and currency.newer("rocm", "7.14.0") is None
    assert currency.newer("torch", "2.15.0+rocm7.14") == "torch 2.15.0+rocm7.14 is newer than rocm-doctor's data " \
                                                        "(which ends at 2.14)"
    assert currency.newer("cuda", "13.4") is not None and currency.newer("cuda", "12.8") is None
    assert currency.newer("rocm", "not a version") is None


def test_gfx1153_on_rocm_7_14_is_supported():
    assert support.linux("gfx1153", "7.14.0").status == "supported"
    finding, = run("gfx-support-matrix", {"gpu.inventory": [gpu("gfx1153", igpu=True)],
                                          "hip.version": {"text": "7.14.0", "source": "hipconfig"}})
    assert finding.status.value == "ok" and "supported by Linux ROCm 7.14" in finding.message


def test_rocm_11_is_newer_than_the_data_and_judged_by_the_machine():
    assert support.linux("gfx1100", "11.0.0").status == "newer"
    finding, = run("gfx-support-matrix", {"gpu.inventory": [gpu("gfx1100")],
                                          "hip.version": {"text": "11.0.0", "source": "hipconfig"},
                                          "torch.arch_list": ["gfx1100", "gfx1201"],
                                          "rocm.libraries": rocblas(["gfx1100", "gfx1201"])})
    assert finding.status.value == "info" and "unsupported" not in finding.message
    assert "ROCm 11.0.0 is newer than rocm-doctor's data (which ends at 10.0)" in finding.message
    assert "the installed software has code for gfx1100" in finding.message
    assert finding.data["machine"] == "has-code"
    assert any("torch.cuda.get_arch_list()" in line for line in finding.evidence)
    assert finding.remediation == ["Run `rocm-doctor data update` for tables that know newer releases"]


def test_the_machine_can_say_it_lacks_the_code_or_say_nothing():
    lacking, = run("gfx-support-matrix", {"gpu.inventory": [gpu("gfx1153", igpu=True)],
                                          "hip.version": {"text": "11.0.0", "source": "hipconfig"},
                                          "rocm.libraries": rocblas(["gfx1100"])})
    assert lacking.data["machine"] == "lacks-code" and "lacks code for gfx1153" in lacking.message
    silent, = run("gfx-support-matrix", {"gpu.inventory": [gpu("gfx1100")],
                                         "hip.version": {"text": "11.0.0", "source": "hipconfig"}})
    assert silent.data["machine"] == "silent" and silent.status.value == "info"


def test_a_newer_hip_sdk_on_windows_is_newer_not_unsupported():
    result = support.windows("gfx1100", "10.0.0")
    assert (result.runtime, result.sdk) == ("newer", "newer") and "which ends at 7.2" in result.note


def test_a_newer_rocm_has_no_os_list_and_says_so():
    assert os_support.distro("11.0.0", "ubuntu", "26.04", "26.04").status == "newer-release"
    facts = dict(LAYER_CASES["ubuntu-oem-kernel-not-on-the-list"]["facts"],
                 **{"hip.version": {"text": "11.0.0", "source": "hipconfig --version"}})
    findings = run("os-support-matrix", {k: v for k, v in facts.items() if v is not None})
    distro = next(f for f in findings)
    assert distro.status.value == "info" and "newer than rocm-doctor's data (which ends at 10.0)" in distro.message
    assert distro.remediation == [currency.advice()]


def _torch_machine(version, cuda, driver_library):
    stages = [{"stage": "start", "python": "3.12.3"},
              {"stage": "import", "ok": True, "version": version, "file": "/venv/torch/__init__.py", "cuda": cuda,
               "hip": None},
              {"stage": "available", "available": True, "error": None, "warnings": []},
              {"stage": "count", "device_count": 1}, {"stage": "libraries", "paths": [driver_library]},
              {"stage": "done", "seconds": 2.0}]
    probe = {"argv": ["/venv/bin/python", "_torch_child.py"], "returncode": 0, "stderr": "", "duration_s": 2.0,
             "timed_out": False, "error": None, "stdout": "\n".join(json.dumps(s) for s in stages) + "\n"}
    pci = [{"slot": "0000:01:00.0", "class": "0x030000", "vendor": "0x10de", "device": "0x2335", "driver": "nvidia"}]
    return {"commands": {"torch-probe": probe}, "probes": {"pci.sysfs": pci},
            "files": {"/.dockerenv": {"path": "/.dockerenv", "exists": False, "content": None}}}


def test_a_cuda_and_a_driver_newer_than_the_table_are_judged_by_the_driver():
    from rocm_doctor.testing import Case, run_case

    check = "nvidia-driver-older-than-torch-cuda"
    observations = _torch_machine("2.15.0+cu134", "13.4", "/usr/lib/x86_64-linux-gnu/libcuda.so.616.20")
    finding, = [f for f in run_case(Case(check=check, expect={}, os="linux", observations=observations, facts={}))
                if f.check == check]
    assert finding.status.value == "ok", finding.message
    assert "CUDA 13.4 is newer than rocm-doctor's data (which ends at 13.3)" in " ".join(finding.evidence)
    assert any("NVIDIA driver 616.20 is newer than rocm-doctor's data" in line for line in finding.evidence)


def test_a_log_naming_a_rocm_newer_than_the_data_is_not_called_unsupported():
    line = "/opt/rocm-11.0.0/lib/librocblas.so.5"
    said = "rocBLAS error: Cannot read TensileLibrary.dat for GPU arch : gfx1100"
    log = {"path": "/home/u/run.log", "rocm": [{"version": "11.0.0", "line": line}], "hip": [],
           "targets": [{"gfx": "gfx1100", "line": said}]}
    finding, = run("log-gfx-unsupported-by-rocm", {"log.machine": log, "gpu.inventory": []})
    assert finding.status.value == "info" and "newer than rocm-doctor's data (which ends at 10.0)" in finding.message
