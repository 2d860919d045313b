"""Replayed Windows snapshots, end to end: `rocm-doctor check --from tests/snapshots/windows-*.json --json`.

The snapshots are built here (run `python tests/test_windows_snapshots.py` to rewrite them) by running the real
Windows probes on Linux against a FakeWindowsHost: fake folder trees under a temp dir, a fake registry, and the
real vswhere / hipInfo outputs from tests/fixtures (two-device and Build Tools variants derived from their
layout). The torch child's and WMI's outputs are recorded as they would be on Windows.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from rocm_doctor.engine.remedy import step_from_dict
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.observations import Observations
from rocm_doctor.probes import windows_env, windows_hip, windows_vs
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.report.diagnosis_view import commands
from rocm_doctor.windows.testing import FakeWindowsHost, ok

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
SNAPSHOTS = HERE / "snapshots"

USER = r"C:\Users\ana"
VENV = USER + r"\venvs\rocm"
SITE = VENV + r"\Lib\site-packages"
PYTHON = VENV + r"\Scripts\python.exe"
CORE = SITE + r"\_rocm_sdk_core"
LIBS = SITE + r"\_rocm_sdk_libraries_gfx110X_all"
HIP_SDK = r"C:\Program Files\AMD\ROCm\7.1"
BUILD_TOOLS = r"C:\Program Files (x86)\Microsoft Visual Studio\2022\BuildTools"
VSWHERE = r"C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe"
MSVC = BUILD_TOOLS + r"\VC\Tools\MSVC\14.44.35207"
KITS = r"C:\Program Files (x86)\Windows Kits\10\Include\10.0.26100.0"
SDK_CHILD_ARGV = SITE + r"\rocm_doctor\windows\_sdk_child.py"

MACHINE_PATH = (
    r"%SystemRoot%\system32;%SystemRoot%;%SystemRoot%\System32\Wbem;%SYSTEMROOT%\System32\WindowsPowerShell\v1.0\;"
    r"C:\Program Files\Git\cmd"
)
USER_PATH = r"%USERPROFILE%\AppData\Local\Microsoft\WindowsApps;" + USER + r"\AppData\Local\Programs\Python\Python312\\"
SYSTEM_DIRS = [r"C:\Windows\system32", r"C:\Windows", r"C:\Windows\System32\Wbem",
               r"C:\Windows\System32\WindowsPowerShell\v1.0", r"C:\Program Files\Git\cmd",
               USER + r"\AppData\Local\Microsoft\WindowsApps", USER + r"\AppData\Local\Programs\Python\Python312"]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


HIPINFO_XTX = fixture("hipinfo/windows-rx7900xtx-only-after-igpu-disabled-rocm6.4.4-preview.txt")
HIPINFO_NO_WDDM = fixture("hipinfo/windows-adrenalin26.3.1-igpu-only-gfx1036-no-wddm-adapters-no-rocm-capable-device.txt")
VSWHERE_COMMUNITY = fixture("vswhere/windows-vs2022-community-17.5.4-native-desktop-json.txt")
VSWHERE_BANNER = fixture("vswhere/windows-vs2019-buildtools-only-vswhere-all-finds-nothing-without-products-star.txt")
SEPARATOR = "-" * 80


def hipinfo_igpu_first() -> str:
    """hipInfo with a Ryzen iGPU (gfx1036) enumerated before the RX 7900 XTX, in the fixture's layout."""
    igpu = (
        HIPINFO_XTX.replace("AMD Radeon RX 7900 XTX", "AMD Radeon(TM) Graphics")
        .replace("pciBusID:                         3", "pciBusID:                         19")
        .replace("multiProcessorCount:              48", "multiProcessorCount:              1")
        .replace("clockRate:                        2526 Mhz", "clockRate:                        2200 Mhz")
        .replace("totalGlobalMem:                   23.98 GB", "totalGlobalMem:                   15.61 GB")
        .replace("major:                            11", "major:                            10")
        .replace("minor:                            0", "minor:                            3")
        .replace("isIntegrated:                     0", "isIntegrated:                     1")
        .replace("gcnArchName:                      gfx1100", "gcnArchName:                      gfx1036")
        .replace("non-peers:                        device#0", "non-peers:                        device#0 device#1")
        .replace("memInfo.total:                    23.98 GB", "memInfo.total:                    15.61 GB")
        .replace("memInfo.free:                     23.84 GB (99%)", "memInfo.free:                     15.20 GB (97%)")
    )
    dgpu = HIPINFO_XTX.replace("device#                           0", "device#                           1").replace(
        "non-peers:                        device#0", "non-peers:                        device#0 device#1"
    )
    return f"\n{SEPARATOR}\n{igpu}\n{SEPARATOR}\n{dgpu}"


def vswhere_build_tools(with_cpp: bool) -> str:
    """The Community fixture's JSON turned into a Build Tools 2022 17.14 instance (as `-products *` lists it)."""
    data = json.loads(VSWHERE_COMMUNITY)
    inst = data[0]
    inst.update(
        instanceId="6a1b2c3d",
        installationName="VisualStudio/17.14.8+36301.6",
        installationPath=BUILD_TOOLS,
        installationVersion="17.14.36301.6",
        productId="Microsoft.VisualStudio.Product.BuildTools",
        productPath=BUILD_TOOLS + r"\Common7\Tools\LaunchDevCmd.bat",
        displayName="Visual Studio Build Tools 2022",
        description="The Visual Studio Build Tools allows you to build native and managed MSBuild-based applications without requiring the Visual Studio IDE.",
        isLaunchable=True,
    )
    inst["catalog"].update(buildVersion="17.14.36301.6", id="VisualStudio/17.14.8+36301.6",
                           productDisplayVersion="17.14.8", productSemanticVersion="17.14.8+36301.6",
                           productPatchVersion="8")
    return json.dumps(data, indent=2)


def torch_child_stdout(libraries: list[str], devices: list[tuple[str, str, bool]], available: bool = True,
                       torch: tuple[str, str] = ("2.9.1+rocmsdk20260116", "7.2.26024"), import_error: str = "") -> str:
    version, hip = torch
    start = {"stage": "start", "python": "3.12.10", "executable": PYTHON, "prefix": VENV, "base_prefix": USER + r"\AppData\Local\Programs\Python\Python312", "platform": "win32"}
    if import_error:
        lines = [start, {"stage": "import", "ok": False, "missing": False, "error": import_error}, {"stage": "done"}]
        return "\n".join(json.dumps(line) for line in lines) + "\n"
    lines = [
        start,
        {"stage": "import", "ok": True, "seconds": 2.81, "version": version, "file": SITE + r"\torch\__init__.py",
         "cuda": None, "hip": hip, "git_version": "unknown", "debug": False},
        {"stage": "build", "config": f"PyTorch built with:\n  - MSVC 194435207\n  - HIP Runtime {hip}\n", "cudnn_version": 3005000},
        {"stage": "available", "available": available, "error": None, "warnings": []},
        {"stage": "count", "device_count": len(devices) if available else 0},
    ]
    if available:
        lines.append({"stage": "arch_list", "arch_list": ["gfx1100", "gfx1101", "gfx1102", "gfx1103"]})
        for index, (name, arch, integrated) in enumerate(devices):
            lines.append({"stage": "device", "index": index, "name": name, "gcnArchName": arch,
                          "total_memory": 25753026560 if not integrated else 16760438784, "major": 11 if arch == "gfx1100" else 10,
                          "minor": 0 if arch == "gfx1100" else 3, "multi_processor_count": 48 if not integrated else 1,
                          "is_integrated": int(integrated), "warp_size": 32})
    lines.append({"stage": "libraries", "paths": libraries})
    lines.append({"stage": "done", "seconds": 4.02})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


OWN_LIBRARIES = [
    PYTHON, r"C:\Windows\SYSTEM32\ntdll.dll", r"C:\Windows\System32\KERNEL32.DLL",
    SITE + r"\torch\lib\c10.dll", SITE + r"\torch\lib\torch_hip.dll",
    CORE + r"\bin\amdhip64_7.dll", CORE + r"\bin\hiprtc0702.dll", CORE + r"\bin\amd_comgr0702.dll",
    LIBS + r"\bin\rocblas.dll", LIBS + r"\bin\hipblaslt.dll", LIBS + r"\bin\MIOpen.dll",
]

WMI_XTX = {"Name": "AMD Radeon RX 7900 XTX", "PNPDeviceID": r"PCI\VEN_1002&DEV_744C&SUBSYS_471E1002&REV_C8\6&1A2B3C4D&0&00000019",
           "DriverVersion": "32.0.23017.1001", "DriverDate": "/Date(1767225600000)/", "AdapterRAM": 4293918720,
           "VideoProcessor": "AMD Radeon Graphics Processor (0x744C)", "Status": "OK"}
WMI_IGPU = {"Name": "AMD Radeon(TM) Graphics", "PNPDeviceID": r"PCI\VEN_1002&DEV_13C0&SUBSYS_88771043&REV_C9\4&2B3C4D5E&0&0041",
            "DriverVersion": "32.0.23017.1001", "DriverDate": "/Date(1767225600000)/", "AdapterRAM": 536870912,
            "VideoProcessor": "AMD Radeon Graphics Processor (0x13C0)", "Status": "OK"}


class Machine:
    """One fake Windows machine: process env, registry, folders, command outputs."""

    def __init__(self, root: Path) -> None:
        self.host = FakeWindowsHost(root)
        self.env = {
            "SystemRoot": r"C:\Windows", "windir": r"C:\Windows", "ProgramFiles": r"C:\Program Files",
            "ProgramFiles(x86)": r"C:\Program Files (x86)", "USERPROFILE": USER, "USERNAME": "ana",
            "VIRTUAL_ENV": VENV, "HIP_PATH": HIP_SDK + "\\", "HIP_PATH_71": HIP_SDK + "\\",
        }
        self.machine_env = {"Path": (MACHINE_PATH, "REG_EXPAND_SZ"), "HIP_PATH": (HIP_SDK + "\\", "REG_SZ"),
                            "HIP_PATH_71": (HIP_SDK + "\\", "REG_SZ"), "ComSpec": (r"%SystemRoot%\system32\cmd.exe", "REG_EXPAND_SZ"),
                            "OS": ("Windows_NT", "REG_SZ")}
        self.user_env = {"Path": (USER_PATH, "REG_EXPAND_SZ"), "TEMP": (r"%USERPROFILE%\AppData\Local\Temp", "REG_EXPAND_SZ")}
        self.hipinfo = HIPINFO_XTX
        self.vswhere_all = vswhere_build_tools(with_cpp=True)
        self.vswhere_vc = self.vswhere_all
        self.msvc = True
        self.libraries = list(OWN_LIBRARIES)
        self.devices = [("AMD Radeon RX 7900 XTX", "gfx1100", False)]
        self.available = True
        self.wmi = [WMI_XTX]
        self.system32 = ["amdhip64_6.dll", "amdhip64_7.dll", "kernel32.dll", "ntdll.dll"]
        self.extra_dirs: list[str] = []
        self.adrenalin = "26.1.1"
        self.packages = {"rocm": "7.2.0.dev0", "rocm-sdk-core": "7.2.0.dev0", "rocm-sdk-libraries-gfx110x-all": "7.2.0.dev0",
                         "torch": "2.9.1+rocmsdk20260116", "torchvision": "0.24.1+rocmsdk20260116"}
        self.torch = ("2.9.1+rocmsdk20260116", "7.2.26024")
        self.import_error = ""
        self.windows_build = "10.0.26100"
        self.registry: list[tuple[str, str, str, object, str]] = []  # more (hive, key, name, value, type) values
        self.probes = (windows_env, windows_hip, windows_vs)

    def process_path(self) -> str:
        return ";".join([VENV + r"\Scripts"] + SYSTEM_DIRS[:5] + [r"C:\Program Files\Git\cmd"] + SYSTEM_DIRS[5:] + self.extra_dirs)

    def build(self) -> Observations:
        host = self.host
        for name, (value, kind) in self.machine_env.items():
            host.set_value("HKLM", r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment", name, value, kind)
        for name, (value, kind) in self.user_env.items():
            host.set_value("HKCU", "Environment", name, value, kind)
        host.set_value("HKLM", r"SOFTWARE\AMD\CN", "RadeonSoftwareVersion", self.adrenalin)
        cls = r"SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}"
        for index, adapter in enumerate(self.wmi):
            key = f"{cls}\\{index:04d}"
            host.set_value("HKLM", key, "DriverDesc", adapter["Name"])
            host.set_value("HKLM", key, "DriverVersion", adapter["DriverVersion"])
            host.set_value("HKLM", key, "ProviderName", "Advanced Micro Devices, Inc.")
            host.set_value("HKLM", key, "RadeonSoftwareVersion", self.adrenalin)
        host.add_key("HKLM", cls + r"\Configuration")
        for hive, key, name, value, kind in self.registry:
            host.set_value(hive, key, name, value, kind)

        for folder in SYSTEM_DIRS + self.extra_dirs:
            host.add_dir(folder)
        for name in self.system32:
            host.add_file(r"C:\Windows\System32\\" + name)
        host.add_file(r"C:\Program Files\Git\cmd\git.exe")
        host.add_file(USER + r"\AppData\Local\Programs\Python\Python312\python.exe")
        host.add_file(VENV + r"\Scripts\python.exe")
        for name in ("c10.dll", "torch_hip.dll", "torch_cpu.dll"):
            host.add_file(SITE + r"\torch\lib\\" + name)
        for name in ("amdhip64_7.dll", "hiprtc0702.dll", "hiprtc-builtins0702.dll", "amd_comgr0702.dll", "hipInfo.exe"):
            host.add_file(CORE + r"\bin\\" + name)
        for name in ("rocblas.dll", "hipblaslt.dll", "MIOpen.dll", "hipblas.dll"):
            host.add_file(LIBS + r"\bin\\" + name)
        for name in ("hipInfo.exe", "amdhip64_7.dll", "hipcc.bat", "clang.exe", "rocblas.dll"):
            host.add_file(HIP_SDK + r"\bin\\" + name)
        host.add_file(VSWHERE)
        if self.msvc:
            for header in ("type_traits", "limits", "cstdint", "vector"):
                host.add_file(MSVC + r"\include\\" + header)
            host.add_file(MSVC + r"\bin\Hostx64\x64\cl.exe")
            host.add_file(BUILD_TOOLS + r"\VC\Auxiliary\Build\vcvars64.bat")
        host.add_file(BUILD_TOOLS + r"\Common7\Tools\Launch-VsDevShell.ps1")
        host.add_file(KITS + r"\ucrt\corecrt.h")
        host.add_file(KITS + r"\um\windows.h")

        host.on("vswhere.exe", lambda argv: ok(self.vswhere_vc if "-requires" in argv else self.vswhere_all))
        host.on("hipinfo.exe", ok(self.hipinfo, returncode=0 if "device#" in self.hipinfo else 1))
        sdk = {"python": PYTHON, "prefix": VENV,
               "packages": self.packages,
               "torch_dir": SITE + r"\torch", "sdk_dirs": [CORE, LIBS], "cxx_headers": []}
        host.on("python.exe", ok(json.dumps(sdk) + "\n"))

        env = dict(self.env, PATH=self.process_path())
        observations = Observations()
        observations.platform = {"os": "windows", "system": "Windows", "release": "11" if self.windows_build >= "10.0.22000" else "10",
                                 "version": self.windows_build, "machine": "AMD64", "doctor_python": "3.12.10",
                                 "doctor_executable": PYTHON, "windows_build": self.windows_build}
        observations.env = env
        observations.target = {"python": PYTHON, "reason": f"the active virtual environment (VIRTUAL_ENV={VENV})"}
        context = ProbeContext(python=PYTHON, python_reason=observations.target["reason"], platform_os="windows", env=env)
        recorder = Recorder(observations, context)
        for probe in self.probes:
            probe.collect(recorder, host=host)
        sdk_result = observations.commands["windows-rocm-sdk"]
        sdk_result.argv = [PYTHON, SDK_CHILD_ARGV]
        observations.add_command("wmi-video-controllers", CommandResult(
            argv=["powershell", "-NoProfile", "-NonInteractive", "-Command", "Get-CimInstance Win32_VideoController | ..."],
            returncode=0, stdout=json.dumps(self.wmi if len(self.wmi) > 1 else self.wmi[0]), duration_s=1.2, timeout_s=20))
        observations.add_command("torch-probe", CommandResult(
            argv=[PYTHON, SITE + r"\rocm_doctor\probes\_torch_child.py"], returncode=0,
            stdout=torch_child_stdout(self.libraries, self.devices, self.available, self.torch, self.import_error),
            duration_s=4.4, timeout_s=60))
        return observations


def healthy(m: Machine) -> None:
    pass


def build_tools_without_cpp(m: Machine) -> None:
    m.vswhere_vc = "[]"
    m.msvc = False


def vswhere_banner_only(m: Machine) -> None:
    m.vswhere_all = VSWHERE_BANNER
    m.vswhere_vc = VSWHERE_BANNER
    m.msvc = False


def igpu_first(m: Machine) -> None:
    m.hipinfo = hipinfo_igpu_first()
    m.wmi = [WMI_IGPU, WMI_XTX]
    m.devices = [("AMD Radeon(TM) Graphics", "gfx1036", True), ("AMD Radeon RX 7900 XTX", "gfx1100", False)]


def system32_shadow(m: Machine) -> None:
    m.libraries = [p.replace(CORE + r"\bin\amdhip64_7.dll", r"C:\Windows\SYSTEM32\amdhip64_7.dll") for p in OWN_LIBRARIES]


def two_runtimes(m: Machine) -> None:
    m.libraries = OWN_LIBRARIES + [HIP_SDK + r"\bin\amdhip64_6.dll"]
    m.host.add_file(HIP_SDK + r"\bin\amdhip64_6.dll")


def path_1500(m: Machine) -> None:
    entries = USER_PATH.rstrip(";").split(";")
    index = 0
    while len(";".join(entries)) < 1500:
        entries.append(USER + rf"\AppData\Local\Programs\tool{index:02d}\bin")
        index += 1
    text = ";".join(entries)
    text = text[: len(text) - (len(text) - 1500)] if len(text) > 1500 else text
    last = text.rsplit(";", 1)[-1]
    m.user_env["Path"] = (text, "REG_EXPAND_SZ")
    m.extra_dirs = [e for e in text.split(";") if e.startswith(USER + r"\AppData\Local\Programs\tool")]
    if last not in m.extra_dirs:
        m.extra_dirs.append(last)


def hsa_override(m: Machine) -> None:
    m.user_env["HSA_OVERRIDE_GFX_VERSION"] = ("11.0.0", "REG_SZ")
    m.env["HSA_OVERRIDE_GFX_VERSION"] = "11.0.0"


def no_device(m: Machine) -> None:
    m.hipinfo = HIPINFO_NO_WDDM
    m.wmi = [WMI_IGPU]
    m.devices = []
    m.available = False


def env_scopes(m: Machine) -> None:
    m.user_env["HIP_PATH"] = (r"C:\Program Files\AMD\ROCm\6.2" + "\\", "REG_SZ")
    m.env["HIP_PATH"] = r"C:\Program Files\AMD\ROCm\6.2" + "\\"
    m.machine_env["MIOPEN_FIND_MODE"] = ("2", "REG_SZ")  # set after this shell started


SCENARIOS = {
    "windows-buildtools-cpp": healthy,
    "windows-buildtools-no-cpp": build_tools_without_cpp,
    "windows-vswhere-banner-only": vswhere_banner_only,
    "windows-igpu-first": igpu_first,
    "windows-system32-shadow": system32_shadow,
    "windows-two-hip-runtimes": two_runtimes,
    "windows-path-1500": path_1500,
    "windows-hsa-override": hsa_override,
    "windows-no-device": no_device,
    "windows-env-scopes": env_scopes,
}


def build(name: str, root: Path) -> Observations:
    machine = Machine(root)
    SCENARIOS[name](machine)
    return machine.build()


def regenerate() -> None:
    SNAPSHOTS.mkdir(exist_ok=True)
    for name in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            data = snapshot.to_dict(build(name, Path(tmp)))
        data["created_at"] = "2026-11-30T08:00:00+00:00"
        (SNAPSHOTS / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print("wrote", SNAPSHOTS / f"{name}.json")


# Tests ---------------------------------------------------------------------------------------------------------

def run_check(path: Path) -> dict:
    from click.testing import CliRunner

    from rocm_doctor.cli.main import cli

    result = CliRunner().invoke(cli, ["check", "--from", str(path), "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def typed(finding: dict, shell: str, alternative: str = "") -> list[str]:
    """What the user types for a finding's steps (or those of its alternative whose title has `alternative`)."""
    raws = next(a["steps"] for a in finding["alternatives"] if alternative in a["title"]) if alternative else finding["fix"]
    return [line for raw in raws for line in commands(step_from_dict(raw), shell)]


def problems(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["status"] in ("fail", "warn", "error")]


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
                   f'"{BUILD_TOOLS}" --add Microsoft.VisualStudio.Workload.VCTools --add '
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
    assert CORE + r"\bin\amdhip64_7.dll" in lead[0]["evidence"][0]
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
