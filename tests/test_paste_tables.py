"""GPU tables in a paste (nvidia-smi, deviceQuery, clinfo, amd-smi's default table) become facts the checks use: the
GPUs' names, gfx targets and compute capabilities, the NVIDIA driver and the CUDA it supports. The tables are real
outputs from public threads (tests/fixtures/INDEX.md names each)."""

from pathlib import Path

from rocm_doctor.engine.model import Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.log_machine import parse_log
from rocm_doctor.parsers.paste_tables import parse_tables
from rocm_doctor.triage import triage

FIXTURES = Path(__file__).parent / "fixtures"
SMI_NEW = "nvidia-smi/windows-rtx3060-laptop-driver560.94-cuda12.6-default-table-wddm-excerpt.txt"
SMI_OLD = "nvidia-smi/linux-a40-4q-vgpu-driver510.85.02-cuda11.6-default-table-excerpt.txt"
SMI_CUT = "nvidia-smi/linux-geforce-driver525.147.05-cuda12.0-default-table-excerpt.txt"
DEVICE_QUERY = "cuda-samples/wsl-rtx3060ti-devicequery-cuda12.2-excerpt.txt"
CLINFO_PACKAGE = "clinfo/linux-r9-290-gfx701-clinfo-package-layout-rocm2.8-excerpt.txt"
CLINFO_ROCM = "clinfo/linux-vega64-gfx900-rocm-clinfo-layout-excerpt.txt"
CLINFO_NVIDIA = "clinfo/linux-rocm-clinfo-nvidia-cuda11.6-and-intel-platforms-excerpt.txt"
AMD_SMI_TABLE = "amd-smi/linux-cloud-vm-mi300x-vf-gfx942-default-table-rocm7.2.4.txt"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_nvidia_smi_tables_of_both_layouts_give_driver_cuda_and_gpus():
    new, old, cut = (parse_tables(read(name)) for name in (SMI_NEW, SMI_OLD, SMI_CUT))
    assert [(d["version"], d["cuda"]) for d in new["drivers"]] == [("560.94", "12.6")]
    assert [(d["version"], d["cuda"]) for d in old["drivers"]] == [("510.85.02", "11.6")]
    assert [(g["index"], g["name"]) for g in old["gpus"]] == [(0, "NVIDIA A40-4Q")]
    # nvidia-smi cuts long names with "...": no name is better than a wrong one
    assert [(g["index"], g["name"]) for g in new["gpus"] + cut["gpus"]] == [(0, None), (0, None)]


def test_device_query_states_the_compute_capability_and_the_driver_cuda():
    parsed = parse_tables(read(DEVICE_QUERY))
    assert [(g["name"], g["cc"]) for g in parsed["gpus"]] == [("NVIDIA GeForce RTX 3060 Ti", (8, 6))]
    assert parsed["drivers"][0]["cuda"] == "12.2"


def test_clinfo_in_both_layouts_gives_the_gfx_target_and_board_name():
    package, rocm, nvidia = (parse_tables(read(name)) for name in (CLINFO_PACKAGE, CLINFO_ROCM, CLINFO_NVIDIA))
    assert [(g["gfx"], g["name"]) for g in package["gpus"]] == [("gfx701", "Hawaii PRO [Radeon R9 290/390]")]
    assert package["drivers"] == []  # an AMD OpenCL driver's version names no ROCm release: nothing judges it
    assert [(g["gfx"], g["name"]) for g in rocm["gpus"]] == [("gfx900", "Vega 10 XL/XT [Radeon RX Vega 56/64]")]
    assert nvidia["gpus"] == [] and [d["cuda"] for d in nvidia["drivers"]] == ["11.6"]
    assert [t["gfx"] for t in parse_log(read(CLINFO_ROCM))["targets"]] == ["gfx900"]


def test_a_table_elsewhere_in_a_log_is_not_read_as_one():
    """Only what a tool printed counts: rocminfo's own `Name: gfx1030` is rocminfo's parser's business."""
    assert parse_tables("  Name:                    gfx1030\n  Board name: not clinfo\n") == {"gpus": [], "drivers": []}


def test_pasted_tables_count_as_those_tools_output():
    report, facts = triage([(SMI_OLD, (FIXTURES / SMI_OLD).read_bytes()),
                            (AMD_SMI_TABLE, (FIXTURES / AMD_SMI_TABLE).read_bytes())])
    assert {"nvidia-smi", "amd-smi-static-json"} <= set(facts.get("paste.summary")["tools"])
    assert [d["name"] for d in facts.get("smi.devices")] == ["AMD Instinct MI300X VF"]
    assert [r["version"] for r in facts.get("log.machine")["rocm"]] == ["7.2.4"]
    # amd-smi's table names the GPU, not its target: the GPU catalog gives it
    assert [(t["gfx"], t["via"]) for t in facts.get("log.machine")["targets"]] == [
        ("gfx942", "AMD Instinct MI300X VF in the GPU catalog")]
    ask = next(f for f in report.findings if f.check == "paste-not-enough-to-tell")
    assert "nvidia-smi" not in ask.message


def test_a_driver_older_than_the_cuda_torch_named_beside_it_fails():
    """nvidia-smi's real table (driver 510.85.02, CUDA 11.6) with a cu121 torch named in the same ticket."""
    report, _ = triage([(SMI_OLD, (FIXTURES / SMI_OLD).read_bytes() + b"torch-2.1.0+cu121\n")])
    first = report.diagnosis.root_causes[0].finding
    assert first.check == "log-driver-older-than-torch-cuda" and first.status == Status.FAIL
    assert first.data["driver_cuda"] == "11.6" and first.data["torch_cuda"] == "12.1"
    same_major, _ = triage([(SMI_NEW, (FIXTURES / SMI_NEW).read_bytes() + b"torch-2.7.0+cu126\n")])
    assert not same_major.diagnosis.root_causes


def _sm_check(gpus, torch):
    from rocm_doctor.checks.log_machine import LogSmNotInTorchBuild

    facts = Facts(Observations())
    facts.set("log.machine", {"path": "paste", "targets": [], "overrides": [], "torch": torch, "rocm": [], "hip": [],
                              "pythons": [], "programs": [], "env": [], "gpus": gpus, "drivers": []})
    return LogSmNotInTorchBuild().run(facts)


def test_the_gpu_a_tool_shows_is_judged_against_the_cuda_wheels_the_log_names():
    query = parse_log(read(DEVICE_QUERY))["gpus"]
    (fine,) = _sm_check(query, [{"version": "2.7.0+cu126", "line": "torch 2.7.0+cu126"}])
    assert fine.status == Status.OK and "sm_86" in fine.message
    newer = [dict(query[0], cc=(12, 0), name="a compute capability 12.0 GPU")]  # the cu126 wheels stop at 9.0
    (missing,) = _sm_check(newer, [{"version": "2.7.0+cu126", "line": "torch 2.7.0+cu126"}])
    assert missing.status == Status.FAIL and missing.data["sm"] == "sm_120"
    assert "cu128" in missing.remediation[0]
    assert _sm_check(query, []).status == Status.SKIP


def test_amd_smi_static_names_the_target_itself():
    static = "amd-smi/linux-ubuntu24.04-minisforum-hx470-gfx1150-apu-static-full-rocm7.2.0.txt"
    parsed = parse_tables(read(static))
    assert [(g["tool"], g["name"], g["gfx"]) for g in parsed["gpus"]] == [("amd-smi", "AMD Radeon Graphics", "gfx1150")]
    assert [t["gfx"] for t in parse_log(read(static))["targets"]] == ["gfx1150"]
