"""Windows HIP stack: HIP SDK installs (HIP_PATH / HIP_PATH_xx, C:\\Program Files\\AMD\\ROCm\\<ver>), hipInfo.exe,
the AMD display driver (Adrenalin) from the registry, and TheRock rocm-sdk packages / torch location in the
target interpreter (a small child), with scans of torch\\lib and the SDK's bin folders for ROCm DLLs.
WINDOWS-ONLY probe; the WMI adapter list comes from the pci probe ("wmi-video-controllers")."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from rocm_doctor.engine.child import child_env
from rocm_doctor.facts.keys import (AMD_CN_KEY, DISPLAY_CLASS_KEY, HIPINFO_COMMAND_KEY, MACHINE_ENV_KEY, SDK_COMMAND_KEY,
                                    USER_ENV_KEY)
from rocm_doctor.parsers.rocm_sdk import parse_rocm_sdk
from rocm_doctor.probes._base import Recorder
from rocm_doctor.probes.windows_record import WindowsRecorder
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.host import WindowsHost, default_host
from rocm_doctor.windows.patterns import SCAN_PATTERNS

PLATFORMS = ("windows",)
SDK_CHILD = Path(__file__).resolve().parent.parent / "windows" / "_sdk_child.py"
DRIVER_VALUES = (
    "DriverDesc",
    "DriverVersion",
    "ProviderName",
    "MatchingDeviceId",
    "RadeonSoftwareVersion",
    "RadeonSoftwareEdition",
)


def rocm_root(env) -> str:
    return paths.join(paths.ci_get(env, "ProgramFiles") or r"C:\Program Files", "AMD", "ROCm")


def hip_path_values(env, *scopes) -> list[str]:
    values = [v for k, v in env.items() if k.upper().startswith("HIP_PATH")]
    for scope in scopes:
        values += [str(v) for k, (v, _t) in scope.items() if k.upper().startswith("HIP_PATH")]
    return [v for v in values if v and not paths.has_vars(v)]


def collect(recorder: Recorder, host: Optional[WindowsHost] = None) -> None:
    win = WindowsRecorder(recorder, host or default_host(), "hip")
    env = dict(recorder.context.env)

    # TheRock packages and where torch lives, from the target interpreter (never imports torch).
    sdk = win.command(
        SDK_COMMAND_KEY, [recorder.context.python, str(SDK_CHILD)], timeout=30, env=child_env(recorder.context.env)
    )
    sdk_info = parse_rocm_sdk(sdk.stdout)  # steers the scans below; the interpreter parses it again
    bins = []
    if sdk_info.get("torch_dir"):
        bins.append(paths.join(sdk_info["torch_dir"], "lib"))
    for folder in sdk_info.get("sdk_dirs") or []:
        bins.append(paths.join(folder, "bin"))
    for folder in bins:
        win.scan_dir(folder, SCAN_PATTERNS)

    # HIP SDK installs.
    root = paths.rocm_root(env)
    listing = win.list_dir(root)
    candidates = [paths.join(root, name) for name in listing.entries or []]
    user = win.registry_values(*USER_ENV_KEY)
    machine = win.registry_values(*MACHINE_ENV_KEY)
    candidates += hip_path_values(env, user, machine)
    for folder in paths.unique(candidates):
        if win.list_dir(folder).exists:
            win.list_dir(paths.join(folder, "bin"))

    # hipInfo: the one of HIP_PATH, else the newest SDK, else TheRock's.
    hipinfo = None
    preferred = [v for k, v in env.items() if k.upper() == "HIP_PATH"]
    newest = sorted(listing.entries or [], key=_version_key, reverse=True)
    options = [paths.join(p, "bin", "hipInfo.exe") for p in preferred]
    options += [paths.join(root, v, "bin", "hipInfo.exe") for v in newest]
    options += [paths.join(d, "bin", "hipInfo.exe") for d in sdk_info.get("sdk_dirs") or []]
    for option in options:
        if win.exists(option):
            hipinfo = option
            break
    if hipinfo:
        win.command(HIPINFO_COMMAND_KEY, [hipinfo], timeout=30)

    # AMD display driver: Adrenalin's own version and each display adapter's driver.
    win.registry_value(*AMD_CN_KEY, "RadeonSoftwareVersion")
    for sub in win.registry_subkeys(*DISPLAY_CLASS_KEY):
        if sub.isdigit():
            for name in DRIVER_VALUES:
                win.registry_value(DISPLAY_CLASS_KEY[0], f"{DISPLAY_CLASS_KEY[1]}\\{sub}", name)


def _version_key(name: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in name.split("."))
