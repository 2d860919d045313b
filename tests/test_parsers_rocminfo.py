"""rocminfo parser on every real rocminfo output in tests/fixtures/rocminfo (see tests/fixtures/INDEX.md)."""

from pathlib import Path

import pytest

from rocm_doctor.parsers.rocminfo import gpu_agents, parse_rocminfo

FIXTURES = Path(__file__).parent / "fixtures" / "rocminfo"


def parse(name):
    return parse_rocminfo((FIXTURES / name).read_text(encoding="utf-8"))


def gpus(result):
    return [(a["gfx"], a["marketing_name"]) for a in gpu_agents(result["agents"])]


def test_fixture_list_is_covered():
    covered = {case[0] for case in HEALTHY} | {case[0] for case in BROKEN}
    assert covered == {p.name for p in FIXTURES.iterdir()}


HEALTHY = [
    ("linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt", 3, "1.1",
     [("gfx1030", "AMD Radeon RX 6800"), ("gfx90c", "AMD Radeon Graphics")]),
    ("linux-gfx1151-strixhalo-apu-with-npu-agent-rocm7.2.txt", 3, "1.18", [("gfx1151", "Radeon 8060S Graphics")]),
    ("linux-cloud-vm-mi300x-vf-gfx942-xeon8568y-rocm7.2.4.txt", 2, "1.18", [("gfx942", "AMD Instinct MI300X VF")]),
    ("linux-gfx1010-rx5700xt-plus-gfx1036-igpu-rocky8-rocm6.4.2.txt", 3, "1.15",
     [("gfx1010", "AMD Radeon RX 5700 XT"), ("gfx1036", "AMD Radeon Graphics")]),
    ("linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt", 2, "1.1", [("gfx1032", "AMD Radeon RX 6600 XT")]),
    ("linux-ubuntu22.04-radeon780m-gfx1103-apu-7940hs-rocm5.7.0.txt", 2, "1.1", [("gfx1103", "AMD Radeon Graphics")]),
    ("wsl-rx7900xtx-gfx1100-intel-host-rocm6.3.4.txt", 2, "1.1", [("gfx1100", "AMD Radeon RX 7900 XTX")]),
]


@pytest.mark.parametrize("name, agents, runtime, expected_gpus", HEALTHY)
def test_healthy_outputs(name, agents, runtime, expected_gpus):
    result = parse(name)
    assert result["state"] == "ok"
    assert result["complete"] is True
    assert len(result["agents"]) == agents
    assert result["runtime_version"] == runtime
    assert gpus(result) == expected_gpus
    assert result["agents"][0]["device_type"] == "CPU"
    assert result["wsl"] is name.startswith("wsl")


BROKEN = [
    ("container-ubuntu-on-opensuse-podman-kfd-permission-denied-nogroup.txt", "kfd-permission-denied", False, True),
    ("linux-navi14-rx5500-kfd-cannot-allocate-memory-rocm3.10.txt", "kfd-no-memory", False, True),
    ("linux-ubuntu20.04-kfd-enomem-dkms-built-for-other-kernel-rocm4.5.2.txt", "kfd-no-memory", False, True),
    ("wsl-rx7600xt-rocr-unsupported-gpu-rocm6.2.3.txt", "unsupported-gpu", True, None),
    ("wsl-rx7800xt-rocm6.4.2-no-wsl-build-out-of-resources.txt", "out-of-resources", True, None),
    ("wsl-rx9060xt-gfx1200-win10-rocdxg-out-of-resources-rocm7.2.txt", "out-of-resources", True, None),
    ("wsl2-2021-rx580-rock-not-loaded-no-dev-kfd.txt", "rock-not-loaded", False, False),
    ("linux-rock-module-not-loaded-rocminfo-issue-42.txt", "rock-not-loaded", False, False),
    # ROCr skipped the GPU node it does not know: "Agent creation failed. The GPU node has an unrecognized id."
    ("linux-arch-agent-creation-failed-gpu-node-unrecognized-id-rocm5.3-excerpt.txt", "unrecognized", False, True),
    ("container-fedora39-buildah-rootless-kfd-permission-denied-root-not-in-video.txt", "kfd-permission-denied", False,
     True),
    ("linux-ubuntu24.04-rx9070xt-aocc-env-agent-creation-failed-invalid-argument-rocm7.2.1.txt", "hsa-error", False,
     True),
]


@pytest.mark.parametrize("name, state, wsl, rock_loaded", BROKEN)
def test_error_outputs(name, state, wsl, rock_loaded):
    result = parse(name)
    assert result["state"] == state
    assert result["wsl"] is wsl
    assert result["rock_loaded"] is rock_loaded
    assert result["agents"] == []
    assert result["evidence"], "the lines that show the error are kept"


def test_error_details():
    assert parse(BROKEN[0][0])["kfd_error"] == "Permission denied"
    assert any('"nogroup"' in line for line in parse(BROKEN[0][0])["evidence"])
    navi = parse(BROKEN[1][0])
    assert navi["kfd_error"] == "Cannot allocate memory"
    assert navi["hsa_error"] == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    assert parse(BROKEN[6][0])["kfd_error"] == "No such file or directory"


def test_npu_agent_is_not_a_gpu():
    result = parse("linux-gfx1151-strixhalo-apu-with-npu-agent-rocm7.2.txt")
    npu = result["agents"][2]
    assert (npu["name"], npu["marketing_name"], npu["device_type"]) == ("aie2p", "RyzenAI-npu5", "DSP")
    assert npu["gfx"] is None and npu["uuid"] == "AIE-XX"
    gpu = gpu_agents(result["agents"])[0]
    assert gpu["is_apu"] is True
    assert gpu["vram_kb"] == 92274688
    assert gpu["isas"] == ["gfx1151", "gfx11-generic"]
    assert gpu["target_id"] == "gfx1151"


def test_mi300x_details():
    result = parse("linux-cloud-vm-mi300x-vf-gfx942-xeon8568y-rocm7.2.4.txt")
    gpu = gpu_agents(result["agents"])[0]
    assert result["rock_version"] == "6.16.13"
    assert gpu["target_id"] == "gfx942:sramecc+:xnack-"
    assert gpu["isas"][1] == "gfx9-4-generic:sramecc+:xnack-"
    assert gpu["uuid"] == "GPU-43529fe3ce00c724"
    assert (gpu["chip_id"], gpu["compute_units"], gpu["node"], gpu["wavefront_size"]) == ("0x74b5", 304, 1, 64)
    assert gpu["vram_kb"] == 200998912
    assert gpu["pci_bus"] == "83:00.0"


def test_padded_layout_values_are_stripped():
    result = parse("linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt")
    rx6800, igpu = gpu_agents(result["agents"])
    assert rx6800["uuid"] == "GPU-362702d6dbbf2d1d"
    assert rx6800["chip_id"] == "0x73bf" and rx6800["compute_units"] == 60
    assert rx6800["vram_kb"] == 16760832 and rx6800["pci_bus"] == "03:00.0"
    assert igpu["target_id"] == "gfx90c:xnack-" and igpu["wavefront_size"] == 64
    assert igpu["is_apu"] is None, "old rocminfo prints no Memory Properties line"


def test_igpu_flag_and_generic_isa():
    result = parse("linux-gfx1010-rx5700xt-plus-gfx1036-igpu-rocky8-rocm6.4.2.txt")
    dgpu, igpu = gpu_agents(result["agents"])
    assert dgpu["is_apu"] is False and igpu["is_apu"] is True
    assert dgpu["target_id"] == "gfx1010:xnack-"
    assert igpu["isas"] == ["gfx1036", "gfx10-3-generic"]


def test_wsl_gpu_has_no_uuid_or_bdf():
    gpu = gpu_agents(parse("wsl-rx7900xtx-gfx1100-intel-host-rocm6.3.4.txt")["agents"])[0]
    assert gpu["uuid"] is None and gpu["bdfid"] is None and gpu["pci_bus"] is None
    assert gpu["chip_id"] == "0x744c" and gpu["compute_units"] == 96


def test_empty_flags_pool_and_trailing_space_done_line():
    result = parse("linux-ubuntu22.04-radeon780m-gfx1103-apu-7940hs-rocm5.7.0.txt")
    gpu = gpu_agents(result["agents"])[0]
    assert result["complete"] is True
    assert [p["segment"] for p in gpu["pools"]][:2] == ["GLOBAL; FLAGS: COARSE GRAINED", "GLOBAL; FLAGS:"]
    assert gpu["vram_kb"] == 524288 and gpu["chip_id"] == "0x15bf"


def test_truncated_output_keeps_the_agents_seen():
    text = (FIXTURES / HEALTHY[0][0]).read_text(encoding="utf-8")
    result = parse_rocminfo(text[: len(text) // 2])
    assert result["state"] == "ok" and result["complete"] is False
    assert [a["agent"] for a in result["agents"]] == [1, 2]
    assert result["agents"][1]["gfx"] == "gfx1030"


def test_garbage_is_unrecognized():
    assert parse_rocminfo("")["state"] == "unrecognized"
    assert parse_rocminfo(None)["agents"] == []
    assert parse_rocminfo("Segmentation fault (core dumped)\n")["state"] == "unrecognized"
