"""Visual Studio / Build Tools checks: the C++ workload, C++ standard headers for hipRTC (MIOpen's runtime kernel
compilation), and whether this shell is a developer shell."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine.shells import detect_shell
from rocm_doctor.facts.keys import WINDOWS_CXX_HEADERS, WINDOWS_DEVSHELL, WINDOWS_ROCM_SDK, WINDOWS_SDK_UCRT, WINDOWS_VS
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.checks.windows_common import rocm_stack

WINDOWS = (Platform.WINDOWS,)
VC_TOOLS = "Microsoft.VisualStudio.Component.VC.Tools.x86.x64"  # the MSVC compiler and C++ headers
# the Windows SDK with the UCRT headers that the C++ headers include, by Visual Studio release
WINDOWS_SDK = {16: "Microsoft.VisualStudio.Component.Windows10SDK.19041",
               17: "Microsoft.VisualStudio.Component.Windows11SDK.22621"}


def install_build_tools():
    return S.run_command(
        ["winget", "install", "--id", "Microsoft.VisualStudio.2022.BuildTools", "--override",
         "--passive --wait --add Microsoft.VisualStudio.Workload.VCTools --includeRecommended"],
        needs_admin=True, then=S.AFTER_NEW_SHELL, description="install Build Tools for Visual Studio 2022 with the C++ "
        "workload", note="MSVC's C++ headers for hipRTC and extension builds")


def add_cpp(instance):
    """The installer step adding the C++ workload, with its MSVC toolset and a Windows SDK, to an existing instance."""
    workload = "Microsoft.VisualStudio.Workload.VCTools" if instance.get("is_build_tools") else "Microsoft.VisualStudio.Workload.NativeDesktop"
    release = str(instance.get("installation_version") or instance.get("display_version") or "").split(".")[0]
    sdk = WINDOWS_SDK.get(int(release) if release.isdigit() else 17, WINDOWS_SDK[17])
    return S.vs_component([workload, VC_TOOLS, sdk], install_path=instance["installation_path"],
                          note="MSVC's C++ headers for hipRTC and extension builds")


def _label(instance):
    return f"{instance.get('display_name') or instance.get('product')} {instance.get('display_version') or instance.get('installation_version') or ''} ({instance.get('installation_path')})".replace("  ", " ")


class VsCppWorkloadMissing(Check):
    id = "vs-cpp-workload-missing"
    title = "The C++ workload of Visual Studio or Build Tools"
    explains = ("hiprtc-headers-missing", "vs-dev-shell-inactive")
    area = "windows-build"
    severity = Severity.MEDIUM
    platforms = WINDOWS
    requires = (WINDOWS_VS,)
    docs = ("https://learn.microsoft.com/en-us/visualstudio/install/use-command-line-parameters-to-install-visual-studio",
            "https://github.com/microsoft/vswhere/issues/177")

    def run(self, facts):
        vs = facts[WINDOWS_VS]
        instances = vs["instances"]
        stack = rocm_stack(facts)
        level = self.warn if stack else self.info
        why = (" It matters here: " + "; ".join(stack) + " — hipRTC (MIOpen kernels) and torch extension builds need "
               "the MSVC C++ headers.") if stack else ""
        with_cpp = [i for i in instances if i.get("has_vc_tools")]
        if with_cpp:
            return self.ok("C++ tools in " + ", ".join(_label(i) for i in with_cpp))
        vswhere = vs["vswhere"]
        evidence = [vswhere["describe"] or f"{vswhere['path']} not found"]
        if vswhere.get("format") == "banner":
            evidence.append("vswhere printed only its banner (no instances)"
                            + ("" if vswhere.get("products_star") else "; without `-products *` Build Tools are not listed"))
        if not instances:
            return level(
                "no Visual Studio or Build Tools installation was found (vswhere lists none), so there is no MSVC C++ "
                "compiler or C++ standard library headers." + why,
                subject="none",
                evidence=evidence,
                remediation=["Or download 'Build Tools for Visual Studio 2022' and tick 'Desktop development with C++'."],
                fix=[install_build_tools()],
            )
        out = []
        for instance in instances:
            if instance.get("has_vc_tools") is False or instance.get("has_vc_tools") is None:
                out.append(
                    level(
                        f"{_label(instance)} is installed without the C++ workload (no "
                        "Microsoft.VisualStudio.Component.VC.Tools.x86.x64): no MSVC compiler or C++ headers." + why,
                        subject=instance.get("instance_id") or instance.get("installation_path"),
                        evidence=evidence + [f"MSVC toolsets found: {', '.join(t['version'] for t in instance['msvc']) or 'none'}"],
                        fix=[add_cpp(instance)],
                    )
                )
        return out


class HiprtcHeadersMissing(Check):
    id = "hiprtc-headers-missing"
    title = "C++ standard headers (type_traits) for hipRTC's runtime kernel compilation"
    area = "windows-build"
    severity = Severity.HIGH
    platforms = WINDOWS
    requires = (WINDOWS_CXX_HEADERS,)
    docs = ("https://github.com/ROCm/ROCm/issues/5941",)

    def run(self, facts):
        headers = facts[WINDOWS_CXX_HEADERS]
        stack = rocm_stack(facts)
        if not stack:
            return self.skip("no ROCm torch, rocm-sdk package or HIP SDK here")
        if headers["reachable"]:
            if not headers.get("ucrt"):
                return self.warn(
                    "MSVC's C++ headers are there but the Windows SDK UCRT headers (Windows Kits\\10\\Include\\<ver>\\ucrt) "
                    "are not; headers such as <limits> and <cstdint> include UCRT ones, so hipRTC compiles can still fail.",
                    subject="ucrt",
                    evidence=[f"C++ headers via {v}" for v in headers["via"]] + ([
                        f"Windows SDK {u['version']}: {u['path']} has no corecrt.h"
                        for u in facts.get(WINDOWS_SDK_UCRT) or []] or ["Windows Kits\\10\\Include: no SDK version"]),
                    remediation=[
                        "Add a Windows SDK to the Build Tools / Visual Studio instance (Visual Studio Installer > Modify > "
                        "Individual components > Windows 11 SDK).",
                    ],
                )
            return self.ok("C++ standard headers reachable via " + "; ".join(headers["via"]))
        instances = (facts.get(WINDOWS_VS) or {}).get("instances") or []
        steps = [add_cpp(i) for i in instances if not i.get("has_vc_tools")] or ([] if instances else
                                                                                 [install_build_tools()])
        remediation = [
            "Or upgrade the rocm-sdk / torch wheels: newer TheRock builds package the C++ headers hipRTC needs "
            "(TheRock PR #3588).",
            "Workaround until then: torch.backends.cudnn.enabled = False in your script skips MIOpen (slower "
            "convolutions/RNNs, but no runtime compilation).",
        ]
        broken = [t for i in instances for t in i["msvc"] if not all(t["headers"].values())]
        evidence = ["ROCm here: " + "; ".join(stack)]
        evidence += [f"MSVC {t['version']}: missing {', '.join(h for h, ok in t['headers'].items() if not ok)} in {t['include']}" for t in broken]
        evidence.append("INCLUDE: " + (", ".join((facts.get(WINDOWS_DEVSHELL) or {}).get("include") or []) or "not set"))
        evidence.append("rocm-sdk ships no type_traits" if facts.has(WINDOWS_ROCM_SDK) else
                        f"rocm-sdk packages: {facts.why_missing(WINDOWS_ROCM_SDK)}")
        return self.warn(
            "no C++ standard library headers are reachable (no MSVC toolset with <type_traits>, no INCLUDE, none "
            "shipped with the ROCm packages). The first MIOpen operation that compiles a kernel at run time "
            "(convolutions, RNN/LSTM, reductions) will fail with \"fatal error: 'type_traits' file not found\" / "
            "HIPRTC_ERROR_COMPILATION and miopenStatusUnknownError.",
            evidence=evidence,
            remediation=remediation,
            fix=steps,
        )


class VsDevShellInactive(Check):
    id = "vs-dev-shell-inactive"
    title = "Visual Studio developer shell settings in this shell (cl.exe, INCLUDE)"
    area = "windows-build"
    severity = Severity.LOW
    platforms = WINDOWS
    requires = (WINDOWS_VS, WINDOWS_DEVSHELL)

    def run(self, facts):
        devshell = facts[WINDOWS_DEVSHELL]
        ready = [i for i in facts[WINDOWS_VS]["instances"] if i.get("has_vc_tools")]
        if not ready:
            return self.skip("no Visual Studio instance with the C++ tools (see vs-cpp-workload-missing)")
        if devshell["active"]:
            return self.ok(f"developer shell active (cl.exe in {devshell['cl_on_path'][0]})")
        instance = ready[0]
        root = instance["installation_path"]
        script = instance.get("devshell_script") or paths.join(root, "Common7", "Tools", "Launch-VsDevShell.ps1")
        vcvars = instance.get("vcvars64") or paths.join(root, "VC", "Auxiliary", "Build", "vcvars64.bat")
        return self.info(
            f"{_label(instance)} has the C++ tools, but this shell is not a developer shell (INCLUDE "
            f"{'set' if devshell['include'] else 'unset'}, cl.exe {'on' if devshell['cl_on_path'] else 'not on'} PATH). "
            "Building torch extensions (torch.utils.cpp_extension) and torch.compile's C++ backend call cl.exe and need it.",
            evidence=[f"INCLUDE = {';'.join(devshell['include']) or '(unset)'}", f"VSINSTALLDIR = {devshell.get('vs_install_dir')}"],
            remediation=["Or start 'x64 Native Tools Command Prompt for VS' from the Start menu."],
            fix=_devshell(detect_shell(facts.env, facts.os), script, vcvars),
        )


def _devshell(shell: str, script: str, vcvars: str) -> list:
    """The script that turns this window into a developer shell: vcvars64.bat in cmd, Launch-VsDevShell.ps1 in
    PowerShell; none for another shell (Git Bash), which neither can change."""
    if shell == "cmd":
        return [S.run_command([vcvars], description="make this cmd window a developer shell (64-bit tools)")]
    if shell == "powershell":
        return [S.run_command([script, "-Arch", "amd64", "-HostArch", "amd64"],
                              description="make this PowerShell window a developer shell (64-bit tools)")]
    return []
