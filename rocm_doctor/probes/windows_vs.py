"""Visual Studio / Build Tools and the C++ headers hipRTC needs: vswhere.exe at its standard path, run with
`-products *` (without it Build Tools installs are invisible, microsoft/vswhere#177) and `-all -prerelease`,
once for every instance and once `-requires` the C++ x64 tools; per instance the MSVC toolsets and their
<type_traits>/<limits>/<cstdint>; the Windows SDK UCRT headers; and the developer shell (INCLUDE).
WINDOWS-ONLY probe."""

from __future__ import annotations

from typing import Optional

from rocm_doctor.facts.keys import VSWHERE_KEY, VSWHERE_VC_KEY
from rocm_doctor.parsers.vswhere import VC_TOOLS_COMPONENT, parse_vswhere
from rocm_doctor.probes._base import Recorder
from rocm_doctor.probes.windows_record import WindowsRecorder
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.host import WindowsHost, default_host
from rocm_doctor.windows.patterns import CXX_HEADERS

PLATFORMS = ("windows",)
BASE_ARGS = ("-products", "*", "-all", "-prerelease", "-format", "json", "-utf8")


def collect(recorder: Recorder, host: Optional[WindowsHost] = None) -> None:
    win = WindowsRecorder(recorder, host or default_host(), "vs")
    env = dict(recorder.context.env)
    vswhere = paths.vswhere_path(env)
    if win.exists(vswhere):
        result = win.command(VSWHERE_KEY, [vswhere, *BASE_ARGS], timeout=30)
        win.command(VSWHERE_VC_KEY, [vswhere, *BASE_ARGS, "-requires", VC_TOOLS_COMPONENT], timeout=30)
        for instance in parse_vswhere(result.stdout)["instances"]:
            root = instance.get("installation_path")
            if not root:
                continue
            msvc = paths.join(root, "VC", "Tools", "MSVC")
            for version in win.list_dir(msvc).entries or []:
                include = paths.join(msvc, version, "include")
                for header in CXX_HEADERS:
                    win.exists(paths.join(include, header))
                win.exists(paths.join(msvc, version, "bin", "Hostx64", "x64", "cl.exe"))
            win.exists(paths.join(root, "VC", "Auxiliary", "Build", "vcvars64.bat"))
            win.exists(paths.join(root, "Common7", "Tools", "Launch-VsDevShell.ps1"))

    kits = paths.kits_include(env)
    for version in win.list_dir(kits).entries or []:
        win.exists(paths.join(kits, version, "ucrt", "corecrt.h"))

    for folder in paths.split_path_var(paths.ci_get(env, "INCLUDE")):
        win.exists(paths.join(folder, "type_traits"))
