"""What a paste itself shows, read so the cause comes first: a KFD line naming an unsupported chip, and
ROCR_VISIBLE_DEVICES with HIP_VISIBLE_DEVICES set together. Real pastes from tests/data/triage (cases.json names
their threads)."""

from pathlib import Path

from rocm_doctor.triage import triage

PASTES = Path(__file__).parent / "data" / "triage" / "pastes"
PITCAIRN = PASTES / "rocminfo-r9-370-pitcairn-not-supported-in-kfd.txt"  # ROCm/legacy-rocm-build#2232
MASKS = PASTES / "swarmui-rocr-and-hip-visible-devices-both-1-mask-all-gpus.txt"  # SwarmUI#566


def judged(text: str):
    report, _ = triage([("paste.txt", text.encode())])
    return report, {f.id: f for f in report.findings}


def test_a_kfd_line_naming_an_unsupported_chip_is_the_cause_of_kfd_failing_to_open():
    report, found = judged(PITCAIRN.read_text())
    first = report.diagnosis.root_causes[0]
    assert first.finding.id == "known-error-signatures:kfd-gpu-not-supported"
    assert "rocm-kernel-driver" in first.symptoms
    assert not any(i.id.startswith("run-sudo-dkms") for i in report.diagnosis.plan.items)  # no DKMS rebuild fixes it


def test_without_the_kfd_line_cannot_allocate_memory_stays_the_kernel_drivers_failure():
    text = "\n".join(line for line in PITCAIRN.read_text().splitlines() if "kfd kfd" not in line)
    report, found = judged(text)
    assert report.diagnosis.root_causes[0].finding.check == "rocm-kernel-driver"
    assert any(i.id.startswith("run-sudo-dkms") for i in report.diagnosis.plan.items)


def test_hip_indices_past_what_rocr_leaves_hide_every_gpu_without_knowing_the_gpu_count():
    report, found = judged(MASKS.read_text())
    first = report.diagnosis.root_causes[0].finding
    assert first.id == "gpu-visibility-env:HIP_VISIBLE_DEVICES" and first.status.value == "fail"
    assert "ROCR_VISIBLE_DEVICES=1" in first.message and "hide every GPU" in first.message


def test_hip_indices_within_what_rocr_leaves_are_a_selection_not_a_fault():
    report, found = judged(MASKS.read_text().replace("ROCR_VISIBLE_DEVICES=1", "ROCR_VISIBLE_DEVICES=0,1"))
    assert found["gpu-visibility-env:HIP_VISIBLE_DEVICES"].status.value == "info"
    assert not any(r.finding.check == "gpu-visibility-env" for r in report.diagnosis.root_causes)


IGPU = PASTES / "rx6600-plus-3400g-igpu-invalid-device-function.txt"  # ROCm/legacy-rocm-build#3401


def test_integrated_graphics_beside_a_card_asks_for_rocminfo_first_because_the_order_is_open():
    report, found = judged(IGPU.read_text())
    ask = found["paste-not-enough-to-tell"]
    assert "paste next: rocminfo (it lists the GPUs in HIP's order" in ask.message
    assert any("Ryzen 5 3400G with Radeon Vega Graphics" in e for e in ask.evidence)
    alone, found = judged(IGPU.read_text().replace("CPU: AMD Ryzen 5 3400G with Radeon Vega Graphics", ""))
    assert "paste next: python -m torch.utils.collect_env." in found["paste-not-enough-to-tell"].message


def test_a_processor_is_read_as_integrated_graphics_only_when_its_name_says_so():
    from rocm_doctor.parsers.paste_programs import parse_programs

    said = parse_programs("Name: AMD Ryzen 7 5700G with Radeon Graphics\nCPU: AMD Ryzen 9 7950X 16-Core Processor")
    assert [a["name"] for a in said["apus"]] == ["AMD Ryzen 7 5700G with Radeon Graphics"]


def test_a_fix_for_a_line_naming_a_target_asks_for_that_targets_code_not_the_first_gpus():
    # two gfx1100 cards and a gfx1036 iGPU: the loader finds no code object for the iGPU only
    paste = Path(__file__).parent / "fixtures" / "logs" / "amd_log_level" / \
        "linux-2x-gfx1100-plus-gfx1036-igpu-nobinary-for-igpu-then-hang-rocm5.6.txt"
    _, found = judged(paste.read_text())
    for signature in ("code-object-not-found", "hip-no-binary-for-gpu"):  # the line naming it, the one after it
        advice = " ".join(found[f"known-error-signatures:{signature}"].remediation)
        assert "code for gfx1036" in advice and "code for gfx1100" not in advice, signature
    # and no override, which would move the two gfx1100 cards as well
    advice = " ".join(found["known-error-signatures:hip-no-binary-for-gpu"].remediation)
    assert "HSA_OVERRIDE_GFX_VERSION=none (it applies to every GPU, and beside gfx1036 this log names gfx1100" in advice


def test_a_paste_that_states_no_variable_judges_no_environment():
    _, found = judged("Traceback (most recent call last):\n  File \"train.py\", line 3\nRuntimeError: boom\n")
    for check in ("alloc-conf-invalid", "gpu-visibility-env", "env-name-misspelt", "gpu-library-logging-enabled"):
        assert found[check].status.value == "skip", check
        assert "the paste states no environment variable" in found[check].message, check
    # a variable it states is judged: `X= cmd` runs cmd with X set and empty, which hides every GPU
    _, found = judged("$ HIP_VISIBLE_DEVICES= python train.py\nRuntimeError: No HIP GPUs are available\n")
    assert found["gpu-visibility-env:HIP_VISIBLE_DEVICES"].status.value == "fail"
    assert "set but empty" in found["gpu-visibility-env:HIP_VISIBLE_DEVICES"].message
