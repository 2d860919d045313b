"""windows.os, windows.vc_runtime, windows.driver_release and windows.driver_needs: the Windows build, the Visual
C++ runtime torch's DLLs load, which AMD driver is installed (named through AMD's version table), and which
driver the installed PyTorch wheels and HIP SDKs name or ship."""

from __future__ import annotations

import re

from rocm_doctor.engine.child import parse_json_lines
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret.torch_facts import COMMAND_KEY as TORCH_PROBE
from rocm_doctor.facts.keys import (CURRENT_VERSION_KEY, DIR_SCAN_PREFIX, TORCH_FLAVOUR, TORCH_HIP, TORCH_VERSION,
                                    WINDOWS_DLLS, WINDOWS_DRIVER, WINDOWS_DRIVER_NEEDS, WINDOWS_DRIVER_RELEASE,
                                    WINDOWS_HIP_INSTALLS, WINDOWS_OS, WINDOWS_ROCM_SDK, WINDOWS_VC_RUNTIME)
from rocm_doctor.interpret.windows_env import not_windows
from rocm_doctor.knowledge import windows_layer as table
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.observed import Seen
from rocm_doctor.windows.patterns import is_hip_runtime

REQUIRES = (TORCH_FLAVOUR, TORCH_HIP, TORCH_VERSION, WINDOWS_DLLS, WINDOWS_DRIVER, WINDOWS_HIP_INSTALLS,
            WINDOWS_ROCM_SDK)
KEYS = (WINDOWS_OS, WINDOWS_VC_RUNTIME, WINDOWS_DRIVER_RELEASE, WINDOWS_DRIVER_NEEDS)
_MSVC = re.compile(r"MSVC (\d{2})(\d{2})\d+")
_VC_WARNING = "Microsoft Visual C++ Redistributable is not installed"


def interpret(observations: Observations, facts: Facts) -> None:
    if not_windows(observations, facts, KEYS):
        return
    seen = Seen(observations)
    os_fact = windows_os(seen, observations.platform)
    if os_fact is None:
        facts.set_missing(WINDOWS_OS, "neither the registry nor the platform probe gave the Windows build")
    else:
        facts.set(WINDOWS_OS, os_fact)
    runtime = vc_runtime(seen, observations)
    if runtime is None:
        facts.set_missing(WINDOWS_VC_RUNTIME, "the Visual C++ runtime was not looked at (windows_runtime probe did not run)")
    else:
        facts.set(WINDOWS_VC_RUNTIME, runtime)
    if facts.has(WINDOWS_DRIVER):
        facts.set(WINDOWS_DRIVER_RELEASE, driver_release(facts.get(WINDOWS_DRIVER)))
    else:
        facts.set_missing(WINDOWS_DRIVER_RELEASE, facts.why_missing(WINDOWS_DRIVER))
    facts.set(WINDOWS_DRIVER_NEEDS, driver_needs(facts))


def _int(value):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def windows_os(seen: Seen, platform: dict) -> dict | None:
    values = {name.lower(): (item or {}).get("value") for name, item in (seen.reg_values(*CURRENT_VERSION_KEY) or {}).items()}
    build = _int(values.get("currentbuildnumber")) or _int(values.get("currentbuild"))
    source = "registry"
    if build is None:
        text = str(platform.get("windows_build") or platform.get("version") or "")
        parts = text.split(".")
        build = _int(parts[2]) if len(parts) >= 3 else None
        source = f"platform version {text}" if build else None
    if build is None:
        return None
    server = str(values.get("installationtype") or "").lower() == "server"
    return {
        "build": build,
        "ubr": _int(values.get("ubr")),
        "display_version": values.get("displayversion") or values.get("releaseid"),
        "product_name": values.get("productname"),
        "edition": values.get("editionid"),
        "server": server,
        "windows11": not server and table.windows_11(build),
        "name": table.windows_name(build, server),
        "source": source,
    }


def vc_runtime(seen: Seen, observations: Observations) -> dict | None:
    spec = table.vc_runtime()
    registry = None
    read_any = False
    for key in spec["registry_keys"]:
        entry = seen.reg_key("HKLM", key)
        if entry is None:
            continue
        read_any = True
        values = {n.lower(): (v or {}).get("value") for n, v in (seen.reg_values("HKLM", key) or {}).items()}
        if values and registry is None:
            version = str(values.get("version") or "")
            registry = {"key": "HKLM\\" + key, "installed": _int(values.get("installed")) == 1,
                        "version": version or None, "version_tuple": list(table.dotted(version)[:3])}
    folder = paths.system32(observations.env)
    scan = _scan_for(observations, folder, spec["dlls"])
    if scan is None and not read_any:
        return None
    scanned = scan is not None and not scan.get("error")
    present = {name.lower() for name in (scan or {}).get("matches") or []}
    torch_msvc, warning = _torch_build(observations)
    return {
        "registry": registry,
        "registry_read": read_any,
        "system32": folder,
        "scanned": scanned,
        "present": [d for d in spec["dlls"] if d in present],
        "missing": [d for d in spec["dlls"] if d not in present] if scanned else [],
        "torch_msvc": torch_msvc,
        "torch_warning": warning,
    }


def _scan_for(observations: Observations, folder: str, names) -> dict | None:
    """The scan of `folder` by a probe that looked for these names (another probe's scan of System32 keeps only
    the names it wanted, so their absence there says nothing)."""
    for key, value in observations.probes.items():
        if not key.startswith(DIR_SCAN_PREFIX) or not isinstance(value, dict):
            continue
        patterns = {str(p).lower() for p in value.get("patterns") or []}
        if not {n.lower() for n in names} <= patterns:
            continue
        for path, item in (value.get("dirs") or {}).items():
            if paths.same(path, folder) and isinstance(item, dict):
                return item
    return None


def _torch_build(observations: Observations) -> tuple[str | None, str | None]:
    """(MSVC toolset that built torch as '14.44', torch's own 'Redistributable is not installed' line)."""
    result = observations.command(TORCH_PROBE)
    if result is None:
        return None, None
    toolset = None
    for stage in parse_json_lines(result.stdout):
        if stage.get("stage") == "build":
            match = _MSVC.search(str(stage.get("config") or ""))
            if match and match.group(1) == "19":
                toolset = f"14.{match.group(2)}"
    text = (result.stdout or "") + "\n" + (result.stderr or "")
    warning = next((line.strip() for line in text.splitlines() if _VC_WARNING in line), None)
    return toolset, warning


def driver_release(driver: dict) -> dict:
    """The installed AMD driver per AMD adapter, named through AMD's table (public version, branch, date) or
    decoded from the Windows driver version when the table does not list it (a preview driver)."""
    adapters = []
    for item in driver.get("wmi") or []:
        if item.get("vendor_id") != "0x1002" or "basic display" in (item.get("name") or "").lower():
            continue
        version = item.get("driver_version")
        row = table.driver_by_windows_version(version)
        adapters.append({
            "name": item.get("name"), "windows_version": version,
            "internal": (row or {}).get("internal_version") or table.decode_internal(version),
            "adrenalin": (row or {}).get("adrenalin"), "branch": (row or {}).get("branch"),
            "date": (row or {}).get("date"), "in_table": row is not None,
        })
    if not adapters:
        for item in driver.get("adapters") or []:
            if "advanced micro devices" in str(item.get("provider") or "").lower() and item.get("driver_version"):
                version = item["driver_version"]
                row = table.driver_by_windows_version(version)
                adapters.append({
                    "name": item.get("description"), "windows_version": version,
                    "internal": (row or {}).get("internal_version") or table.decode_internal(version),
                    "adrenalin": (row or {}).get("adrenalin"), "branch": (row or {}).get("branch"),
                    "date": (row or {}).get("date"), "in_table": row is not None,
                })
    return {"registry_adrenalin": driver.get("adrenalin"), "adapters": adapters,
            "wmi_ran": bool(driver.get("wmi_ran"))}


def driver_needs(facts: Facts) -> dict:
    """What the installed stack needs of the driver: the PyTorch-on-Windows release row (or TheRock nightlies,
    which name no minimum) and, per installed HIP SDK, the runtime DLL the driver must put in System32."""
    sdk = facts.get(WINDOWS_ROCM_SDK) or {}
    packages = sdk.get("packages") or {}
    pytorch = None
    if facts.get(TORCH_FLAVOUR) == "rocm":
        row, how = table.pytorch_release(packages.get("rocm"), facts.get(TORCH_VERSION), facts.get(TORCH_HIP))
        pytorch = {"release": row["release"] if row else None, "matched_by": how, "row": row,
                   "torch": facts.get(TORCH_VERSION), "hip": facts.get(TORCH_HIP), "rocm": packages.get("rocm")}
    dlls = facts.get(WINDOWS_DLLS) or {}
    system32_runtimes = sorted(n for n in dlls.get("system32_copies") or [] if is_hip_runtime(n))
    hip_sdks = []
    for install in facts.get(WINDOWS_HIP_INSTALLS) or []:
        if not install.get("exists"):
            continue
        row = table.hip_sdk_row(install.get("version"))
        wanted = (row or {}).get("runtime_dll")
        hip_sdks.append({
            "version": install.get("version"), "path": install.get("path"), "row": row, "runtime_dll": wanted,
            "runtime_present": (wanted.lower() in {n.lower() for n in system32_runtimes})
            if wanted and dlls.get("system32_scanned") else None,
        })
    return {"pytorch": pytorch, "hip_sdks": hip_sdks, "system32_runtimes": system32_runtimes,
            "system32_scanned": bool(dlls.get("system32_scanned"))}
