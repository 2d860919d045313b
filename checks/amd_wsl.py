"""ROCm inside WSL2: /dev/dxg, the WSL ROCm runtime, a release that has a WSL build, and a GPU on the WSL list."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import LINUX_DEVICE_ACCESS, ROCMINFO_STATUS
from rocm_doctor.knowledge import support, versions
from rocm_doctor.knowledge.store import load

from rocm_doctor.checks.amd_common import gpus, label, real_gfx, rocm_version
from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU

INSTALL = ["sudo", "amdgpu-install", "-y", "--usecase=wsl,rocm", "--no-dkms"]


def install_step(note: str):
    return S.run_command(INSTALL, description="install ROCm with its WSL runtime (usecases wsl and rocm)",
                         needs_admin=True, note=note)


def wsl_releases() -> list[str]:
    return [r["rocm"] for r in load("support_windows.json")["wsl"]["releases"] if r["wsl_build"]]


def wsl_gpus() -> list[str]:
    table = load("support_windows.json")["wsl"]["gfx"]
    return sorted(g for g, row in table.items() if row["status"] == "supported")


class WslRocmSupport(Check):
    id = "wsl-rocm-support"
    title = "ROCm's access to the GPU from WSL2"
    explains = ("rocm-device-access", "rocm-kernel-driver", *TORCH_SEES_NO_GPU, *GPU_WORK)
    area = "amd"
    severity = Severity.CRITICAL
    platforms = (Platform.WSL,)
    docs = ("https://github.com/ROCm/ROCm/issues/5106", "https://github.com/ROCm/ROCm/issues/4435")

    def run(self, facts):
        dxg = (facts.get(LINUX_DEVICE_ACCESS) or {}).get("/dev/dxg") or {}
        status = facts.get(ROCMINFO_STATUS) or {}
        state = status.get("state")
        version, where = rocm_version(facts)
        evidence = list(status.get("evidence") or [])[:4] + ([f"ROCm {version} (from {where})"] if version else [])
        if dxg and not dxg.get("exists"):
            distro = facts.env.get("WSL_DISTRO_NAME")
            return self.fail("/dev/dxg is missing: this is WSL 1 or a WSL kernel without GPU paravirtualisation, so no "
                             "GPU reaches Linux.", evidence=evidence + ["/dev/dxg: missing"],
                             remediation=["Install the current AMD Adrenalin driver in Windows."] + (
                                 [] if distro else ["Then convert this distribution to WSL 2."]),
                             fix=[S.run_command(["wsl.exe", "--update"], needs_admin=True, then=S.AFTER_REBOOT,
                                                description="update WSL and its kernel (from Windows or this shell)"),
                                  *([S.run_command(["wsl.exe", "--set-version", distro, "2"], then=S.AFTER_REBOOT,
                                                   description=f"convert {distro} to WSL 2 (restart it afterwards)")]
                                    if distro else [])])
        if state in (None, "not-installed"):
            return self.fail("the ROCm WSL runtime is not installed (no rocminfo).", evidence=evidence,
                             remediation=["amdgpu-install comes from the amdgpu-install package of a release with a "
                                          f"WSL build: {', '.join(wsl_releases())}."],
                             fix=[install_step("the WSL runtime reaches the GPU through /dev/dxg")]) if state else \
                self.skip("rocminfo was not run")
        if state == "rock-not-loaded":
            return self.fail(
                "rocminfo looks for the Linux kernel driver ('ROCk module is NOT loaded'): the WSL runtime is not the "
                "one in use. Which runtime answered could not be told from rocminfo's output: ROCm installed without "
                "its WSL build (or from before WSL support), or the distro's libhsa-runtime64 in front of ROCm's.",
                evidence=evidence,
                remediation=["Ubuntu 24.04: remove the distro's libhsa-runtime64-1 package if installed (it shadows "
                             "ROCm's).",
                             "WSL ROCm needs Windows 11 (or a current WSL) and the matching Adrenalin driver."],
                fix=[install_step("the WSL build of the runtime does not look for the Linux kernel driver")])
        if state == "unsupported-gpu":
            return self.fail(
                "ROCm on WSL rejects this GPU ('ROCR: unsupported GPU'): it is not on AMD's WSL support list "
                f"({', '.join(wsl_gpus())}). There is no fix inside WSL for it.", evidence=evidence,
                remediation=["Use native Linux (dual boot) with ROCm, or torch on Windows itself (AMD TheRock "
                             "win_amd64 wheels, https://repo.amd.com/rocm/whl-multi-arch/)."])
        if state in ("out-of-resources", "hsa-error", "unrecognized"):
            return self._no_agent(facts, version, evidence)
        if state == "ok":
            return self._listed(facts, version, evidence)
        return self.skip(f"rocminfo state {state}: see external-tool-misbehaved")

    def _no_agent(self, facts, version, evidence):
        """What was observed about the release and the GPU is said as such; what WSL cannot show (the Windows
        driver, a GPU rocminfo does not list) is said as not told, never offered as a cause."""
        observed, untold, fix = [], [], []
        row = support.wsl("gfx1100", version) if version else None  # any listed gfx: asks only about the release
        if row is not None and row.note == "this ROCm release has no WSL build":
            plain = ".".join(str(part) for part in versions.parse(version) if part is not None)
            observed.append(f"ROCm {plain} is installed and has no WSL build")
            later = [r for r in wsl_releases() if r.startswith(plain + ".")] or wsl_releases()[-1:]
            fix += [S.advice(f"Install the amdgpu-install package of a release with a WSL build ({', '.join(later)}, "
                             "or go back to the previous one), and its matching Adrenalin driver in Windows"),
                    install_step(f"ROCm {plain} has no WSL build")]
        elif version is None:
            untold.append("which ROCm release is installed")
        listed = wsl_gpus()
        known = [(label(gpu), real_gfx(facts, gpu)) for gpu in gpus(facts) if real_gfx(facts, gpu)]
        observed += [f"{name}, {gfx}, is {'on' if gfx in listed else 'not on'} AMD's WSL list" for name, gfx in known]
        if not known:
            untold.append(f"whether the GPU is on AMD's WSL list ({', '.join(listed)}): no tool here named it")
        untold.append("whether the Adrenalin driver in Windows matches the ROCm WSL release: WSL does not show it")
        message = ("rocminfo finds only a CPU agent (HSA_STATUS_ERROR_OUT_OF_RESOURCES): the WSL runtime sees no "
                   "usable GPU." + (f" Observed: {'; '.join(observed)}." if observed else "")
                   + f" Not told from here: {'; '.join(untold)}.")
        remediation = ["Check the card against AMD's WSL compatibility matrix (radeon-ryzen docs).",
                       "Update Adrenalin to the version named for this ROCm release; on Windows 10 the 7.x "
                       "ROCDXG stack was reported not to work (ROCm#6323)."]
        return self.fail(message, evidence=evidence, remediation=remediation, data={"version": version}, fix=fix)

    def _listed(self, facts, version, evidence):
        findings = []
        for gpu in gpus(facts):
            gfx = real_gfx(facts, gpu)
            row = support.wsl(gfx, version) if gfx and version else None
            text = f"{label(gpu)} ({gfx})" + (f": WSL support {row.status}" + (f" ({row.note})" if row.note else "")
                                              if row else "")
            finding = self.warn if row and row.status == "unsupported" else self.ok
            findings.append(finding(f"ROCm on WSL sees {text}", subject=str(gpu.get("index")), evidence=evidence))
        return findings or self.ok("rocminfo ran; no GPU agent to judge", evidence=evidence)
