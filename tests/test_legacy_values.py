"""Values older ROCm releases used are read with their own meaning: real hipconfig outputs of HIP 1.4, 3.5, 3.10 and
4.0 (tests/fixtures/hipconfig, INDEX.md), stale variables, and rocm-smi's old text columns."""

from pathlib import Path

import pytest

from rocm_doctor.diagnose import replay
from rocm_doctor.knowledge import legacy
from rocm_doctor.parsers.hipconfig import parse_hipconfig_full
from rocm_doctor.parsers.rocm_smi import parse_rocm_smi
from rocm_doctor.testing.machine import kfd_node, observations

FIXTURES = Path(__file__).parent / "fixtures"
HIP_310 = "hipconfig/linux-debian-rocm3.10-full-install-hip-clang-platform-hcc-healthy-excerpt.txt"
HIP_14 = "hipconfig/linux-ubuntu-rocm1.7-hip1.4-hcc-toolchain-platform-hcc-excerpt.txt"
HIP_35_BASE = "hipconfig/linux-debian-hip-base3.5.0-only-hcc-fallback.txt"
HIP_40_BASE = "hipconfig/linux-debian-bullseye-hip-base4.0-only-no-compiler-hcc-fallback.txt"
HIP_63 = "hipconfig/linux-mint22.1-gfx90c-apu-full-rocm6.3.2.txt"
RX6600XT = ("0000:0c:00.0", "0x73ff", "amdgpu")


def text(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def findings(hipconfig=None, env=None, kfd=None):
    obs = observations({"hipconfig-full": text(hipconfig)} if hipconfig else {}, pci=[RX6600XT],
                       env=dict({"PATH": "/usr/bin"}, **(env or {})), kfd=kfd)
    report, _ = replay(obs, "test")
    return {f.id: f for f in report.findings}


def problems(found):
    return {fid: f.status.value for fid, f in found.items() if f.status.value in ("warn", "fail")}


@pytest.mark.parametrize("variable,value,means", [("HIP_PLATFORM", "hcc", "amd"), ("HIP_PLATFORM", "nvcc", "nvidia"),
                                                  ("HIP_PLATFORM", "rocclr", None), ("HIP_COMPILER", "hcc", None),
                                                  ("HIP_RUNTIME", "HCC", None)])
def test_the_table_reads_old_values_with_their_meaning(variable, value, means):
    reading = legacy.reading(variable, value)
    assert reading is not None and reading.means == means and reading.source


def test_current_values_are_not_legacy():
    assert legacy.reading("HIP_PLATFORM", "amd") is None and legacy.reading("HIP_COMPILER", "clang") is None
    assert legacy.reading("HIP_RUNTIME", "ROCclr") is None  # ROCm 3.5-4.x's spelling of rocclr
    assert legacy.hcc_era("1.4.0") and not legacy.hcc_era("3.10.20465-f9876b8d") and not legacy.hcc_era(None)


def test_the_rocm_3_10_hipconfig_parses_with_its_own_layout():
    config = parse_hipconfig_full(text(HIP_310))
    assert (config["platform"], config["compiler"], config["runtime"]) == ("hcc", "clang", "ROCclr")
    assert config["version"]["release"] == "3.10" and config["garbled"] == []


def test_a_full_rocm_3_10_install_is_not_the_hcc_fallback():
    """HIP-Examples#23: hipconfig of ROCm 3.10 says HIP_PLATFORM hcc with HIP-Clang; hcc meant amd then."""
    found = findings(HIP_310)
    assert "hip-runtime-mismatch:hcc" not in found and "hip-runtime-mismatch:platform" not in found
    note = found["legacy-hip-setting:hipconfig"]
    assert note.status.value == "info" and "HIP_PLATFORM hcc = amd" in note.message


@pytest.mark.parametrize("fixture", [HIP_35_BASE, HIP_40_BASE])
def test_hip_base_alone_is_still_the_hcc_fallback(fixture):
    """legacy-rocm-build#1140 (3.5.0) and ROCm/ROCm#1382 (4.0): HIP_COMPILER hcc on a HIP after HCC, hcc missing."""
    found = findings(fixture)
    assert found["hip-runtime-mismatch:hcc"].status.value == "fail"
    assert "legacy-hip-setting:hipconfig" not in found


def test_an_hcc_era_hip_is_old_not_broken():
    """ROCm/hip#338: HIP 1.4 with its HCC compiler (working) reports platform hcc."""
    found = findings(HIP_14)
    assert "hip-runtime-mismatch:hcc" not in found and "hip-runtime-mismatch:platform" not in found
    assert "an HCC-era HIP" in found["legacy-hip-setting:hipconfig"].message


def test_hip_platform_hcc_in_the_environment_means_amd():
    found = findings(HIP_63, env={"HIP_PLATFORM": "hcc"})
    assert "hip-runtime-mismatch:platform" not in found, found.get("hip-runtime-mismatch:platform")
    assert found["legacy-hip-setting:HIP_PLATFORM"].status.value == "info"


def test_hip_platform_nvcc_on_an_amd_machine_is_still_nvidia_and_says_so():
    found = findings(HIP_63, env={"HIP_PLATFORM": "nvcc"})
    assert found["hip-runtime-mismatch:platform"].status.value == "fail"
    assert "nvcc is HIP's old name for nvidia" in found["hip-runtime-mismatch:platform"].message


def test_a_value_hipcc_never_knew_is_a_warning_not_nvidia():
    found = findings(HIP_63, env={"HIP_PLATFORM": "rocclr"})
    assert "hip-runtime-mismatch:platform" not in found
    assert "unknown HIP_PLATFORM" in found["legacy-hip-setting:HIP_PLATFORM"].message


def test_hip_compiler_hcc_set_in_the_environment_is_the_stale_variable():
    found = findings(HIP_40_BASE, env={"HIP_COMPILER": "hcc"})
    assert "hip-runtime-mismatch:hcc" not in found
    assert found["legacy-hip-setting:HIP_COMPILER"].status.value == "warn"


def test_hcc_amdgpu_target_without_the_gpus_gfx_warns_and_with_it_informs():
    gpu = [kfd_node(cpu_cores=12), kfd_node(100302, 0x73ff, 0xc00)]
    found = findings(env={"HCC_AMDGPU_TARGET": "gfx1030"}, kfd=gpu)
    assert found["legacy-hip-setting:HCC_AMDGPU_TARGET"].status.value == "warn"
    assert "runs gfx1032" in found["legacy-hip-setting:HCC_AMDGPU_TARGET"].message
    found = findings(env={"HCC_AMDGPU_TARGET": "gfx1030", "HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, kfd=gpu)
    assert found["legacy-hip-setting:HCC_AMDGPU_TARGET"].status.value == "info"


def test_a_current_setup_has_no_legacy_finding():
    assert problems(findings(HIP_63)).keys().isdisjoint({"legacy-hip-setting"})
    assert findings(HIP_63)["legacy-hip-setting"].status.value == "ok"


@pytest.mark.parametrize("fixture", ["rocm-smi/linux-2x-gfx10-old-concise-columns-fan-255pct-2021.txt",
                                     "rocm-smi/linux-rocm1.9-old-columns-gpu0-is-a-non-amd-drm-card.txt"])
def test_old_rocm_smi_columns_are_not_read_as_todays(fixture):
    """rocm-smi before the Device/Node/IDs layout: the first column is a DRM card (legacy-rocm-build#561: GPU 0 was
    no AMD GPU), and no node, device id or GUID column exists; nothing is read as one."""
    parsed = parse_rocm_smi(text(fixture))
    assert parsed["devices"] == [] and parsed["garbled"] == []
