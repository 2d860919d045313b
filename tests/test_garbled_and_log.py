"""Garbled tool output is reported as a sign of a broken or mixed install, not parsed as normal; a log given with
--log is read for the machine it came from. Real outputs from tests/fixtures (INDEX.md); a garbled case is two real
outputs run together, or one real output with the one impossible value the test names."""

import json
from pathlib import Path

import pytest

from rocm_doctor.diagnose import replay
from rocm_doctor.parsers.agent_enumerator import parse_target_lines
from rocm_doctor.parsers.amd_smi import parse_amd_smi
from rocm_doctor.parsers.log_machine import parse_log
from rocm_doctor.parsers.rocminfo import parse_rocminfo
from rocm_doctor.parsers.rocm_smi import parse_rocm_smi
from rocm_doctor.testing.machine import kfd_node, observations, torch_lines

FIXTURES = Path(__file__).parent / "fixtures"
HIP_63 = "hipconfig/linux-mint22.1-gfx90c-apu-full-rocm6.3.2.txt"
HIP_40 = "hipconfig/linux-debian-bullseye-hip-base4.0-only-no-compiler-hcc-fallback.txt"
RX6800 = "rocminfo/linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt"
GFX906_LOG = "errors/linux-gfx906-radeonvii-rocblas-no-tensilelibrary-for-gfx906-rocm6.4.0.txt"
GFX1102_LOG = "errors/linux-fedora-rx7600xt-gfx1102-rocblas-tensilelibrary-missing-gfx1102-torch2.6.0-rocm6.2.4.txt"
OVERRIDE_LOG = ("logs/amd_log_level/linux-nobara-rx7600xt-gfx1102-override-11.0.0-missing-CO-hipblaslt-then-segfault-"
                "torch-rocm6.2.txt")


def text(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def judged(obs, log=None):
    if log is not None:
        obs.add_probe("user.log", {"path": log, "text": text(log)})
    report, facts = replay(obs, "test")
    return {f.id: f for f in report.findings}, report.diagnosis, facts


# ---- garbled output ------------------------------------------------------------------------------------------------

def test_two_hipconfig_outputs_run_together_are_reported_with_their_lines():
    found, _, _ = judged(observations({"hipconfig-full": text(HIP_63) + text(HIP_40)}))
    finding = found["tool-output-garbled:hipconfig --full"]
    assert finding.status.value == "warn" and "HIP version printed 2 times" in finding.message
    assert any("HIP version: 6.3.42134-a9a80e791 | HIP version  : 4.0.20496-4f163c68" in e for e in finding.evidence)


def test_rocminfo_printed_twice_repeats_its_agent_numbers():
    parsed = parse_rocminfo(text(RX6800) * 2)
    assert parsed["garbled"][0]["what"] == "agent numbers repeat (Agent 1, Agent 2, Agent 3)"


def test_an_impossible_gfx_and_an_impossible_pool_are_garbled_not_gpus():
    real = text(RX6800)
    named = real.replace("  Name:                    gfx1030", "  Name:                    gfx99999", 1)
    parsed = parse_rocminfo(named)
    assert any("named gfx99999, which is no gfx target" in g["what"] for g in parsed["garbled"])
    first_pool = real.index("COARSE GRAINED", real.index("gfx1030"))
    size = real.index("Size:", first_pool)
    end = real.index("\n", size)
    zero = real[:size] + "Size:                    0(0x0) KB" + real[end:]
    assert any("memory pool of 0 bytes" in g["what"] for g in parse_rocminfo(zero)["garbled"])


def test_smi_and_enumerator_values_no_gpu_has_are_garbled():
    static = json.dumps([{"gpu": 0, "asic": {"market_name": "AMD Radeon RX 7900 XTX", "target_graphics_version": "gfx99999"},
                          "vram": {"size": {"value": 0, "unit": "MB"}}}])
    whats = [g["what"] for g in parse_amd_smi(static)["garbled"]]
    assert whats == ["GPU 0: gfx 'gfx99999' is no gfx target", "GPU 0: memory size 0 bytes"]
    huge = json.dumps({"card0": {"Card Series": "Navi 31", "VRAM Total Memory (B)": str(1 << 60)}})
    assert "memory size" in parse_rocm_smi(huge)["garbled"][0]["what"]
    assert parse_target_lines("gfx000\ngfx99999\n")["garbled"][0]["what"] == "'gfx99999' is no gfx target"


@pytest.mark.parametrize("fixture,parse", [
    ("rocm-smi/linux-arch-rx7600xt-gfx1102-plus-raphael-igpu-showhw-gfx11002-rocm6.2.txt", parse_rocm_smi),
    ("amd-smi/linux-ubuntu24.04-minisforum-hx470-gfx1150-apu-static-full-rocm7.2.0.txt", parse_amd_smi),
    ("rocminfo/wsl-rx7900xtx-gfx1100-intel-host-rocm6.3.4.txt", parse_rocminfo)])
def test_known_quirks_of_healthy_tools_are_not_garbled(fixture, parse):
    """rocm-smi 6.2's gfx11002 for gfx1102, an APU's shared VRAM, WSL's clock value: quirks, not a broken install."""
    assert parse(text(fixture))["garbled"] == []


def test_smi_error_lines_of_a_tool_that_exited_are_reported():
    """rocm_smi_lib#182: rocm-smi prints 'Exception caught: map::at' (here exiting 0, so no crash finding)."""
    obs = observations({"rocm-smi-json": text(
        "rocm-smi/linux-fedora40-radeonvii-rocm-smi-6.1.2-map-at-get_multiplier_from_str-assert.txt")})
    finding = judged(obs)[0]["external-tool-misbehaved:rocm-smi"]
    assert finding.status.value == "warn" and any("map::at" in e for e in finding.evidence)


# ---- what a log says about its machine -------------------------------------------------------------------------------

def test_the_log_names_targets_overrides_torch_rocm_and_interpreter():
    assert [t["gfx"] for t in parse_log(text(GFX906_LOG))["targets"]] == ["gfx906"]
    assert parse_log(text(GFX906_LOG))["rocm"][0]["version"] == "6.4.0"
    comfy = parse_log(text(GFX1102_LOG))
    assert [t["gfx"] for t in comfy["targets"]] == ["gfx1102"], "the TensileLibrary file names are not targets"
    assert comfy["pythons"][0] == {"prefix": "/opt/ComfyUI/comfyvenv", "python": "3.12",
                                   "line": comfy["pythons"][0]["line"]}
    assert [t["gfx"] for t in parse_log(text(OVERRIDE_LOG))["targets"]] == ["gfx1100"]
    wsl = parse_log(text("collect_env/wsl-rx7900xtx-torch2.4.0-rocm6.3.4-amdsmi-error34.txt"))
    assert wsl["torch"][0]["version"] == "2.4.0+rocm6.3.4.git7cecbf6d"
    line = "HSA_OVERRIDE_GFX_VERSION=10.3.0 python main.py"
    assert parse_log(line)["overrides"] == [{"variable": "HSA_OVERRIDE_GFX_VERSION", "value": "10.3.0", "line": line}]


def test_a_dropped_target_in_the_logs_rocm_is_judged_without_the_users_machine():
    """ROCm/ROCm#4625 replayed on a machine with no AMD GPU: the log alone says gfx906 and /opt/rocm-6.4.0."""
    found, diagnosis, facts = judged(observations({}), log=GFX906_LOG)
    finding = found["log-gfx-unsupported-by-rocm:gfx906"]
    assert finding.status.value == "warn" and "rocBLAS 6.4.0 ships no gfx906 Tensile library" in finding.message
    assert all("from the log" in line for line in finding.evidence[:2])
    assert facts.get("log.machine")["path"] == GFX906_LOG


def test_the_log_target_is_judged_against_this_machines_torch_when_it_has_no_gpu():
    """ROCm/ROCm#4380 comment #5 (gfx1102 in the log) on a machine whose ROCm torch's wheels lack gfx1102."""
    obs = observations({}, torch=torch_lines("2.5.1+rocm6.2", "6.2.41133-dd7f95766", available=False))
    found, _, _ = judged(obs, log=GFX1102_LOG)
    finding = found["log-gfx-not-in-torch-build"]
    assert finding.status.value == "fail" and "has no code for gfx1102" in finding.message
    assert "whose wheels have gfx1102 code" in " ".join(finding.remediation)
    other = found["log-from-another-interpreter"]
    assert other.status.value == "warn" and "/opt/ComfyUI/comfyvenv (Python 3.12)" in other.message


def test_a_logged_override_names_the_target_the_runtime_looked_for():
    log = "logs/override-then-invalid-device-function.txt"
    obs = observations({}, torch=None)
    obs.add_probe("user.log", {"path": log, "text": "$ HSA_OVERRIDE_GFX_VERSION=10.3.0 python app.py\n"
                                                   "  File \"/home/u/venv/lib/python3.10/site-packages/torch-2.1.2+rocm5.6"
                                                   ".dist-info/x\"\n"
                                                   "RuntimeError: no kernel image for device gfx1030\n"})
    found, _, _ = judged(obs)
    finding = found["log-gfx-not-in-torch-build"]
    assert finding.status.value == "ok", finding.message  # rocm5.6 wheels have gfx1030
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0 from the log" in e for e in finding.evidence)


def test_the_machines_own_gpu_and_torch_come_first():
    obs = observations({"rocminfo": text(RX6800)}, pci=[("0000:03:00.0", "0x73bf", "amdgpu")],
                       kfd=[kfd_node(cpu_cores=12), kfd_node(100300, 0x73bf, 0x300)],
                       torch=torch_lines("2.7.1+rocm6.3", "6.3.42131-fa1d09cbd", available=True,
                                         devices=[{"name": "AMD Radeon RX 6800", "gcnArchName": "gfx1030"}],
                                         arch_list=["gfx1030", "gfx1100"]))
    found, _, _ = judged(obs, log=GFX1102_LOG)
    assert found["log-gfx-not-in-torch-build"].status.value == "skip"
    assert found["log-gfx-unsupported-by-rocm"].status.value == "skip"
