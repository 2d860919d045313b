"""Windows HIP stack checks: HIP SDK installs and HIP_PATH, hipInfo's view of the GPUs, the AMD display driver.
(hipInfo's device order is judged by igpu-enumerated-first in amd_igpu.py, on every platform.)"""

from __future__ import annotations

import re

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.engine import remedy as S
from rocm_doctor.facts.keys import (TORCH_HIP, WINDOWS_DRIVER, WINDOWS_HIPINFO, WINDOWS_HIP_HIP_PATH,
                                    WINDOWS_HIP_INSTALLS)
from rocm_doctor.checks.windows_common import rocm_stack

from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_GPU_WORK

WINDOWS = (Platform.WINDOWS,)
_RDNA2 = re.compile(r"\bRX\s*6\d{3}", re.I)


def _major(version):
    try:
        return int(str(version).split(".")[0])
    except (TypeError, ValueError):
        return None


def _amd_wmi(facts):
    return [a for a in (facts.get(WINDOWS_DRIVER) or {}).get("wmi") or [] if a.get("vendor_id") == "0x1002"]


class HipSdkMissing(Check):
    id = "hip-sdk-missing"
    title = "The HIP SDK install at HIP_PATH"
    area = "windows-hip"
    severity = Severity.MEDIUM
    platforms = WINDOWS
    requires = (WINDOWS_HIP_INSTALLS, WINDOWS_HIP_HIP_PATH)
    docs = ("https://rocm.docs.amd.com/projects/install-on-windows/en/latest/",)

    def run(self, facts):
        installs = [i for i in facts[WINDOWS_HIP_INSTALLS] if i.get("exists")]
        out = []
        for name, scopes in facts[WINDOWS_HIP_HIP_PATH].items():
            if scopes.get("exists") is False:
                folder = scopes.get("process") or scopes.get("user") or scopes.get("machine")
                set_in = [s for s in ("process", "user", "machine") if scopes.get(s)]
                gone = [s for s in set_in if paths.same(scopes[s], folder)]  # a scope may name another, present SDK
                sdk = installs[0]["path"].rstrip("\\") + "\\" if installs else None
                out.append(
                    self.warn(
                        f"{name} points to {folder}, which does not exist (an uninstalled HIP SDK?). Tools and builds "
                        "that read it (hipcc, CMake's HIP support, torch extension builds) will fail.",
                        subject=name,
                        evidence=[f"{name} ({s}) = {scopes[s]}" for s in set_in],
                        fix=[S.unset_env(name, scope=s, note="it names a folder that is gone") for s in gone],
                        alternatives=[S.alternative(
                            f"point it at the installed SDK {sdk}",
                            *(S.set_env(name, sdk, scope=s) for s in gone),
                            why_not_first="only builds that need this SDK need it set; the installer sets it again")]
                        if sdk else [],
                    )
                )
        if out:
            return out
        if installs:
            return self.ok("HIP SDK " + ", ".join(f"{i['version']} at {i['path']}" for i in installs))
        stack = rocm_stack(facts)
        return self.info(
            "no HIP SDK is installed. PyTorch does not need it (the ROCm wheels bring their own HIP runtime and "
            "libraries); it is needed to compile HIP code (hipcc) or build torch extensions."
            + (f" Found instead: {'; '.join(stack)}." if stack else ""),
            remediation=["If you build HIP code: install the AMD HIP SDK for Windows "
                         "(https://www.amd.com/en/developer/resources/rocm-hub/hip-sdk.html); it sets HIP_PATH."],
        )


class HipSdkVersionMismatch(Check):
    id = "hip-sdk-version-mismatch"
    title = "HIP_PATH's HIP version against torch's"
    area = "windows-hip"
    severity = Severity.MEDIUM
    platforms = WINDOWS
    requires = (WINDOWS_HIP_INSTALLS, WINDOWS_HIP_HIP_PATH)

    def run(self, facts):
        hip_path = facts[WINDOWS_HIP_HIP_PATH].get("HIP_PATH") or {}
        installs = [i for i in facts[WINDOWS_HIP_INSTALLS] if i.get("exists")]
        version = hip_path.get("version")
        if not hip_path or not version:
            return self.skip("HIP_PATH is not set (see hip-sdk-missing)")
        out = []
        torch_hip = facts.get(TORCH_HIP)
        if torch_hip and _major(torch_hip) != _major(version):
            matching = [i for i in installs if _major(i.get("version")) == _major(torch_hip)]
            out.append(
                self.warn(
                    f"torch was built with HIP {torch_hip} but HIP_PATH points to HIP SDK {version}: extensions you "
                    "build (torch.utils.cpp_extension, bitsandbytes, flash-attention) compile against one runtime and "
                    "load beside another, which fails at load time or crashes.",
                    subject="torch",
                    evidence=[f"torch.version.hip = {torch_hip}", f"HIP_PATH = {hip_path.get('process') or hip_path.get('machine') or hip_path.get('user')}"],
                    remediation=["Or use a torch build for the installed SDK's HIP version." if matching else
                                 f"Install the HIP SDK {_major(torch_hip)}.x matching torch and point HIP_PATH at it "
                                 "for builds, or use a torch build for the installed SDK's HIP version."],
                    fix=[S.set_env("HIP_PATH", matching[0]["path"].rstrip("\\") + "\\", scope="process",
                                   note="builds in this shell use the HIP that torch was built with")]
                    if matching else [],
                )
            )
        newest = installs[0] if installs else None
        if newest and newest.get("version") and newest["version"] != version:
            out.append(
                self.info(
                    f"HIP_PATH points to HIP SDK {version}, but {newest['version']} is also installed "
                    f"({newest['path']}); HIP_PATH_{newest['version'].replace('.', '')[:2]} names it.",
                    subject="newest",
                    evidence=[f"installed: {i['version']} at {i['path']}" for i in installs],
                    remediation=["Or uninstall the SDK you no longer use (Settings > Apps)."],
                    fix=[S.set_env("HIP_PATH", newest["path"].rstrip("\\") + "\\", scope=scope,
                                   note="the newest installed HIP SDK")
                         for scope in ("process", "user", "machine") if hip_path.get(scope)],
                )
            )
        same = (f", matching torch's HIP {torch_hip}" if _version_prefix(torch_hip, version) else
                f", the same major release as torch's HIP {torch_hip}") if torch_hip else ""
        return out or self.ok(f"HIP_PATH points to HIP SDK {version}{same}")


def _version_prefix(full: str, short: str) -> bool:
    """7.2.26024 is the SDK 7.2 torch was built with; 7.1 is not (the check judges by major release only)."""
    return f"{full}.".startswith(f"{short}.")


class WindowsGpuNotEnumerated(Check):
    id = "windows-gpu-not-enumerated"
    title = "AMD GPUs in the HIP runtime's enumeration (hipInfo)"
    explains = TORCH_GPU_WORK
    area = "windows-hip"
    severity = Severity.CRITICAL
    platforms = WINDOWS
    requires = (WINDOWS_HIPINFO,)
    docs = ("https://github.com/ROCm/ROCm/issues/6167", "https://github.com/ROCm/hip/issues/3899")

    def run(self, facts):
        info = facts[WINDOWS_HIPINFO]
        devices = info.get("devices") or []
        if devices:
            return self.ok("hipInfo lists " + ", ".join(f"#{d['index']} {d.get('name')} ({d.get('gfx')})" for d in devices))
        if info.get("error") or info.get("timed_out"):
            return self.skip(f"hipInfo did not run: {info.get('describe')}")
        evidence = [f"hipInfo: {line}" for line in info.get("error_lines") or []] + [info.get("describe") or ""]
        amd = _amd_wmi(facts)
        names = [a.get("name") or "?" for a in amd]
        evidence += [f"WMI adapter: {a.get('name')} ({a.get('pnp_device_id')}, driver {a.get('driver_version')})" for a in amd]
        remediation = []
        cause = ""
        if amd and all("basic display" in (n or "").lower() for n in names):
            cause = " Windows shows the AMD GPU with the Microsoft Basic Display driver: the AMD driver is not installed."
            remediation.append("Install AMD Software: Adrenalin Edition for the GPU (https://www.amd.com/en/support).")
        elif amd and all(_integrated_name(n) for n in names):
            cause = (" Only an AMD integrated GPU is present; with some drivers an RDNA2 iGPU alone is not enumerated "
                     "(\"No WDDM adapters found\", ROCm/ROCm#6167, open).")
            remediation.append("Integrated GPUs without a discrete AMD GPU are not supported by the Windows HIP runtime "
                               "for most chips; check AMD's Windows support list, or use a supported discrete GPU.")
        elif any(_RDNA2.search(n or "") for n in names) and _major(_exe_version(info)) == 7:
            cause = " An RDNA2 (RX 6000) GPU with a HIP 7.x runtime: HIP SDK 7.x dropped RDNA2 (ROCm/hip#3899)."
            remediation.append("Use HIP SDK 6.4 (amdhip64_6.dll) for RDNA2 GPUs.")
        if not amd:
            cause = cause or " WMI shows no AMD display adapter at all."
        remediation += [
            "Update AMD Software: Adrenalin Edition to the version AMD lists for your HIP SDK / PyTorch build.",
            "Check the GPU against AMD's Windows support matrix (https://rocm.docs.amd.com/projects/install-on-windows/en/latest/reference/system-requirements.html).",
        ]
        return self.fail(
            "the HIP runtime finds no usable GPU" + (" (\"No WDDM adapters found\")" if info.get("no_wddm_adapters") else "")
            + "; nothing ROCm-based (PyTorch included) can use the GPU." + cause,
            evidence=[e for e in evidence if e],
            remediation=remediation,
        )


def _integrated_name(name):
    lowered = (name or "").lower()
    return lowered.strip() in ("amd radeon(tm) graphics", "amd radeon graphics") or "vega" in lowered and "rx" not in lowered


def _exe_version(info):
    exe = (info.get("exe") or "").replace("/", "\\")
    for part in exe.split("\\"):
        if part[:1].isdigit() and "." in part:
            return part
    return None


class AmdDisplayDriver(Check):
    id = "amd-display-driver-missing"
    title = "The AMD display driver (Adrenalin) for the AMD GPU"
    explains = ("windows-gpu-not-enumerated", "torch-cuda-unavailable", *GPU_WORK)
    area = "windows-hip"
    severity = Severity.HIGH
    platforms = WINDOWS
    requires = (WINDOWS_DRIVER,)

    def run(self, facts):
        driver = facts[WINDOWS_DRIVER]
        amd = _amd_wmi(facts)
        if not amd and not driver.get("wmi_ran"):
            return self.skip("the WMI adapter list was not collected")
        if not amd:
            return self.skip("no AMD display adapter in WMI")
        basic = [a for a in amd if "basic display" in (a.get("name") or "").lower()]
        evidence = [f"WMI: {a.get('name')} driver {a.get('driver_version')} ({a.get('pnp_device_id')})" for a in amd]
        if driver.get("adrenalin"):
            evidence.append(f"Radeon Software (Adrenalin) version {driver['adrenalin']}")
        if basic:
            return self.fail(
                "Windows runs the AMD GPU on the Microsoft Basic Display Adapter driver: no AMD driver is installed, "
                "so there is no HIP runtime for it.",
                evidence=evidence,
                remediation=["Install AMD Software: Adrenalin Edition (https://www.amd.com/en/support), then reboot."],
            )
        return self.ok(
            "AMD driver " + ", ".join(f"{a.get('driver_version')} for {a.get('name')}" for a in amd)
            + (f"; Adrenalin {driver['adrenalin']}" if driver.get("adrenalin") else "")
        )
