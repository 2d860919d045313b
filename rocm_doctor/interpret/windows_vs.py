"""windows.vs, windows.sdk.ucrt, windows.devshell and windows.cxx_headers facts: Visual Studio / Build Tools
instances (vswhere), their MSVC toolsets and C++ standard headers, the UCRT headers, the developer shell, and
whether hipRTC can reach C++ standard headers at all."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.facts.keys import (VSWHERE_KEY, VSWHERE_VC_KEY, WINDOWS_CXX_HEADERS, WINDOWS_DEVSHELL, WINDOWS_PATH,
                                    WINDOWS_ROCM_SDK, WINDOWS_SDK_UCRT, WINDOWS_VS)
from rocm_doctor.interpret.windows_env import not_windows
from rocm_doctor.parsers.vswhere import has_cpp_tools, parse_vswhere
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.observed import Seen
from rocm_doctor.windows.patterns import CXX_HEADERS

REQUIRES = (WINDOWS_PATH, WINDOWS_ROCM_SDK)
KEYS = (WINDOWS_VS, WINDOWS_SDK_UCRT, WINDOWS_DEVSHELL, WINDOWS_CXX_HEADERS)


def interpret(observations: Observations, facts: Facts) -> None:
    if not_windows(observations, facts, KEYS):
        return
    seen = Seen(observations)
    env = observations.env
    vs = vs_fact(seen, observations, env)
    facts.set(WINDOWS_VS, vs)

    kits = paths.kits_include(env)
    ucrt = [
        {"version": v, "path": paths.join(kits, v, "ucrt"), "corecrt_h": bool(seen.exists(paths.join(kits, v, "ucrt", "corecrt.h")))}
        for v in seen.entries(kits) or []
    ]
    if seen.file(kits) is None:
        facts.set_missing(WINDOWS_SDK_UCRT, "the Windows Kits folder was not looked at")
    else:
        facts.set(WINDOWS_SDK_UCRT, ucrt)

    include = paths.split_path_var(paths.ci_get(env, "INCLUDE"))
    with_traits = [d for d in include if seen.exists(paths.join(d, "type_traits"))]
    cl = [f["path"] for f in (facts.get(WINDOWS_PATH) or {}).get("folders") or [] if "cl.exe" in [m.lower() for m in f.get("matches") or []]]
    devshell = {
        "include": include,
        "include_with_type_traits": with_traits,
        "cl_on_path": cl,
        "vs_install_dir": paths.ci_get(env, "VSINSTALLDIR"),
        "vscmd_ver": paths.ci_get(env, "VSCMD_VER"),
        "active": bool(include) and bool(cl),
    }
    facts.set(WINDOWS_DEVSHELL, devshell)

    sdk = facts.get(WINDOWS_ROCM_SDK) or {}
    via = [f"INCLUDE: {d}" for d in with_traits]
    for inst in vs["instances"]:
        for toolset in inst["msvc"]:
            if all(toolset["headers"].values()) and (inst["has_vc_tools"] is not False):
                via.append(f"MSVC {toolset['version']} in {inst['display_name'] or inst['installation_path']}")
    sdk_headers = [h for h in sdk.get("cxx_headers") or [] if paths.basename(h) == "type_traits"]
    via += [f"rocm-sdk: {h}" for h in sdk_headers]
    facts.set(
        WINDOWS_CXX_HEADERS,
        {
            "reachable": bool(via),
            "via": via,
            "ucrt": any(u["corecrt_h"] for u in ucrt),
            "vswhere_found": vs["vswhere"]["found"],
        },
    )


def vs_fact(seen: Seen, observations: Observations, env) -> dict:
    exe = paths.vswhere_path(env)
    result = observations.command(VSWHERE_KEY)
    vc_result = observations.command(VSWHERE_VC_KEY)
    parsed = parse_vswhere(result.stdout) if result is not None else {"format": None, "banner": None, "instances": [], "error": None}
    vc_ids = None
    if vc_result is not None and vc_result.ok:
        vc_parsed = parse_vswhere(vc_result.stdout)
        if vc_parsed["format"] in ("json", "text"):
            vc_ids = {i["instance_id"] for i in vc_parsed["instances"]}
    instances = []
    for inst in parsed["instances"]:
        root = inst.get("installation_path") or ""
        msvc_dir = paths.join(root, "VC", "Tools", "MSVC")
        toolsets = []
        for version in seen.entries(msvc_dir) or []:
            include = paths.join(msvc_dir, version, "include")
            toolsets.append(
                {
                    "version": version,
                    "include": include,
                    "headers": {h: bool(seen.exists(paths.join(include, h))) for h in CXX_HEADERS},
                    "cl": bool(seen.exists(paths.join(msvc_dir, version, "bin", "Hostx64", "x64", "cl.exe"))),
                }
            )
        has_vc = None
        if vc_ids is not None:
            has_vc = inst["instance_id"] in vc_ids
        elif has_cpp_tools(inst) is not None:
            has_vc = has_cpp_tools(inst)
        elif toolsets:
            has_vc = any(t["cl"] for t in toolsets)
        instances.append(
            {
                **{k: v for k, v in inst.items() if k != "packages"},
                "has_vc_tools": has_vc,
                "msvc": toolsets,
                "vcvars64": paths.join(root, "VC", "Auxiliary", "Build", "vcvars64.bat")
                if seen.exists(paths.join(root, "VC", "Auxiliary", "Build", "vcvars64.bat")) else None,
                "devshell_script": paths.join(root, "Common7", "Tools", "Launch-VsDevShell.ps1")
                if seen.exists(paths.join(root, "Common7", "Tools", "Launch-VsDevShell.ps1")) else None,
                "setup_exe": inst.get("setup_engine_path")
                or paths.join(paths.program_files_x86(env), "Microsoft Visual Studio", "Installer", "setup.exe"),
            }
        )
    return {
        "vswhere": {
            "path": exe,
            "found": bool(seen.exists(exe)) or result is not None,
            "ran": result is not None,
            "argv": result.argv if result is not None else None,
            "describe": result.describe() if result is not None else None,
            "format": parsed["format"],
            "banner": parsed["banner"],
            "error": parsed["error"],
            "products_star": bool(result is not None and "-products" in result.argv),
        },
        "instances": instances,
    }
