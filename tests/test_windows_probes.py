"""The Windows probe layer on Linux, against a FakeWindowsHost (fake folder tree in tmp_path, fake registry,
canned commands): what gets recorded, how failures are recorded, and the facts interpreted from it."""

import json

import pytest

from rocm_doctor.diagnose import load_snapshot
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret
from rocm_doctor.probes import probe_modules, windows_env, windows_hip, windows_vs
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.knowledge import windows_scopes as envscopes
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.host import RegistryKeyMissing, WindowsHost, default_host
from rocm_doctor.probes.windows_record import WindowsRecorder
from rocm_doctor.windows.testing import FakeWindowsHost, ok

ENV_KEY = r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment"
BT = r"C:\Program Files (x86)\Microsoft Visual Studio\2022\BuildTools"
VSWHERE = r"C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe"


def recorder_for(env, python=r"C:\venv\Scripts\python.exe"):
    observations = Observations()
    observations.platform = {"os": "windows", "system": "Windows", "release": "11", "machine": "AMD64"}
    observations.env = dict(env)
    observations.target = {"python": python, "reason": "test"}
    context = ProbeContext(python=python, python_reason="test", platform_os="windows", env=env)
    return Recorder(observations, context)


@pytest.fixture
def host(tmp_path):
    return FakeWindowsHost(tmp_path)


def test_fake_host_satisfies_the_protocol(host):
    assert isinstance(host, WindowsHost)


def test_windows_probes_run_only_on_windows():
    linux = {m.__name__.rsplit(".", 1)[-1] for m in probe_modules("linux", {})}
    windows = {m.__name__.rsplit(".", 1)[-1] for m in probe_modules("windows", {})}
    assert {"windows_env", "windows_hip", "windows_vs"} <= windows
    assert not {"windows_env", "windows_hip", "windows_vs"} & linux


def test_default_host_refuses_off_windows():
    with pytest.raises(RuntimeError):
        default_host()


def test_fake_host_maps_windows_paths_case_insensitively(host, tmp_path):
    host.add_file(r"C:\Program Files\AMD\ROCm\6.4\bin\hipInfo.exe")
    assert (tmp_path / "C" / "Program Files" / "AMD" / "ROCm" / "6.4" / "bin" / "hipInfo.exe").is_file()
    assert host.exists(r"c:\program files\amd\rocm\6.4\BIN\HIPINFO.EXE")
    assert host.list_dir(r"C:\Program Files\AMD\ROCm") == ["6.4"]
    with pytest.raises(FileNotFoundError):
        host.list_dir(r"D:\nothing")
    with pytest.raises(RegistryKeyMissing):
        host.list_registry_values("HKLM", r"SOFTWARE\Nope")


def test_env_probe_records_registry_types_raw_and_scans_path(host):
    host.set_value("HKCU", "Environment", "Path", r"%USERPROFILE%\bin;C:\gone", "REG_EXPAND_SZ")
    host.set_value("HKCU", "Environment", "HIP_PATH", r"C:\Program Files\AMD\ROCm\6.2\\")
    host.set_value("HKLM", ENV_KEY, "Path", r"%SystemRoot%\system32;C:\tools", "REG_EXPAND_SZ")
    host.add_file(r"C:\Windows\System32\amdhip64_7.dll").add_file(r"C:\Windows\System32\kernel32.dll")
    host.add_file(r"C:\Users\ana\bin\amdhip64_6.dll").add_file(r"C:\Users\ana\bin\notes.txt")
    host.add_dir(r"C:\tools")
    env = {"SystemRoot": r"C:\Windows", "USERPROFILE": r"C:\Users\ana", "PATH": r"C:\tools;C:\Users\ana\bin"}
    rec = recorder_for(env)
    windows_env.collect(rec, host=host)
    registry = rec.observations.probes["windows.registry.env"]
    assert registry["HKCU\\Environment"]["values"]["Path"] == {"value": r"%USERPROFILE%\bin;C:\gone", "type": "REG_EXPAND_SZ"}
    assert registry["HKCU\\Environment"]["complete"] is True
    scan = rec.observations.probes["windows.dir_scan.env"]["dirs"]
    assert scan[r"C:\Windows\System32"]["matches"] == ["amdhip64_7.dll"]  # kernel32.dll is not recorded
    assert scan[r"C:\Users\ana\bin"]["matches"] == ["amdhip64_6.dll"]
    assert scan[r"C:\gone"] == {"exists": False, "error": "not found", "matches": []}

    facts = interpret(rec.observations)
    scopes = facts["windows.env.scopes"]
    assert scopes["user"]["PATH"]["expanded"] == r"C:\Users\ana\bin;C:\gone"
    assert scopes["user"]["HIP_PATH"]["type"] == "REG_SZ"
    folders = {f["path"]: f for f in facts["windows.path"]["folders"]}
    assert folders[r"C:\gone"]["exists"] is False and folders[r"C:\gone"]["scopes"] == ["user"]
    assert set(folders[r"C:\Users\ana\bin"]["scopes"]) == {"process", "user"}


def test_registry_failures_are_recorded_not_raised(host):
    class Denied(FakeWindowsHost):
        def list_registry_values(self, hive, key):
            raise PermissionError(5, "Access is denied")

    denied = Denied(host.root)
    rec = recorder_for({"SystemRoot": r"C:\Windows", "PATH": ""})
    windows_env.collect(rec, host=denied)
    registry = rec.observations.probes["windows.registry.env"]
    assert registry["HKCU\\Environment"] == {"error": "permission denied"}
    facts = interpret(rec.observations)
    assert not facts.has("windows.env.scopes") or facts["windows.env.scopes"]["user"] == {}


def test_recorder_records_missing_keys_and_values(host):
    rec = recorder_for({})
    win = WindowsRecorder(rec, host, "t")
    assert win.registry_value("HKLM", r"SOFTWARE\AMD\CN", "RadeonSoftwareVersion") is None
    host.set_value("HKLM", r"SOFTWARE\AMD\CN", "Other", "x")
    assert win.registry_value("HKLM", r"SOFTWARE\AMD\CN", "RadeonSoftwareVersion") is None
    entry = rec.observations.probes["windows.registry.t"]["HKLM\\SOFTWARE\\AMD\\CN"]
    assert entry["error"] == "not found" and entry["values"] == {"RadeonSoftwareVersion": None}
    assert win.registry_subkeys("HKLM", r"SOFTWARE\Nope") == []
    record = win.list_dir(r"C:\missing")
    assert record.exists is False and record.error == "not found"
    assert rec.observations.files[r"C:\missing"].error == "not found"
    result = win.command("x", [r"C:\nothing.exe"])
    assert result.error == "not found" and rec.observations.commands["x"].error == "not found"


def test_hip_probe_finds_installs_runs_hipinfo_and_reads_driver(host, fixture_text):
    host.add_file(r"C:\Program Files\AMD\ROCm\6.4\bin\hipInfo.exe").add_file(r"C:\Program Files\AMD\ROCm\6.4\bin\amdhip64_6.dll")
    host.add_file(r"C:\Program Files\AMD\ROCm\5.7\bin\amdhip64.dll")
    host.set_value("HKLM", ENV_KEY, "HIP_PATH_57", r"C:\Program Files\AMD\ROCm\5.7\\")
    host.set_value("HKLM", r"SOFTWARE\AMD\CN", "RadeonSoftwareVersion", "25.5.1")
    cls = r"SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}"
    host.set_value("HKLM", cls + r"\0000", "DriverDesc", "AMD Radeon RX 7900 XTX")
    host.set_value("HKLM", cls + r"\0000", "DriverVersion", "32.0.21001.9024")
    host.add_key("HKLM", cls + r"\Properties")
    host.on("hipInfo.exe", ok(fixture_text("hipinfo/windows-rx7900xtx-only-after-igpu-disabled-rocm6.4.4-preview.txt")))
    host.on("python.exe", ok(json.dumps({"packages": {"torch": "2.8.0"}, "torch_dir": r"C:\venv\Lib\site-packages\torch",
                                         "sdk_dirs": [], "cxx_headers": []}) + "\n"))
    host.add_file(r"C:\venv\Lib\site-packages\torch\lib\amdhip64_6.dll")
    env = {"ProgramFiles": r"C:\Program Files", "HIP_PATH": r"C:\Program Files\AMD\ROCm\6.4\\", "PATH": ""}
    rec = recorder_for(env)
    windows_hip.collect(rec, host=host)
    commands = rec.observations.commands
    assert commands["hipinfo"].argv == [r"C:\Program Files\AMD\ROCm\6.4\\\bin\hipInfo.exe"] or \
        paths.same(commands["hipinfo"].argv[0], r"C:\Program Files\AMD\ROCm\6.4\bin\hipInfo.exe")
    assert commands["windows-rocm-sdk"].argv[0] == r"C:\venv\Scripts\python.exe"
    scan = rec.observations.probes["windows.dir_scan.hip"]["dirs"]
    assert scan[r"C:\venv\Lib\site-packages\torch\lib"]["matches"] == ["amdhip64_6.dll"]

    facts = interpret(rec.observations)
    installs = {i["version"]: i for i in facts["windows.hip.installs"]}
    assert installs["6.4"]["has_hipinfo"] and installs["6.4"]["runtime_majors"] == [6]
    assert installs["5.7"]["runtime_majors"] == [5] and "HIP_PATH_57 (machine)" in installs["5.7"]["sources"]
    assert facts["windows.hipinfo"]["devices"][0]["gfx"] == "gfx1100"
    driver = facts["windows.driver"]
    assert driver["adrenalin"] == "25.5.1"
    assert driver["adapters"] == [{"key": "0000", "description": "AMD Radeon RX 7900 XTX", "driver_version": "32.0.21001.9024",
                                   "provider": None, "matching_device_id": None, "radeon_software_version": None,
                                   "radeon_software_edition": None}]
    assert facts["windows.rocm_sdk"]["therock"] is False


def test_vs_probe_runs_vswhere_with_products_star_and_checks_headers(host, fixture_text):
    listing = fixture_text("vswhere/windows-vs2022-community-17.5.4-native-desktop-json.txt")
    community = r"C:\Program Files\Microsoft Visual Studio\2022\Community"
    host.add_file(VSWHERE)
    host.on("vswhere.exe", lambda argv: ok(listing))
    for header in ("type_traits", "limits"):  # cstdint missing: a damaged toolset
        host.add_file(community + rf"\VC\Tools\MSVC\14.35.32215\include\{header}")
    host.add_file(r"C:\Program Files (x86)\Windows Kits\10\Include\10.0.22621.0\ucrt\corecrt.h")
    env = {"ProgramFiles(x86)": r"C:\Program Files (x86)", "INCLUDE": r"C:\inc", "PATH": ""}
    rec = recorder_for(env)
    windows_vs.collect(rec, host=host)
    argv = host.calls[0]
    assert argv[1:] == ["-products", "*", "-all", "-prerelease", "-format", "json", "-utf8"]
    assert host.calls[1][-2:] == ["-requires", "Microsoft.VisualStudio.Component.VC.Tools.x86.x64"]
    files = rec.observations.files
    assert files[community + r"\VC\Tools\MSVC\14.35.32215\include\cstdint"].exists is False
    assert files[r"C:\inc\type_traits"].exists is False

    facts = interpret(rec.observations)
    (inst,) = facts["windows.vs"]["instances"]
    assert inst["has_vc_tools"] is True and inst["product"] == "Community"
    assert inst["msvc"][0]["headers"] == {"type_traits": True, "limits": True, "cstdint": False}
    assert facts["windows.sdk.ucrt"] == [{"version": "10.0.22621.0", "path": r"C:\Program Files (x86)\Windows Kits\10\Include\10.0.22621.0\ucrt", "corecrt_h": True}]
    assert facts["windows.cxx_headers"]["reachable"] is False  # the only toolset lacks <cstdint>
    assert facts["windows.devshell"]["active"] is False


def test_vs_probe_without_vswhere_runs_nothing(host):
    rec = recorder_for({"PATH": ""})
    windows_vs.collect(rec, host=host)
    assert host.calls == [] and "vswhere" not in rec.observations.commands
    assert rec.observations.files[VSWHERE].exists is False
    facts = interpret(rec.observations)
    assert facts["windows.vs"]["instances"] == [] and facts["windows.vs"]["vswhere"]["found"] is False


def test_probe_snapshot_round_trip_replays_identically(host, tmp_path):
    host.set_value("HKCU", "Environment", "HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    rec = recorder_for({"SystemRoot": r"C:\Windows", "PATH": "", "HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    windows_env.collect(rec, host=host)
    path = tmp_path / "snap.json"
    path.write_text(snapshot.dumps(rec.observations), encoding="utf-8")
    again = interpret(load_snapshot(path))
    assert again["windows.env.scopes"]["user"]["HSA_OVERRIDE_GFX_VERSION"]["value"] == "10.3.0"


def test_facts_are_missing_off_windows():
    observations = Observations()
    observations.platform = {"os": "linux"}
    facts = interpret(observations)
    assert facts.why_missing("windows.vs") == "not applicable on linux"
    assert facts.why_missing("windows.dlls") == "not applicable on linux"


# Pure helpers --------------------------------------------------------------------------------------------------

def test_expand_and_norm():
    assert paths.expand(r"%SystemRoot%\x;%NOPE%\y", {"SYSTEMROOT": r"C:\Windows"}) == (r"C:\Windows\x;%NOPE%\y", ["NOPE"])
    assert paths.same(r"C:\Program Files\AMD\ROCm\6.4\\", r"c:/program files/amd/rocm/6.4")
    assert paths.is_under(r"C:\a\b\c.dll", r"C:\A\B")
    assert not paths.is_under(r"C:\ab\c.dll", r"C:\a")
    assert paths.split_path_var(r';"C:\a b";;C:\c;') == [r"C:\a b", r"C:\c"]


def test_new_shell_value_and_conflicts():
    user = envscopes.scope_table({"Path": {"value": r"C:\u", "type": "REG_SZ"}, "HIP_PATH": {"value": r"C:\x\\", "type": "REG_SZ"},
                                  "TEMP": {"value": r"C:\t1", "type": "REG_SZ"}})
    machine = envscopes.scope_table({"Path": {"value": r"C:\m", "type": "REG_SZ"}, "HIP_PATH": {"value": r"C:\X", "type": "REG_SZ"},
                                     "TEMP": {"value": r"C:\t2", "type": "REG_SZ"}, "HIP_PATH_64": {"value": r"C:\y", "type": "REG_SZ"}})
    assert envscopes.new_shell_value("Path", user, machine) == r"C:\m;C:\u"
    assert envscopes.conflicts(user, machine) == []  # same folder (case, trailing slash); TEMP is not watched
    stale = envscopes.stale({"PATH": r"C:\m", "HIP_PATH": r"c:\x"}, user, machine)
    assert {"name": "HIP_PATH_64", "registry": r"C:\y", "process": None, "scope": "machine"} in stale
    assert {"name": "Path", "scope": "user", "missing_entries": [r"C:\u"]} in stale
    assert not any(s["name"] == "HIP_PATH" for s in stale)


def test_machine_path_edits_keep_the_registry_value_expandable():
    from rocm_doctor.engine import remedy as S
    from rocm_doctor.engine.shells import registry_step_lines

    step = S.path_remove(r"C:\Program Files\AMD\ROCm\5.7\bin", "Path", scope="machine")
    [ps] = registry_step_lines(step, "powershell")
    assert "GetValue('Path', '', 'DoNotExpandEnvironmentNames')" in ps and "-Type ExpandString" in ps
    assert "-ne 'C:\\Program Files\\AMD\\ROCm\\5.7\\bin'.TrimEnd('\\')" in ps and "setx" not in ps.lower()
    [cmd] = registry_step_lines(step, "cmd")
    assert cmd == f'powershell -NoProfile -Command "{ps}"'


def test_path_copy_of_torch_dll_is_a_predicted_risk_when_torch_did_not_report_libraries(tmp_path):
    from rocm_doctor.engine.engine import run_one
    from rocm_doctor.checks.windows_dlls import DllShadowing

    host = FakeWindowsHost(tmp_path)
    site = r"C:\venv\Lib\site-packages"
    host.add_file(site + r"\_rocm_sdk_core\bin\amdhip64_7.dll")
    host.add_file(r"C:\Program Files\AMD\ROCm\7.1\bin\amdhip64_7.dll")
    host.add_dir(r"C:\Windows\System32")
    host.set_value("HKCU", "Environment", "Path", r"C:\Program Files\AMD\ROCm\7.1\bin", "REG_SZ")
    host.on("python.exe", ok(json.dumps({"packages": {"rocm-sdk-core": "7.2.0"}, "torch_dir": site + r"\torch",
                                         "sdk_dirs": [site + r"\_rocm_sdk_core"], "cxx_headers": []}) + "\n"))
    env = {"SystemRoot": r"C:\Windows", "PATH": r"C:\Windows\System32;C:\Program Files\AMD\ROCm\7.1\bin"}
    rec = recorder_for(env)
    windows_env.collect(rec, host=host)
    windows_hip.collect(rec, host=host)
    rec.observations.add_command("torch-probe", CommandResult(argv=["python"], returncode=3221225477, stdout=""))
    facts = interpret(rec.observations)
    (finding,) = run_one(DllShadowing, facts)
    assert finding.status.value == "warn"
    assert any(r"PATH[1] C:\Program Files\AMD\ROCm\7.1\bin\amdhip64_7.dll" in e for e in finding.evidence)
    assert [s.summary() for s in finding.fix] == [r"remove C:\Program Files\AMD\ROCm\7.1\bin from Path (process)",
                                                 r"remove C:\Program Files\AMD\ROCm\7.1\bin from Path (user)"]
