"""The Windows layer's table, probe and interpreter: AMD's driver versions decoded and named (real WMI output), the
PyTorch-on-Windows and HIP SDK rows matched, the Windows build read, the Visual C++ runtime observed, and the
real WinError 126 logs recognised, real Windows NT\\CurrentVersion values read."""

from pathlib import Path

import pytest

from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret
from rocm_doctor.knowledge import windows_layer as table
from rocm_doctor.knowledge.signatures import match
from rocm_doctor.knowledge.store import load
from rocm_doctor.probes import windows_runtime
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.windows.testing import FakeWindowsHost

FIXTURES = Path(__file__).parent / "fixtures"
VC_KEY = r"SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64"
NT_KEY = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion"
ENV = {"SystemRoot": r"C:\Windows", "ProgramFiles": r"C:\Program Files"}


def wmi_table(name: str) -> list[dict]:
    """Rows of a `Get-WmiObject Win32_VideoController | format-table ...` paste, split at the header's columns."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    header = lines[0]
    starts = [i for i, c in enumerate(header) if c != " " and (i == 0 or header[i - 1] == " ")]
    names = header.split()
    return [{n: line[a:b].strip() for n, a, b in zip(names, starts, starts[1:] + [None])} for line in lines[2:]]


def reg_query_values(name: str) -> dict[str, str]:
    """Named REG_SZ values of a `reg query KEY /t REG_SZ` paste ("    Name    REG_SZ    data")."""
    rows = [line.strip().split("    ") for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines()]
    return {row[0]: row[2] for row in rows if len(row) == 3 and row[1] == "REG_SZ"}


def test_every_table_row_follows_the_decode_rule():
    rows = table.table()["drivers"]
    assert len(rows) > 70 and all(table.decode_internal(r["windows_version"]) == r["internal_version"] for r in rows)


def test_the_adrenalin_version_of_a_windows_driver_version():
    row = table.driver_by_windows_version("32.0.21001.9024")
    assert (row["adrenalin"], row["internal_version"], row["date"]) == ("25.5.1", "25.10.01.09", "2025-05-07")
    assert [r.get("branch") for r in table.adrenalin_rows("26.1.1")] == ["Polaris and Vega", "RDNA1 and RDNA2", None]
    assert table.decode_internal("32.0.22001.17002") == "25.20.01.17"  # a preview driver the table does not list
    assert table.decode_internal("30.0.15021.1001") is None  # an older major, whose encoding the table does not confirm
    assert table.decode_internal("not a version") is None


def test_real_wmi_driver_version_names_adrenalin_24_2_1():
    rows = wmi_table("wmi/windows-rx7900xtx-raphael-igpu-get-wmiobject-format-table-driver-31.0.24019.1006.txt")
    assert [(r["Name"], r["DriverVersion"]) for r in rows] == [("AMD Radeon(TM) Graphics", "31.0.24019.1006"),
                                                               ("AMD Radeon RX 7900 XTX", "31.0.24019.1006")]
    named = table.driver_by_windows_version(rows[1]["DriverVersion"])
    assert (named["adrenalin"], named["internal_version"], named["date"]) == ("24.2.1", "23.40.19.01", "2024-02-26")


@pytest.mark.parametrize("rocm,torch,hip,release", [
    ("7.2.1", "2.9.1+rocm7.2.1", "7.2.53211", "7.2.1"),
    ("7.2.0.dev0", "2.9.1+rocmsdk20260116", "7.2.26024", "7.2"),
    ("0.1.dev0", "2.9.0+rocmsdk20251116", None, "7.1.1"),
    (None, "2.8.0a0+gitfc14c65", None, "6.4.4"),
    (None, "2.8.0a0+gitabcdef0", "6.4.43482", "6.4.4"),
])
def test_pytorch_release_rows_match_the_installed_wheels(rocm, torch, hip, release):
    row, how = table.pytorch_release(rocm, torch, hip)
    assert row["release"] == release and how


def test_nightly_wheels_match_no_release_row():
    assert table.pytorch_release("7.13.0a20260318", "2.10.0+rocm7.13.0a20260318", "7.13.26110")[0] is None


def test_hip_sdk_rows_and_windows_builds():
    assert table.hip_sdk_row("6.2")["runtime_dll"] == "amdhip64_6.dll" and table.hip_sdk_row("7.1.1")["pro_driver"] == "26.Q1"
    assert table.hip_sdk_row("6.0") is None
    lists = {row["rocm"]: row["os"] for row in load("support_windows.json")["releases"]}
    assert table.minimum_builds(lists["6.2"]) == {"windows10": {"build": 19045, "name": "Windows 10 22H2"},
                                                  "windows11": {"build": 22621, "name": "Windows 11 22H2"},
                                                  "server": {"build": 20348, "name": "Windows Server 2022"}}
    assert table.minimum_builds(lists["7.2"]) == {"windows11": {"build": 22000, "name": "Windows 11"}}
    assert table.windows_name(26100) == "Windows 11 24H2" and table.windows_name(20348, server=True) == "Windows Server 2022"


@pytest.mark.parametrize("fixture,signature", [
    ("errors/windows-11-krita-ai-diffusion-torch-c10-dll-winerror-126-vc-redist-missing.txt", "torch-c10-dll-winerror-126"),
    ("errors/windows-11-audiblez-torch-vc-redist-not-installed-c10-dll-winerror-126-excerpt.txt", "torch-vc-redist-not-installed"),
])
def test_real_winerror_126_logs_point_at_the_vc_runtime_check(fixture, signature):
    found = {m.id: m.check for m in match((FIXTURES / fixture).read_text(encoding="utf-8"))}
    assert found[signature] == "windows-vc-runtime-missing"
    assert found.get("torch-c10-dll-winerror-126") == "windows-vc-runtime-missing"


def test_fbgemm_winerror_126_is_not_blamed_on_the_vc_runtime():
    text = ('OSError: [WinError 126] The specified module could not be found. Error loading '
            '"C:\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.')
    assert all(m.check != "windows-vc-runtime-missing" for m in match(text))


def observe(host: FakeWindowsHost, platform_build: str = "10.0.26100", torch_stdout: str = "") -> Observations:
    observations = Observations()
    observations.platform = {"os": "windows", "version": platform_build, "windows_build": platform_build}
    observations.env = dict(ENV)
    recorder = Recorder(observations, ProbeContext(python=r"C:\py\python.exe", python_reason="test",
                                                    platform_os="windows", env=ENV))
    windows_runtime.collect(recorder, host=host)
    if torch_stdout:
        observations.add_command("torch-probe", CommandResult(argv=["python"], returncode=0, stdout=torch_stdout))
    return observations


def machine(tmp_path, dlls=("vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll", "kernel32.dll")) -> FakeWindowsHost:
    host = FakeWindowsHost(tmp_path)
    for name in dlls:
        host.add_file("C:\\Windows\\System32\\" + name)
    return host


def test_probe_records_the_runtime_and_the_build(tmp_path):
    host = machine(tmp_path, dlls=("vcruntime140.dll", "kernel32.dll"))
    host.set_value("HKLM", VC_KEY, "Installed", 1, "REG_DWORD").set_value("HKLM", VC_KEY, "Version", "v14.38.33135.00")
    for name, value in (("CurrentBuildNumber", "26100"), ("UBR", 4652), ("DisplayVersion", "24H2"),
                        ("ProductName", "Windows 10 Pro"), ("InstallationType", "Client"), ("RegisteredOwner", "ana")):
        host.set_value("HKLM", NT_KEY, name, value, "REG_DWORD" if isinstance(value, int) else "REG_SZ")
    stdout = '{"stage": "build", "config": "PyTorch built with:\\n  - MSVC 194435207\\n"}\n' \
             "Microsoft Visual C++ Redistributable is not installed, this may lead to the DLL load failure.\n"
    observations = observe(host, torch_stdout=stdout)
    recorded = observations.probes["windows.registry.runtime"]
    assert "RegisteredOwner" not in recorded["HKLM\\" + NT_KEY]["values"]  # only the named values are read
    facts = interpret(observations)
    system = facts.get("windows.os")
    assert (system["build"], system["ubr"], system["windows11"], system["name"], system["source"]) == \
        (26100, 4652, True, "Windows 11 24H2", "registry")
    runtime = facts.get("windows.vc_runtime")
    assert runtime["present"] == ["vcruntime140.dll"] and runtime["missing"] == ["vcruntime140_1.dll", "msvcp140.dll"]
    assert runtime["registry"]["version_tuple"] == [14, 38, 33135] and runtime["torch_msvc"] == "14.44"
    assert runtime["torch_warning"].startswith("Microsoft Visual C++ Redistributable is not installed")


@pytest.mark.parametrize("fixture,expected", [
    # Windows 11 still says "Windows 10 Pro" in ProductName: the build decides
    ("reg/windows11-23h2-build22631-reg-query-currentversion-t-reg-sz-productname-says-windows-10.txt",
     (22631, True, "Windows 11 23H2", "23H2", "Windows 10 Pro", "Professional")),
    ("reg/windows10-22h2-build19045-enterprise-reg-query-currentversion-t-reg-sz.txt",
     (19045, False, "Windows 10 22H2", "22H2", "Windows 10 Enterprise", "Enterprise")),
])
def test_real_current_version_values_name_the_windows(tmp_path, fixture, expected):
    values = reg_query_values(fixture)
    host = machine(tmp_path)
    for name in windows_runtime.CURRENT_VERSION_VALUES:
        if name in values:
            host.set_value("HKLM", NT_KEY, name, values[name], "REG_SZ")
    system = interpret(observe(host, platform_build="10.0." + values["CurrentBuild"])).get("windows.os")
    assert (system["build"], system["windows11"], system["name"], system["display_version"], system["product_name"],
            system["edition"]) == expected
    assert system["ubr"] is None and system["server"] is False  # /t REG_SZ leaves out the UBR DWORD


def test_without_the_registry_the_platform_build_is_used(tmp_path):
    facts = interpret(observe(machine(tmp_path), platform_build="10.0.19045"))
    system = facts.get("windows.os")
    assert (system["build"], system["windows11"], system["name"]) == (19045, False, "Windows 10 22H2")
    assert system["source"] == "platform version 10.0.19045"
    runtime = facts.get("windows.vc_runtime")
    assert runtime["missing"] == [] and runtime["registry"] is None and runtime["registry_read"]


def test_another_probes_system32_scan_says_nothing_about_the_runtime():
    observations = Observations()
    observations.platform = {"os": "windows", "windows_build": "10.0.26100"}
    observations.env = dict(ENV)
    observations.probes["windows.dir_scan.env"] = {"patterns": ["amdhip64*.dll"],
                                                   "dirs": {r"C:\Windows\System32": {"exists": True, "matches": []}}}
    facts = interpret(observations)
    assert not facts.has("windows.vc_runtime") and "did not run" in facts.why_missing("windows.vc_runtime")
    assert facts.get("windows.os")["build"] == 26100
