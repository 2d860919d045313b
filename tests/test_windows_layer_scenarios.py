"""The Windows layer end to end: replayed Windows snapshots whose first root cause is the driver, the Visual C++
runtime or the Windows build, with its plan; a healthy machine with the same probes raises nothing.

The snapshots are built like tests/test_windows_snapshots.py (the fake machine of tests/windows_machine.py, plus the windows_runtime probe) and
rewritten with `python tests/test_windows_layer_scenarios.py`. Real outputs in them: hipInfo of an RX 7900 XTX on
the 6.4.4 preview wheels (ROCm/ROCm#5440), the Windows driver version 31.0.24019.1006 of that card
(ollama/ollama#5124), the torch wheel versions AMD published (rocm-rel-6.4.4: 2.8.0a0+gitfc14c65; rocm-rel-7.2.1:
2.9.1+rocm7.2.1 with HIP 7.2.53211, DrewThomasson/ebook2audiobook#1760), the WinError 126 message torch raises
(Acly/krita-ai-diffusion#1017) with this machine's path, the Windows 10 22H2 machine's Windows NT\\CurrentVersion
values (a `reg query` flutter/flutter keeps as a test fixture). Modelled: the other registry values (that machine's
UBR, which the REG_SZ query leaves out, and every value of the others), torch's HIP version for the 6.4.4 wheels,
and the machines as a whole (each combines these parts).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import pytest

from rocm_doctor.facts import snapshot
from rocm_doctor.probes import windows_env, windows_hip, windows_runtime, windows_vs

HERE = Path(__file__).parent
SNAPSHOTS = HERE / "snapshots"
FIXTURES = HERE / "fixtures"
_spec = importlib.util.spec_from_file_location("windows_snapshot_machine", HERE / "windows_machine.py")
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)

LAYER_CHECKS = {"windows-driver-too-old", "windows-vc-runtime-missing", "windows-build-unsupported"}
VC_KEY = r"SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64"
NT_KEY = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion"
VC_DLLS = ["vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"]
WMI_FIXTURE = "wmi/windows-rx7900xtx-raphael-igpu-get-wmiobject-format-table-driver-31.0.24019.1006.txt"
REG_WINDOWS_10 = "reg/windows10-22h2-build19045-enterprise-reg-query-currentversion-t-reg-sz.txt"
C10_ERROR = ('OSError: [WinError 126] The specified module could not be found. Error loading "' + base.SITE
             + r'\torch\lib\c10.dll" or one of its dependencies.')


def fixture_driver_version() -> str:
    """The RX 7900 XTX's DriverVersion column of the real WMI paste."""
    line = next(l for l in (FIXTURES / WMI_FIXTURE).read_text(encoding="utf-8").splitlines() if "RX 7900 XTX" in l)
    return line.split()[-1]


def windows(m, build: int, ubr: int, display: str, product: str = "Windows 10 Pro") -> None:
    """The Windows NT\\CurrentVersion values (Windows 11 keeps 'Windows 10' in ProductName) and the platform build."""
    m.windows_build = f"10.0.{build}"
    m.registry += [("HKLM", NT_KEY, "CurrentBuild", str(build), "REG_SZ"),
                   ("HKLM", NT_KEY, "CurrentBuildNumber", str(build), "REG_SZ"),
                   ("HKLM", NT_KEY, "UBR", ubr, "REG_DWORD"), ("HKLM", NT_KEY, "DisplayVersion", display, "REG_SZ"),
                   ("HKLM", NT_KEY, "ProductName", product, "REG_SZ"), ("HKLM", NT_KEY, "EditionID", "Professional", "REG_SZ"),
                   ("HKLM", NT_KEY, "InstallationType", "Client", "REG_SZ")]


def real_windows(m, fixture: str, ubr: int) -> None:
    """The values the probe reads, as a real `reg query ... /t REG_SZ` shows them; the UBR DWORD is not in it."""
    rows = [line.strip().split("    ") for line in (FIXTURES / fixture).read_text(encoding="utf-8").splitlines()]
    values = {row[0]: row[2] for row in rows if len(row) == 3 and row[1] == "REG_SZ"}
    m.windows_build = f"10.0.{values['CurrentBuild']}"
    m.registry += [("HKLM", NT_KEY, name, values[name], "REG_SZ") for name in windows_runtime.CURRENT_VERSION_VALUES
                   if name in values] + [("HKLM", NT_KEY, "UBR", ubr, "REG_DWORD")]


def vc_runtime(m, version: str = "v14.44.35211.00") -> None:
    m.system32 += VC_DLLS
    m.registry += [("HKLM", VC_KEY, "Installed", 1, "REG_DWORD"), ("HKLM", VC_KEY, "Version", version, "REG_SZ")]


def layer_machine(root: Path):
    m = base.Machine(root)
    m.probes = (windows_env, windows_hip, windows_vs, windows_runtime)
    return m


def healthy(m) -> None:
    windows(m, 26100, 4652, "24H2")
    vc_runtime(m)


def preview_wheels_on_adrenalin_24_2_1(m) -> None:
    windows(m, 26100, 4652, "24H2")
    vc_runtime(m)
    m.hipinfo = base.HIPINFO_XTX
    m.adrenalin = "24.2.1"
    m.wmi = [dict(base.WMI_XTX, DriverVersion=fixture_driver_version())]
    m.system32 = [n for n in m.system32 if n != "amdhip64_7.dll"]
    m.packages = {"torch": "2.8.0a0+gitfc14c65", "torchvision": "0.24.0a0+c85f008", "torchaudio": "2.6.0a0+1a8f621"}
    m.torch = ("2.8.0a0+gitfc14c65", "6.4.43482")
    m.available = False
    m.devices = []


def no_vc_runtime(m) -> None:
    windows(m, 26100, 4652, "24H2")
    m.import_error = C10_ERROR


def windows_10_under_the_7_2_1_wheels(m) -> None:
    real_windows(m, REG_WINDOWS_10, 6456)
    vc_runtime(m)
    m.adrenalin = "26.2.2"
    m.wmi = [dict(base.WMI_XTX, DriverVersion="32.0.23027.2005")]
    m.packages = {"rocm": "7.2.1", "rocm-sdk-core": "7.2.1", "rocm-sdk-libraries-custom": "7.2.1",
                  "torch": "2.9.1+rocm7.2.1", "torchvision": "0.24.1+rocm7.2.1", "torchaudio": "2.9.1+rocm7.2.1"}
    m.torch = ("2.9.1+rocm7.2.1", "7.2.53211")


SCENARIOS = {
    "windows-layer-rx7900xtx-rocm7.2-healthy": healthy,
    "windows-rx7900xtx-rocm6.4.4-preview-wheels-on-adrenalin-24.2.1": preview_wheels_on_adrenalin_24_2_1,
    "windows-rx7900xtx-torch-import-winerror-126-no-vc-runtime": no_vc_runtime,
    "windows-10-22h2-rx7900xtx-rocm7.2.1-wheels": windows_10_under_the_7_2_1_wheels,
}


def build(name: str, root: Path):
    machine = layer_machine(root)
    SCENARIOS[name](machine)
    return machine.build()


def regenerate() -> None:
    for name in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            data = snapshot.to_dict(build(name, Path(tmp)))
        data["created_at"] = "2026-12-01T08:00:00+00:00"
        (SNAPSHOTS / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print("wrote", SNAPSHOTS / f"{name}.json")


# Tests ---------------------------------------------------------------------------------------------------------

def plan_of(report: dict, root: dict) -> list[dict]:
    steps = {item["id"]: item["step"] for item in report["diagnosis"]["plan"]}
    return [steps[i] for i in root["plan"]]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_snapshot_file_matches_the_probes(name, tmp_path):
    committed = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
    rebuilt = snapshot.to_dict(build(name, tmp_path))
    assert json.loads(json.dumps(rebuilt["observations"])) == committed["observations"]


def test_healthy_machine_raises_nothing_from_the_layer_checks():
    report = base.run_check(SNAPSHOTS / "windows-layer-rx7900xtx-rocm7.2-healthy.json")
    assert base.problems(report) == [], [(f["id"], f["message"]) for f in base.problems(report)]
    by_id = {f["id"]: f for f in report["findings"]}
    assert by_id["windows-vc-runtime-missing"]["status"] == "ok"
    assert "v14.44.35211.00" in by_id["windows-vc-runtime-missing"]["message"]
    assert by_id["windows-driver-too-old:pytorch"]["status"] == "ok"
    assert by_id["windows-build-unsupported:pytorch-on-windows-7.2"]["status"] == "ok"
    assert "Windows 11 24H2 (build 26100.4652" in by_id["windows-build-unsupported:pytorch-on-windows-7.2"]["message"]


def test_preview_wheels_on_an_old_adrenalin_name_the_preview_driver():
    report = base.run_check(SNAPSHOTS / "windows-rx7900xtx-rocm6.4.4-preview-wheels-on-adrenalin-24.2.1.json")
    roots = report["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == "windows-driver-too-old:pytorch", [(r["finding"], r["status"]) for r in roots]
    assert "torch-cuda-unavailable" in roots[0]["symptoms"]
    finding = next(f for f in report["findings"] if f["id"] == "windows-driver-too-old:pytorch")
    assert "PyTorch on Windows 6.4.4 names AMD Software: PyTorch on Windows Preview Edition 25.20.01.14" in finding["message"]
    assert "older than 25.20.01.14" in finding["message"]
    assert any("31.0.24019.1006 = Adrenalin 24.2.1, released 2024-02-26" in e for e in finding["evidence"])
    [step] = plan_of(report, roots[0])
    assert step["kind"] == "advice" and "RN-AMDGPU-WINDOWS-PYTORCH-PREVIEW.html" in step["text"]
    sdk = next(f for f in report["findings"] if f["id"] == "windows-driver-too-old:hip-sdk-7.1")
    assert sdk["status"] == "fail" and "amdhip64_7.dll" in sdk["message"] and "amdhip64_6.dll" in sdk["message"]


def test_missing_vc_runtime_explains_the_torch_import_failure():
    report = base.run_check(SNAPSHOTS / "windows-rx7900xtx-torch-import-winerror-126-no-vc-runtime.json")
    roots = report["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == "windows-vc-runtime-missing", [(r["finding"], r["status"]) for r in roots]
    assert {"torch-not-installed", "known-error-signatures:torch-c10-dll-winerror-126"} <= set(roots[0]["symptoms"])
    finding = next(f for f in report["findings"] if f["id"] == "windows-vc-runtime-missing")
    assert "lacks vcruntime140.dll, vcruntime140_1.dll, msvcp140.dll" in finding["message"]
    assert any(c["kind"] == "error-message" for c in finding["confirmed_by"])
    [step] = plan_of(report, roots[0])
    assert step["argv"] == ["winget", "install", "--id", "Microsoft.VCRedist.2015+.x64", "--exact"]
    assert any("aka.ms/vs/17/release/vc_redist.x64.exe" in s["text"] for a in finding["alternatives"] for s in a["steps"])


def test_windows_10_under_windows_11_only_wheels():
    report = base.run_check(SNAPSHOTS / "windows-10-22h2-rx7900xtx-rocm7.2.1-wheels.json")
    roots = report["diagnosis"]["root_causes"]
    assert roots[0]["finding"].startswith("windows-build-unsupported:"), [(r["finding"], r["status"]) for r in roots]
    finding = next(f for f in report["findings"] if f["id"] == "windows-build-unsupported:pytorch-on-windows-7.2.1")
    assert finding["status"] == "fail" and "Windows 10 22H2 (build 19045.6456)" in finding["message"]
    [step] = plan_of(report, next(r for r in roots if r["finding"] == finding["id"]))
    assert step["kind"] == "advice" and "Windows 11 (build 22000)" in step["text"]
    driver = next(f for f in report["findings"] if f["id"] == "windows-driver-too-old:pytorch")
    assert driver["status"] == "ok" and "7.2.1" in driver["message"]


def test_old_windows_snapshots_skip_the_runtime_check():
    report = base.run_check(SNAPSHOTS / "windows-buildtools-cpp.json")
    by_id = {f["id"]: f for f in report["findings"]}
    assert by_id["windows-vc-runtime-missing"]["status"] == "skip"
    assert all(f["status"] in ("ok", "skip", "info") for f in report["findings"] if f["check"] in LAYER_CHECKS)


@pytest.mark.parametrize("name", ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy",
                                  "linux-2x-h200-cuda-torch2.11", "linux-h200-live-state-idle-healthy"])
def test_no_alarm_on_the_healthy_linux_machines(name):
    report = base.run_check(SNAPSHOTS / f"{name}.json")
    assert [(f["id"], f["status"]) for f in report["findings"] if f["check"] in LAYER_CHECKS
            and f["status"] in ("warn", "fail", "error")] == []


def test_real_cli_replays_the_driver_scenario(doctor):
    result = doctor("check", "--from", str(SNAPSHOTS / "windows-rx7900xtx-rocm6.4.4-preview-wheels-on-adrenalin-24.2.1.json"),
                    "--json")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["diagnosis"]["root_causes"][0]["finding"] == "windows-driver-too-old:pytorch"


if __name__ == "__main__":
    sys.exit(regenerate())
