"""The AMD display driver against what the installed stack names: the driver AMD's notes give for the PyTorch-on-
Windows wheels (a preview driver or a minimum Adrenalin release), and the HIP runtime DLL a HIP SDK's programs
load from the driver. The driver is named through AMD's version table (WMI reports only the Windows driver
store version, e.g. 32.0.21001.9024 for Adrenalin 25.5.1)."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.facts.keys import WINDOWS_DRIVER_NEEDS, WINDOWS_DRIVER_RELEASE
from rocm_doctor.knowledge import windows_layer as table

TORCH_SYMPTOMS = ("windows-gpu-not-enumerated", "torch-cuda-unavailable", "torch-probe-crashed", "gpu-kernel*",
                  "hsa-override-kernels-fail", "sdpa-math-fallback", "bench-*", "collective-*")


def for_the_wheels(cause, symptom, facts) -> bool:
    """The wheels' driver finding explains what torch shows; a HIP SDK's does not (the wheels bring their own
    HIP runtime)."""
    return cause.id.endswith(":pytorch") and when_failing(cause, symptom, facts)


def for_the_sdk(cause, symptom, facts) -> bool:
    """A HIP SDK's missing runtime explains hipInfo (a HIP SDK program) finding no GPU."""
    return ":hip-sdk-" in cause.id and when_failing(cause, symptom, facts)


def installed_driver(release: dict) -> dict:
    """The one driver the machine runs (every AMD adapter shares it): the first adapter AMD's table names, else the
    first with a decodable version; the registry's Adrenalin version when WMI gives none."""
    adapters = release.get("adapters") or []
    chosen = next((a for a in adapters if a.get("in_table")), None) or next((a for a in adapters if a.get("internal")), None)
    chosen = dict(chosen or (adapters[0] if adapters else {}))
    chosen["registry_adrenalin"] = release.get("registry_adrenalin")
    return chosen


def describe(driver: dict) -> str:
    parts = []
    adrenalin = driver.get("adrenalin") or driver.get("registry_adrenalin")
    if adrenalin:
        parts.append(f"Adrenalin {adrenalin}" + (f" ({driver['branch']} branch)" if driver.get("branch") else ""))
    if driver.get("windows_version"):
        parts.append(f"Windows driver version {driver['windows_version']}")
    if driver.get("internal") and not driver.get("in_table"):
        parts.append(f"internal version {driver['internal']}")
    return ", ".join(parts) or "an AMD driver of unknown version"


def evidence_of(driver: dict, pytorch: dict | None = None) -> list[str]:
    lines = []
    if driver.get("windows_version"):
        named = (f" = Adrenalin {driver['adrenalin']}" + (f" for {driver['branch']}" if driver.get("branch") else "")
                 + f", released {driver['date']} (AMD's driver version table)") if driver.get("in_table") else \
            " (not in AMD's version table" + (f"; it encodes internal version {driver['internal']})" if driver.get("internal") else ")")
        lines.append(f"WMI: {driver.get('name')} driver {driver['windows_version']}{named}")
    if driver.get("registry_adrenalin"):
        lines.append(f"registry RadeonSoftwareVersion = {driver['registry_adrenalin']}")
    if pytorch:
        lines.append(f"torch {pytorch.get('torch')} (HIP {pytorch.get('hip')}"
                     + (f", rocm package {pytorch['rocm']}" if pytorch.get("rocm") else "")
                     + f"): PyTorch on Windows {pytorch['release']} wheels, matched by {pytorch['matched_by']}")
    return lines


def get_driver(what: str, url: str, note: str) -> S.Advice:
    return S.advice(f"Install {what} from {url}, then restart Windows.", note=note)


class WindowsDriverTooOld(Check):
    id = "windows-driver-too-old"
    title = "The AMD display driver against what the installed PyTorch wheels and HIP SDK need"
    explains = tuple(Explains(target, for_the_wheels) for target in TORCH_SYMPTOMS) + (
        Explains("windows-gpu-not-enumerated", for_the_sdk),)
    area = "windows-hip"
    severity = Severity.HIGH
    platforms = (Platform.WINDOWS,)
    requires = (WINDOWS_DRIVER_RELEASE, WINDOWS_DRIVER_NEEDS)
    docs = ("https://github.com/GPUOpen-Drivers/amd-vulkan-versions",
            "https://rocm.docs.amd.com/projects/radeon-ryzen/en/latest/docs/compatibility/compatibilityrad/windows/windows_compatibility.html")

    def run(self, facts):
        release, needs = facts[WINDOWS_DRIVER_RELEASE], facts[WINDOWS_DRIVER_NEEDS]
        if not release.get("adapters") and not release.get("registry_adrenalin"):
            return self.skip("no AMD display driver was seen" + ("" if release.get("wmi_ran") else
                             " (the WMI adapter list was not collected)"))
        driver = installed_driver(release)
        out = []
        if needs.get("pytorch"):
            out.append(self._pytorch(driver, needs["pytorch"]))
        for sdk in needs.get("hip_sdks") or []:
            if sdk.get("runtime_present") is False:
                out.append(self._hip_sdk(driver, sdk, needs.get("system32_runtimes") or []))
        if out:
            return out
        if not needs.get("hip_sdks"):
            return self.skip(f"{describe(driver)}; no ROCm PyTorch and no HIP SDK installed, nothing names a driver")
        return self.ok(f"{describe(driver)} provides the HIP runtime of HIP SDK "
                       + ", ".join(s.get("version") or "?" for s in needs["hip_sdks"]))

    def _pytorch(self, driver, pytorch):
        row = pytorch.get("row")
        if row is None:
            nightly = table.therock_nightlies()
            return self.info(
                f"torch {pytorch.get('torch')} (HIP {pytorch.get('hip')}) is none of the PyTorch-on-Windows releases "
                f"AMD names a driver for (6.4.4, 7.1.1, 7.2, 7.2.1); for TheRock's nightly and multi-arch wheels AMD "
                f"names no minimum, only the latest Adrenalin driver. Installed: {describe(driver)}.",
                subject="pytorch", evidence=evidence_of(driver),
                remediation=[f"If the GPU is not found, install the newest Adrenalin driver ({nightly['url']})."])
        wanted = row["driver"]
        verdict, why = self._compare(driver, wanted)
        text = (f"PyTorch on Windows {row['release']} names {wanted['name']}"
                + (" or newer" if wanted["kind"] == "adrenalin" else "") + f"; installed: {describe(driver)}")
        evidence = evidence_of(driver, pytorch) + [f"AMD's notes for these wheels: {wanted['url']}"]
        data = {"release": row["release"], "wanted": wanted, "installed": driver}
        if verdict == "older":
            return self.fail(
                f"{text}. {why} The HIP runtime in these wheels needs the newer driver; with this one torch may find "
                "no GPU or crash.", subject="pytorch", evidence=evidence, data=data,
                fix=[get_driver(wanted["name"] + (" or newer" if wanted["kind"] == "adrenalin" else ""), wanted["url"],
                                f"the driver AMD names for the {row['release']} wheels")])
        if verdict == "ok":
            return self.ok(f"{text}.", subject="pytorch", evidence=evidence, data=data)
        return self.info(f"{text}. {why}", subject="pytorch", evidence=evidence, data=data)

    @staticmethod
    def _compare(driver, wanted) -> tuple[str, str]:
        """('older' | 'ok' | 'unknown', why) for the installed driver against the wanted one."""
        internal = table.dotted(driver.get("internal"))
        if driver.get("branch"):
            return "unknown", (f"This is AMD's {driver['branch']} driver branch, versioned apart from the main "
                               "branch; whether it carries what these wheels need could not be told.")
        if wanted["kind"] == "preview":
            target = table.dotted(wanted["internal_version"])
            if not internal:
                return "unknown", "The installed driver's internal version could not be read, so the two cannot be compared."
            if internal == target:
                return "ok", ""
            if internal < target:
                return "older", f"Its internal version {driver['internal']} is older than {wanted['internal_version']}."
            return "unknown", (f"Its internal version {driver['internal']} is newer than {wanted['internal_version']}; "
                               "AMD's notes name only that driver, so whether this one carries the same PyTorch support "
                               "was not established.")
        minimum = table.dotted(wanted["min_adrenalin"])
        adrenalin = table.dotted(driver.get("adrenalin") or driver.get("registry_adrenalin"))
        if adrenalin and len(adrenalin) == 3:
            if adrenalin < minimum:
                return "older", f"Adrenalin {'.'.join(map(str, adrenalin))} is older than {wanted['min_adrenalin']}."
            return "ok", ""
        main = next((r for r in table.adrenalin_rows(wanted["min_adrenalin"]) if not r.get("branch")), None)
        if internal and main:
            if internal < table.dotted(main["internal_version"]):
                return "older", (f"Its internal version {driver['internal']} is older than Adrenalin "
                                 f"{wanted['min_adrenalin']}'s {main['internal_version']}.")
            return "ok", ""
        return "unknown", "The installed driver's version could not be read, so the two cannot be compared."

    def _hip_sdk(self, driver, sdk, runtimes):
        row = sdk["row"]
        runtime = table.driver_runtime()
        found = ", ".join(runtimes) or "no amdhip64 DLL"
        return self.fail(
            f"HIP SDK {sdk['version']} programs load {row['runtime_dll']} from the display driver, but System32 has "
            f"{found}: the installed driver ({describe(driver)}) predates that HIP runtime or is a branch that stops "
            f"before it. The SDK ships with AMD Software: PRO Edition {row['pro_driver']} ({row['installer']}).",
            subject=f"hip-sdk-{sdk['version']}",
            evidence=evidence_of(driver) + [f"HIP SDK {sdk['version']} at {sdk.get('path')}",
                                            f"System32 HIP runtimes: {found}"],
            data={"sdk": sdk["version"], "runtime_dll": row["runtime_dll"], "system32": runtimes},
            fix=[get_driver(f"a current AMD driver for the GPU (HIP SDK {row['release']} bundles AMD Software: PRO "
                            f"Edition {row['pro_driver']})", runtime["download"],
                            f"puts {row['runtime_dll']} in System32")])
