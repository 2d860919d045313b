"""windows.hip.*, windows.hipinfo, windows.driver and windows.rocm_sdk facts: HIP SDK installs, hipInfo's device
list, the AMD display driver (registry + the pci probe's WMI adapters) and TheRock packages in the target."""

from __future__ import annotations

import re

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.facts.keys import (AMD_CN_KEY, DISPLAY_CLASS_KEY, HIPINFO_COMMAND_KEY, MACHINE_ENV_KEY,
                                    SDK_COMMAND_KEY, USER_ENV_KEY, WINDOWS_DRIVER, WINDOWS_HIPINFO,
                                    WINDOWS_HIP_HIP_PATH, WINDOWS_HIP_INSTALLS, WINDOWS_ROCM_SDK, WMI_VIDEO_KEY)
from rocm_doctor.interpret.windows_env import not_windows
from rocm_doctor.parsers.hipinfo import parse_hipinfo
from rocm_doctor.parsers.rocm_sdk import parse_rocm_sdk
from rocm_doctor.parsers.wmi_video import parse_video_controllers
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.observed import Seen
from rocm_doctor.windows.patterns import is_hip_runtime, runtime_major

KEYS = (WINDOWS_HIP_INSTALLS, WINDOWS_HIP_HIP_PATH, WINDOWS_HIPINFO, WINDOWS_DRIVER, WINDOWS_ROCM_SDK)
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


def interpret(observations: Observations, facts: Facts) -> None:
    if not_windows(observations, facts, KEYS):
        return
    seen = Seen(observations)
    env = observations.env
    facts.set(WINDOWS_HIP_HIP_PATH, hip_path_fact(seen, env))
    facts.set(WINDOWS_HIP_INSTALLS, installs(seen, env))

    result = observations.command(HIPINFO_COMMAND_KEY)
    if result is None:
        facts.set_missing(WINDOWS_HIPINFO, "hipInfo.exe was not found (no HIP SDK bin folder or rocm-sdk package has it)")
    else:
        parsed = parse_hipinfo((result.stdout or "") + "\n" + (result.stderr or ""))
        for device in parsed["devices"]:
            device.pop("fields", None)
        parsed.update(exe=result.argv[0] if result.argv else None, returncode=result.returncode,
                      error=result.error, timed_out=result.timed_out, describe=result.describe())
        facts.set(WINDOWS_HIPINFO, parsed)

    facts.set(WINDOWS_DRIVER, driver_fact(seen, observations))

    sdk = observations.command(SDK_COMMAND_KEY)
    info = parse_rocm_sdk(sdk.stdout) if sdk is not None else {}
    if sdk is None:
        facts.set_missing(WINDOWS_ROCM_SDK, "the rocm-sdk package probe did not run")
    elif not info:
        facts.set_missing(WINDOWS_ROCM_SDK, f"the rocm-sdk package probe gave no answer: {sdk.describe()}")
    else:
        packages = info.get("packages") or {}
        info["therock"] = any(name.startswith("rocm-sdk") or name == "rocm" for name in packages)
        facts.set(WINDOWS_ROCM_SDK, info)


def hip_path_fact(seen: Seen, env) -> dict:
    """HIP_PATH and HIP_PATH_xx in each scope: {NAME: {"process", "user", "machine"}}."""
    out: dict[str, dict] = {}
    for key, value in env.items():
        if key.upper().startswith("HIP_PATH"):
            out.setdefault(key.upper(), {})["process"] = value
    for scope, key in (("user", USER_ENV_KEY), ("machine", MACHINE_ENV_KEY)):
        for name, item in (seen.reg_values(*key) or {}).items():
            if name.upper().startswith("HIP_PATH") and isinstance(item, dict):
                value = str(item.get("value") or "")
                if item.get("type") == "REG_EXPAND_SZ":
                    value = paths.expand(value, env)[0]
                out.setdefault(name.upper(), {})[scope] = value
    for name, scopes in out.items():
        folder = scopes.get("process") or scopes.get("user") or scopes.get("machine")
        scopes["exists"] = seen.exists(folder) if folder else None
        scopes["version"] = version_of(folder)
    return out


def version_of(folder) -> str | None:
    if not folder:
        return None
    match = _VERSION.search(paths.basename(folder.rstrip("\\/")) or "")
    return match.group(1) if match else None


def installs(seen: Seen, env) -> list[dict]:
    root = paths.rocm_root(env)
    candidates: dict[str, dict] = {}
    for name in seen.entries(root) or []:
        folder = paths.join(root, name)
        candidates.setdefault(paths.norm(folder), {"path": folder, "sources": []})["sources"].append("default folder")
    for name, scopes in hip_path_fact(seen, env).items():
        for scope in ("process", "user", "machine"):
            if scopes.get(scope):
                item = candidates.setdefault(paths.norm(scopes[scope]), {"path": scopes[scope], "sources": []})
                label = f"{name} ({scope})"
                if label not in item["sources"]:
                    item["sources"].append(label)
    out = []
    for item in candidates.values():
        folder = item["path"]
        bin_entries = seen.entries(paths.join(folder, "bin"))
        exists = seen.exists(folder)
        out.append(
            {
                **item,
                "version": version_of(folder),
                "exists": exists,
                "has_bin": bin_entries is not None,
                "has_hipinfo": any(e.lower() == "hipinfo.exe" for e in bin_entries or []),
                "runtime_dlls": sorted(e for e in bin_entries or [] if is_hip_runtime(e)),
                "runtime_majors": sorted({runtime_major(e) for e in bin_entries or [] if is_hip_runtime(e)}),
            }
        )
    return sorted(out, key=lambda i: tuple(int(p) for p in (i["version"] or "0").split(".")), reverse=True)


def driver_fact(seen: Seen, observations: Observations) -> dict:
    adapters = []
    class_key = seen.reg_key(*DISPLAY_CLASS_KEY) or {}
    for sub in class_key.get("subkeys") or []:
        values = seen.reg_values(DISPLAY_CLASS_KEY[0], f"{DISPLAY_CLASS_KEY[1]}\\{sub}") or {}
        flat = {k: (v or {}).get("value") for k, v in values.items() if isinstance(v, dict)}
        if flat:
            adapters.append(
                {
                    "key": sub,
                    "description": flat.get("DriverDesc"),
                    "driver_version": flat.get("DriverVersion"),
                    "provider": flat.get("ProviderName"),
                    "matching_device_id": flat.get("MatchingDeviceId"),
                    "radeon_software_version": flat.get("RadeonSoftwareVersion"),
                    "radeon_software_edition": flat.get("RadeonSoftwareEdition"),
                }
            )
    wmi = observations.command(WMI_VIDEO_KEY)
    wmi_adapters = parse_video_controllers(wmi.stdout) if wmi is not None and wmi.stdout else []
    adrenalin = seen.reg_value(*AMD_CN_KEY, "RadeonSoftwareVersion") or next(
        (a["radeon_software_version"] for a in adapters if a.get("radeon_software_version")), None
    )
    return {"adrenalin": adrenalin, "adapters": adapters, "wmi": wmi_adapters, "wmi_ran": wmi is not None}
