"""A fake Windows machine for the replayed Windows snapshots: the real Windows probes run on Linux against a
FakeWindowsHost (fake folder trees under a temp dir, a fake registry, the real vswhere / hipInfo outputs from
tests/fixtures), one function per situation. Used by tests/test_windows_snapshots.py, which also rewrites the
snapshots, and tests/test_windows_layer_scenarios.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from rocm_doctor.engine.remedy import step_from_dict
from rocm_doctor.engine.runner import CommandResult
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
