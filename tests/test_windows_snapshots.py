"""Replayed Windows snapshots, end to end: `rocm-doctor check --from tests/snapshots/windows-*.json --json`.

The snapshots are built from the fake machine of tests/windows_machine.py (run `python tests/test_windows_snapshots.py`
to rewrite them): the real Windows probes on Linux against a FakeWindowsHost, with fake folder trees, a fake registry
and the real vswhere / hipInfo outputs from tests/fixtures; the torch child's and WMI's outputs are recorded as
they would be on Windows.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import pytest

from rocm_doctor.facts import snapshot

_spec = importlib.util.spec_from_file_location("windows_machine", Path(__file__).with_name("windows_machine.py"))
machine = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(machine)
SNAPSHOTS, SCENARIOS, build = machine.SNAPSHOTS, machine.SCENARIOS, machine.build
run_check, typed, problems = machine.run_check, machine.typed, machine.problems


def regenerate() -> None:
    SNAPSHOTS.mkdir(exist_ok=True)
    for name in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            data = snapshot.to_dict(build(name, Path(tmp)))
        data["created_at"] = "2026-11-30T08:00:00+00:00"
        (SNAPSHOTS / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print("wrote", SNAPSHOTS / f"{name}.json")


# Tests ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_snapshot_file_matches_the_probes(name, tmp_path):
    """The committed snapshot is what the Windows probes record for the scenario (no hand-edited drift)."""
    committed = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
    assert committed["format"] == "rocm-doctor-snapshot" and committed["version"] == 1
    assert committed["observations"]["platform"]["os"] == "windows"
    rebuilt = snapshot.to_dict(build(name, tmp_path))
    assert json.loads(json.dumps(rebuilt["observations"])) == committed["observations"]


def test_healthy_build_tools_with_cpp_has_no_problem():
    report = run_check(SNAPSHOTS / "windows-buildtools-cpp.json")
    assert problems(report) == [], [(f["id"], f["message"]) for f in problems(report)]
    by_check = {f["check"]: f for f in report["findings"]}
    for check in ("vs-cpp-workload-missing", "hiprtc-headers-missing", "dll-shadowing", "hip-runtime-loaded-twice",
                  "windows-gpu-not-enumerated", "hip-sdk-missing", "hip-sdk-version-mismatch", "path-too-long-for-setx",
                  "env-scope-conflict", "env-set-but-shell-stale", "hsa-override-on-windows", "path-entries-missing",
                  "amd-display-driver-missing"):
        assert by_check[check]["status"] == "ok", (check, by_check[check]["message"])
    assert "Build Tools 2022" in by_check["vs-cpp-workload-missing"]["message"]
    assert "MSVC 14.44.35207" in by_check["hiprtc-headers-missing"]["message"]
    assert "26.1.1" in by_check["amd-display-driver-missing"]["message"]
    assert by_check["vs-dev-shell-inactive"]["status"] == "info"
    assert by_check["igpu-enumerated-first"]["status"] == "skip"


def test_build_tools_without_cpp_workload():
    report = run_check(SNAPSHOTS / "windows-buildtools-no-cpp.json")
    lead = problems(report)
    assert [f["check"] for f in lead[:2]] == ["hiprtc-headers-missing", "vs-cpp-workload-missing"]
    assert "'type_traits' file not found" in lead[0]["message"]
    workload = lead[1]
    assert workload["id"] == "vs-cpp-workload-missing:6a1b2c3d"
    assert "Visual Studio Build Tools 2022" in workload["message"]
    [cmd] = typed(workload, "cmd")
    assert cmd == (f'"C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\setup.exe" modify --installPath '
                   f'"{machine.BUILD_TOOLS}" --add Microsoft.VisualStudio.Workload.VCTools --add '
                   "Microsoft.VisualStudio.Component.VC.Tools.x86.x64 --add "
                   "Microsoft.VisualStudio.Component.Windows11SDK.22621 --passive --norestart")
    assert typed(workload, "powershell")[0].startswith("& 'C:\\Program Files (x86)\\Microsoft Visual Studio")
    assert typed(lead[0], "cmd") == [cmd] and not any("setup.exe" in r for r in workload["remediation"])
    assert len(lead) == 2


def test_vswhere_banner_only():
    report = run_check(SNAPSHOTS / "windows-vswhere-banner-only.json")
    lead = problems(report)
    assert [f["id"] for f in lead[:2]] == ["hiprtc-headers-missing", "vs-cpp-workload-missing:none"]
    assert any("only its banner" in e for e in lead[1]["evidence"])
    assert typed(lead[1], "powershell") == [
        "winget install --id Microsoft.VisualStudio.2022.BuildTools --override "
        "'--passive --wait --add Microsoft.VisualStudio.Workload.VCTools --includeRecommended'"]


def test_igpu_listed_before_rx_7900_xtx():
    report = run_check(SNAPSHOTS / "windows-igpu-first.json")
    lead = problems(report)
    assert lead and lead[0]["check"] == "igpu-enumerated-first"
    assert "AMD Radeon(TM) Graphics (gfx1036)" in lead[0]["message"]
    assert "AMD Radeon RX 7900 XTX (gfx1100) is device 1" in lead[0]["message"]
    assert [s["scope"] for s in lead[0]["fix"]] == ["user"]
    assert typed(lead[0], "cmd") == ['set "HIP_VISIBLE_DEVICES=1"']
    assert typed(lead[0], "powershell") == ["$env:HIP_VISIBLE_DEVICES = '1'"]
    enumerated = next(f for f in report["findings"] if f["check"] == "windows-gpu-not-enumerated")
    assert enumerated["status"] == "ok" and "#0 AMD Radeon(TM) Graphics (gfx1036)" in enumerated["message"]


def test_system32_amdhip64_shadows_torchs_own():
    report = run_check(SNAPSHOTS / "windows-system32-shadow.json")
    lead = problems(report)
    assert lead[0]["check"] == "dll-shadowing" and lead[0]["status"] == "fail"
    assert r"C:\Windows\SYSTEM32\amdhip64_7.dll" in lead[0]["evidence"][0]
    assert machine.CORE + r"\bin\amdhip64_7.dll" in lead[0]["evidence"][0]
    assert not any("setx" in r.lower() for r in lead[0]["remediation"]) and not lead[0]["fix"]


def test_two_hip_runtimes_loaded():
    report = run_check(SNAPSHOTS / "windows-two-hip-runtimes.json")
    lead = problems(report)
    assert lead[0]["check"] == "hip-runtime-loaded-twice" and lead[0]["status"] == "fail"
    assert any("amdhip64_6.dll" in e for e in lead[0]["evidence"])
    assert any("(torch's own)" in e for e in lead[0]["evidence"])


def test_user_path_of_1500_characters():
    data = json.loads((SNAPSHOTS / "windows-path-1500.json").read_text(encoding="utf-8"))
    raw = data["observations"]["probes"]["windows.registry.env"]["HKCU\\Environment"]["values"]["Path"]["value"]
    assert len(raw) == 1500
    report = run_check(SNAPSHOTS / "windows-path-1500.json")
    lead = problems(report)
    assert lead[0]["id"] == "path-too-long-for-setx:user"
    assert "1500 characters" in lead[0]["message"]
    fixes = "\n".join(lead[0]["remediation"])
    assert "Do not change PATH with setx" in fixes and "`" not in fixes and not lead[0]["fix"]
    assert len(lead) == 1
    entries = next(f for f in report["findings"] if f["check"] == "path-entries-missing")
    assert entries["status"] == "ok"  # every one of the many folders exists: only the length is the problem


def test_hsa_override_on_windows():
    report = run_check(SNAPSHOTS / "windows-hsa-override.json")
    lead = problems(report)
    assert lead[0]["check"] == "hsa-override-on-windows"
    assert "no effect on Windows" in lead[0]["message"]
    assert set(lead[0]["data"]["set_in"]) == {"process", "user"}
    assert [(s["name"], s["scope"]) for s in lead[0]["fix"]] == [("HSA_OVERRIDE_GFX_VERSION", "process"),
                                                                 ("HSA_OVERRIDE_GFX_VERSION", "user")]
    assert typed(lead[0], "cmd") == ['set "HSA_OVERRIDE_GFX_VERSION="'] * 2
    assert not any("Remove-Item" in r or "SetEnvironmentVariable" in r for r in lead[0]["remediation"])


def test_no_wddm_adapters_igpu_only():
    report = run_check(SNAPSHOTS / "windows-no-device.json")
    fails = [f for f in problems(report) if f["status"] == "fail"]
    enumerated = next(f for f in fails if f["check"] == "windows-gpu-not-enumerated")
    assert fails.index(enumerated) <= 1 and enumerated["severity"] == "critical"
    assert "No WDDM adapters found" in enumerated["message"] and "ROCm/ROCm#6167" in enumerated["message"]
    assert any("AMD Radeon(TM) Graphics" in e for e in enumerated["evidence"])


def test_env_scope_conflict_and_stale_shell():
    report = run_check(SNAPSHOTS / "windows-env-scopes.json")
    ids = [f["id"] for f in problems(report)]
    assert "env-scope-conflict:HIP_PATH" in ids
    assert "env-set-but-shell-stale:MIOPEN_FIND_MODE" in ids
    assert "hip-sdk-missing:HIP_PATH" in ids  # the User HIP_PATH (which wins) names a removed 6.2 SDK
    conflict = next(f for f in report["findings"] if f["id"] == "env-scope-conflict:HIP_PATH")
    assert [(s["kind"], s["name"], s["scope"]) for s in conflict["fix"]] == [("unset_env", "HIP_PATH", "user")]
    assert typed(conflict, "powershell", "Machine copy") == [
        "Remove-ItemProperty -Path 'HKLM:\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment' "
        "-Name 'HIP_PATH'"]


def test_every_windows_check_is_skipped_on_a_linux_snapshot(tmp_path):
    observations = build("windows-buildtools-cpp", tmp_path)
    observations.platform = dict(observations.platform, os="linux")
    path = tmp_path / "linux.json"
    path.write_text(snapshot.dumps(observations), encoding="utf-8")
    report = run_check(path)
    windows_checks = {"vs-cpp-workload-missing", "hiprtc-headers-missing", "dll-shadowing", "path-too-long-for-setx",
                      "hsa-override-on-windows", "windows-gpu-not-enumerated"}
    for finding in report["findings"]:
        if finding["check"] in windows_checks:
            assert finding["status"] == "skip" and "not applicable on linux" in finding["message"]


def test_real_cli_replays_a_windows_snapshot(doctor):
    result = doctor("check", "--from", str(SNAPSHOTS / "windows-system32-shadow.json"), "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["platform"]["os"] == "windows"
    assert problems(report)[0]["check"] == "dll-shadowing"


if __name__ == "__main__":
    sys.exit(regenerate())


def test_fix_plan_for_the_override_on_windows_unsets_it_in_its_scopes(tmp_path):
    from click.testing import CliRunner

    from rocm_doctor.cli.main import cli

    result = CliRunner().invoke(cli, ["fix", "--dry-run", "--from", str(SNAPSHOTS / "windows-hsa-override.json")],
                                env={"ROCM_DOCTOR_STATE_DIR": str(tmp_path)})
    assert result.exit_code in (0, 1), result.output
    assert "HKCU\\Environment" in result.output.splitlines()[0]
    assert 'reg delete "HKCU\\Environment" /v HSA_OVERRIDE_GFX_VERSION /f' in result.output
    assert "setx" not in result.output
