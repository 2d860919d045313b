"""The Windows system under torch: the Microsoft Visual C++ runtime torch's DLLs load, and the Windows build
against the versions the installed HIP SDK and PyTorch-on-Windows release list."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine.relations import Explains
from rocm_doctor.facts.keys import (TORCH_IMPORT_ERROR, WINDOWS_DRIVER_NEEDS, WINDOWS_HIP_INSTALLS, WINDOWS_OS,
                                    WINDOWS_VC_RUNTIME)
from rocm_doctor.knowledge import windows_layer as table
from rocm_doctor.knowledge.store import load

WINDOWS = (Platform.WINDOWS,)


def import_failed(_cause, _symptom, facts) -> bool:
    """torch is installed but does not import: the missing runtime is why (not installing torch is not)."""
    return bool(facts is not None and facts.get(TORCH_IMPORT_ERROR))


def install_runtime() -> tuple[list, list]:
    spec = table.vc_runtime()
    fix = [S.run_command(["winget", "install", "--id", spec["winget"], "--exact"],
                         description=f"install the Microsoft Visual C++ 2015-2022 x64 runtime ({spec['winget']})",
                         then=S.AFTER_NEW_SHELL, note="the runtime torch's DLLs load")]
    alternatives = [S.alternative("download the installer from Microsoft",
                                  S.advice(f"Download and run {spec['download']} (Microsoft's permalink for the latest "
                                           "x64 Visual C++ Redistributable), then start a new shell."),
                                  why_not_first="the same package without winget")]
    return fix, alternatives


class WindowsVcRuntimeMissing(Check):
    id = "windows-vc-runtime-missing"
    title = "The Microsoft Visual C++ 2015-2022 x64 runtime for torch"
    explains = (Explains("torch-not-installed", import_failed), Explains("torch-probe-crashed", import_failed))
    area = "windows"
    severity = Severity.HIGH
    platforms = WINDOWS
    requires = (WINDOWS_VC_RUNTIME,)
    docs = ("https://learn.microsoft.com/en-us/cpp/windows/latest-supported-vc-redist",)

    def run(self, facts):
        runtime = facts[WINDOWS_VC_RUNTIME]
        registry = runtime.get("registry")
        evidence = self._evidence(runtime)
        fix, alternatives = install_runtime()
        if runtime.get("missing"):
            missing = ", ".join(runtime["missing"])
            return self.fail(
                f"{runtime['system32']} lacks {missing}: torch's DLLs (c10.dll first) link against the Microsoft Visual "
                "C++ 2015-2022 runtime, so import torch fails with \"[WinError 126] The specified module could not be "
                "found. Error loading ...\\torch\\lib\\c10.dll or one of its dependencies\".",
                evidence=evidence, data={"missing": runtime["missing"]}, fix=fix, alternatives=alternatives)
        wanted = runtime.get("torch_msvc")
        have = tuple(registry.get("version_tuple") or ()) if registry else ()
        if wanted and len(have) >= 2 and have[:2] < table.dotted(wanted)[:2]:
            return self.fail(
                f"the Visual C++ runtime is {registry['version']}, older than MSVC {wanted}, the toolset that built torch: "
                "Microsoft requires the runtime to be at least as recent as the toolset, and an older msvcp140.dll can "
                "crash or fail to load torch's DLLs.",
                evidence=evidence, data={"have": registry["version"], "wanted": wanted}, fix=fix, alternatives=alternatives)
        if runtime.get("torch_warning"):
            return self.warn(
                f"torch itself reported \"{runtime['torch_warning']}\": one of vcruntime140.dll, vcruntime140_1.dll, "
                "msvcp140.dll did not load in the target interpreter.",
                evidence=evidence, fix=fix, alternatives=alternatives)
        if not runtime.get("scanned") and not registry:
            return self.skip("neither System32 nor the redistributable's registry key could be read", evidence=evidence)
        parts = [f"{', '.join(runtime['present'])} in System32"] if runtime.get("present") else []
        if registry:
            parts.append(f"runtime {registry['version']} ({registry['key']})")
        elif runtime.get("registry_read"):
            parts.append("no redistributable registry key (the DLLs are what torch loads; some installs register elsewhere)")
        if wanted:
            parts.append(f"torch built with MSVC {wanted}")
        return self.ok("; ".join(parts), evidence=evidence)

    @staticmethod
    def _evidence(runtime) -> list[str]:
        lines = []
        if runtime.get("scanned"):
            lines.append(f"{runtime['system32']}: present {', '.join(runtime['present']) or 'none'}"
                         + (f"; missing {', '.join(runtime['missing'])}" if runtime.get("missing") else ""))
        registry = runtime.get("registry")
        if registry:
            lines.append(f"{registry['key']}: Installed={1 if registry['installed'] else 0}, Version={registry['version']}")
        elif runtime.get("registry_read"):
            lines.append("HKLM ...\\VisualStudio\\14.0\\VC\\Runtimes\\x64: not found (64-bit and WOW6432Node views)")
        if runtime.get("torch_msvc"):
            lines.append(f"torch's build configuration: MSVC toolset {runtime['torch_msvc']}")
        if runtime.get("torch_warning"):
            lines.append(f"torch printed: {runtime['torch_warning']}")
        return lines


def stacks(facts) -> list[tuple[str, list[str], str]]:
    """(what, listed Windows versions, source) for each installed thing whose release lists Windows versions."""
    out = []
    pytorch = (facts.get(WINDOWS_DRIVER_NEEDS) or {}).get("pytorch") or {}
    if pytorch.get("row"):
        out.append((f"PyTorch on Windows {pytorch['release']}", pytorch["row"]["windows"], pytorch["row"]["source"]))
    rows = load("support_windows.json")["releases"]
    for install in facts.get(WINDOWS_HIP_INSTALLS) or []:
        version = table.dotted(install.get("version"))[:2]
        row = next((r for r in rows if table.dotted(r["rocm"]) == version), None) if install.get("exists") else None
        if row and row.get("os"):
            out.append((f"HIP SDK {row['rocm']}", row["os"], row["source"]))
    return out


class WindowsBuildUnsupported(Check):
    id = "windows-build-unsupported"
    title = "The Windows version against the installed HIP SDK and PyTorch wheels' lists"
    area = "windows"
    severity = Severity.MEDIUM
    platforms = WINDOWS
    requires = (WINDOWS_OS,)
    docs = ("https://rocm.docs.amd.com/projects/install-on-windows/en/latest/reference/system-requirements.html",)

    def run(self, facts):
        system = facts[WINDOWS_OS]
        found = stacks(facts)
        here = self._name(system)
        if not found:
            return self.skip(f"{here}; nothing installed lists Windows versions (no HIP SDK, no ROCm PyTorch wheels)")
        family = "server" if system["server"] else "windows11" if system["windows11"] else "windows10"
        out = []
        for what, names, source in found:
            minimum = table.minimum_builds(names).get(family)
            evidence = [f"{what} lists: {', '.join(names)}", f"this machine: {here} ({system['source']})"]
            if system.get("product_name") and system["windows11"] and "windows 10" in system["product_name"].lower():
                evidence.append(f"the registry ProductName says '{system['product_name']}', as it does on Windows 11; "
                                "the build decides")
            subject = what.lower().replace(" ", "-")
            if minimum is None:
                target = table.minimum_builds(names).get("windows11") or next(iter(table.minimum_builds(names).values()), None)
                out.append(self.fail(
                    f"{what} lists {', '.join(names)}; this is {here}, which is not among them.", subject=subject,
                    evidence=evidence, data={"listed": names, "build": system["build"]},
                    fix=[self._update(target)] if target else []))
            elif system["build"] < minimum["build"]:
                out.append(self.warn(
                    f"{what} lists {minimum['name']} (build {minimum['build']}) or later; this is {here}.",
                    subject=subject, evidence=evidence, data={"listed": names, "build": system["build"]},
                    fix=[self._update(minimum)]))
            else:
                out.append(self.ok(f"{here}: listed for {what} ({', '.join(names)})", subject=subject, evidence=evidence))
        return out

    @staticmethod
    def _name(system) -> str:
        name = system.get("name") or ("Windows 11" if system["windows11"] else "Windows Server" if system["server"] else "Windows 10")
        build = f"build {system['build']}" + (f".{system['ubr']}" if system.get("ubr") is not None else "")
        version = system.get("display_version")
        return f"{name} ({build}" + (f", version {version}" if version and version not in name else "") + ")"

    @staticmethod
    def _update(target) -> S.Advice:
        return S.advice(f"Update Windows to {target['name']} (build {target['build']}) or later through Settings > "
                        "Windows Update, then restart.", note="the Windows version the installed release lists")
