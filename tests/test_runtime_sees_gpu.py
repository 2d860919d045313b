"""A GPU is present but the layer above sees none: never "ok, nothing to judge". Real outputs (tests/fixtures, INDEX.md
rows) on machines built with rocm_doctor.testing.machine; the PCI ids and KFD nodes are the ones the thread names."""

from pathlib import Path

from rocm_doctor.diagnose import replay
from rocm_doctor.parsers.rocminfo import parse_rocminfo
from rocm_doctor.testing.machine import kfd_node, observations, torch_lines

FIXTURES = Path(__file__).parent / "fixtures"
FIJI = ("0000:01:00.0", "0x7300", "amdgpu")  # legacy-rocm-build#223: lspci shows the R9 Fury bound to amdgpu
RX9070XT = ("0000:03:00.0", "0x7550", "amdgpu")


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def judged(obs):
    report, _ = replay(obs, "test")
    return {f.id: f for f in report.findings}, report.diagnosis


def test_rocminfo_says_when_rocr_skipped_a_gpu_node():
    parsed = parse_rocminfo(text("rocminfo/linux-ubuntu24.04-rx9070xt-aocc-env-agent-creation-failed-invalid-argument-"
                                 "rocm7.2.1.txt"))
    assert parsed["agent_creation_failed"] is True and parsed["state"] == "hsa-error"
    assert "The GPU node has an unrecognized id." in parsed["evidence"]
    excerpt = parse_rocminfo(text("rocminfo/linux-arch-agent-creation-failed-gpu-node-unrecognized-id-rocm5.3-excerpt.txt"))
    assert excerpt["agent_creation_failed"] is True and excerpt["agents"] == []


def test_kfd_without_the_gpu_pci_shows_is_the_first_cause():
    """legacy-rocm-build#223: rocm_agent_enumerator prints only gfx000 while lspci shows the Fiji card on amdgpu."""
    obs = observations({"rocm-agent-enumerator": text(
        "rocm-agent-enumerator/linux-ubuntu16.04-r9-fury-fiji-amdgpu-bound-only-gfx000-rocm1.6.txt")}, pci=[FIJI])
    found, diagnosis = judged(obs)
    finding = found["rocm-runtime-sees-no-gpu:kfd"]
    assert finding.status.value == "fail"
    assert "PCI 0000:01:00.0: AMD device 0x7300 (driver amdgpu)" in finding.evidence
    assert "rocm_agent_enumerator: no GPU (only gfx000)" in finding.evidence
    assert diagnosis.root_causes[0].finding.id == "rocm-runtime-sees-no-gpu:kfd"


def test_kfd_listing_one_of_two_gpus_is_a_warning_naming_the_gfx8_atomics_rule():
    """legacy-rocm-build#223 (comment): with an RX 470 next to a Vega 56, KFD lists only the gfx900."""
    obs = observations({"rocm-agent-enumerator": text(
        "rocm-agent-enumerator/linux-rx470-plus-vega56-kfd-lists-only-gfx900-rocm1.6.txt")},
        pci=[("0000:26:00.0", "0x67df", "amdgpu"), ("0000:27:00.0", "0x687f", "amdgpu")])
    finding = judged(obs)[0]["rocm-runtime-sees-no-gpu:kfd"]
    assert finding.status.value == "warn"
    assert "gives ROCm 1 (no KFD node for the rest)" in finding.message


def test_a_radeon_bound_gpu_is_named_as_the_cause():
    obs = observations({"rocm-agent-enumerator": "gfx000\n"}, pci=[("0000:01:00.0", "0x67df", "radeon")], kfd=[kfd_node()])
    finding = judged(obs)[0]["rocm-runtime-sees-no-gpu:kfd"]
    assert "bound to radeon, not amdgpu" in finding.message


def test_rocr_skipping_the_kfd_node_is_a_fail_with_both_readings_and_the_table():
    """legacy-rocm-build#6233: rocminfo 'The GPU node has an unrecognized id' on an RX 9070 XT that KFD lists."""
    obs = observations(
        {"rocminfo": (text("rocminfo/linux-ubuntu24.04-rx9070xt-aocc-env-agent-creation-failed-invalid-argument-"
                           "rocm7.2.1.txt"), 1)},
        pci=[RX9070XT], kfd=[kfd_node(cpu_cores=16), kfd_node(120001, 0x7550, 0x300)],
        probes={"rocm.paths": {"roots": [{"path": "/opt/rocm", "exists": True, "realpath": "/opt/rocm-7.2.1",
                                           "version": "7.2.1-81"}], "PATH": [], "LD_LIBRARY_PATH": []}})
    found, diagnosis = judged(obs)
    finding = found["rocm-runtime-sees-no-gpu:runtime"]
    assert finding.status.value == "fail"
    assert "KFD node 1: gfx1201" in finding.evidence
    assert "rocminfo: The GPU node has an unrecognized id." in finding.evidence
    assert any(line.startswith("Linux ROCm 7.2 (from /opt/rocm/.info/version): gfx1201 supported") for line in
               finding.evidence)
    assert "does not know this GPU's id" in finding.message
    assert diagnosis.root_causes[0].finding.id == "rocm-runtime-sees-no-gpu:runtime"


def test_a_release_older_than_the_gpu_is_named_with_the_first_release_that_lists_it():
    """rocm-arch#933's rocminfo (ROCr skipped the node) on the RDNA4 card of the row above with ROCm 6.3."""
    obs = observations(
        {"rocminfo": text("rocminfo/linux-arch-agent-creation-failed-gpu-node-unrecognized-id-rocm5.3-excerpt.txt"),
         "hipconfig-version": "6.3.42131-fa1d09cbd"},
        pci=[RX9070XT], kfd=[kfd_node(cpu_cores=16), kfd_node(120001, 0x7550, 0x300)],
        torch=torch_lines("2.7.1+rocm6.3", "6.3.42131-fa1d09cbd", available=False))
    found, diagnosis = judged(obs)
    finding = found["rocm-runtime-sees-no-gpu:runtime"]
    assert "ROCm 6.3.42131-fa1d09cbd predates gfx1201: 6.4.1 is the first release that supports it" in finding.message
    assert "torch 2.7.1+rocm6.3: torch.cuda.is_available() is False" in finding.evidence
    root = diagnosis.root_causes[0]
    assert root.finding.id == "rocm-runtime-sees-no-gpu:runtime" and "torch-cuda-unavailable" in root.symptoms


def test_torch_seeing_no_gpu_carries_the_hardware_side():
    obs = observations({"rocminfo": text("rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt")},
                       pci=[("0000:0c:00.0", "0x73ff", "amdgpu")],
                       torch=torch_lines("2.7.1+rocm6.3", "6.3.42131-fa1d09cbd", available=False))
    found, _ = judged(obs)
    assert found["rocm-runtime-sees-no-gpu"].status.value == "ok"
    assert "PCI 0000:0c:00.0: AMD device 0x73ff (driver amdgpu)" in found["torch-cuda-unavailable"].evidence


def test_a_visibility_variable_that_hides_the_gpu_explains_the_runtime_finding():
    cpu_only = text("rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt").split("Agent 2")[0]
    obs = observations({"rocminfo": cpu_only + "*** Done ***\n"}, pci=[("0000:0c:00.0", "0x73ff", "amdgpu")],
                       kfd=[kfd_node(cpu_cores=12), kfd_node(100302, 0x73ff, 0xc00)],
                       env={"PATH": "/usr/bin", "ROCR_VISIBLE_DEVICES": ""})
    found, diagnosis = judged(obs)
    assert "ROCR_VISIBLE_DEVICES= chooses which GPUs" in found["rocm-runtime-sees-no-gpu:runtime"].message
    root = diagnosis.root_causes[0]
    assert root.finding.id.startswith("gpu-visibility-env") and "rocm-runtime-sees-no-gpu:runtime" in root.symptoms


def test_no_false_alarm_where_the_runtime_lists_the_gpu_or_did_not_answer():
    listed = observations({"rocminfo": text("rocminfo/linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt")},
                          pci=[("0000:03:00.0", "0x73bf", "amdgpu"), ("0000:0b:00.0", "0x1638", "amdgpu")])
    assert judged(listed)[0]["rocm-runtime-sees-no-gpu"].status.value == "ok"
    silent = observations({}, pci=[FIJI])
    assert judged(silent)[0]["rocm-runtime-sees-no-gpu"].status.value == "skip"
