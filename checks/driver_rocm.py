"""The amdgpu kernel driver against the ROCm user space (amdgpu-driver-rocm-mismatch): the AMD GPU Driver release
AMD lists for the installed ROCm release, or what AMD documents for the distribution kernel's own amdgpu; and the
GPU firmware versions against those established as bad (amdgpu-firmware-known-bad)."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import GPU_FIRMWARE, LINUX_AMDGPU_DRIVER, OS_RELEASE_FACT, ROCM_PACKAGES
from rocm_doctor.knowledge import driver_support as table
from rocm_doctor.knowledge import versions

from rocm_doctor.checks.amd_common import gpus, integrated, label, real_gfx, rocm_version
from rocm_doctor.checks.layer_common import amd_present, family
from rocm_doctor.checks.symptoms import DRIVER_SYMPTOMS

AMD_DOCS = "https://instinct.docs.amd.com/projects/amdgpu-docs/en/latest/compatibility/compatibility-matrix.html"


def _minor(text: str | None) -> str:
    parsed = versions.parse(text)
    return f"{parsed[0]}.{parsed[1]}" if parsed else str(text)


def _driver_evidence(driver: dict) -> list[str]:
    lines = []
    if driver.get("package"):
        lines.append(f"package {driver['package']} {driver['package_version']} ({driver['package_status']})"
                     + (f": AMD GPU Driver release {driver['package_release']}" if driver.get("package_release") else ""))
    if driver.get("module_version"):
        lines.append(f"amdgpu module version {driver['module_version']} ({driver['module_source']})")
    if driver.get("kind") == "inbox":
        lines.append(f"amdgpu is the kernel's own driver (kernel {driver.get('kernel') or 'unknown'}): no DKMS build")
    return lines


def _package_steps(facts, rocm: str) -> tuple[list, list]:
    """amdgpu-install of the ROCm release installs the driver it pairs with; the package manager is the other way."""
    steps = [S.run_command(["sudo", "amdgpu-install", "--usecase=dkms"], needs_admin=True, then=S.AFTER_REBOOT,
                           description=f"install the amdgpu-dkms that amdgpu-install of ROCm {rocm} pairs with it, "
                           "then reboot", note="amdgpu-install must be the one of the installed ROCm release")]
    argv = {"debian": ["sudo", "apt-get", "install", "amdgpu-dkms"], "redhat": ["sudo", "dnf", "install", "amdgpu-dkms"],
            "suse": ["sudo", "zypper", "install", "amdgpu-dkms"]}.get(family(facts) or "")
    alternatives = [S.alternative("install amdgpu-dkms with the package manager", S.run_command(
        argv, needs_admin=True, then=S.AFTER_REBOOT, description="install amdgpu-dkms from repo.radeon.com/amdgpu, "
        "then reboot"), why_not_first="it installs whichever driver release the amdgpu repository names: point it at "
        "a release that lists this ROCm first")] if argv else []
    return steps, alternatives


class AmdgpuDriverRocmMismatch(Check):
    id = "amdgpu-driver-rocm-mismatch"
    title = "The amdgpu kernel driver against the installed ROCm release"
    explains = DRIVER_SYMPTOMS
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX,)
    requires = (LINUX_AMDGPU_DRIVER,)
    docs = (AMD_DOCS, "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/user-kernel-space-compat-matrix.html")

    def run(self, facts):
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        driver = facts[LINUX_AMDGPU_DRIVER]
        evidence = _driver_evidence(driver)
        rocm, where = rocm_version(facts)
        if not rocm:
            return self.skip("the installed ROCm release is unknown", evidence=evidence)
        evidence.append(f"ROCm {rocm} (from {where})")
        if driver.get("kind") == "inbox":
            return self._inbox(facts, driver, rocm, evidence)
        row = table.driver_row(driver.get("package_release")) or table.row_for_module(driver.get("module_version"))
        name = driver.get("package_release") or driver.get("module_version")
        if driver.get("kind") != "dkms" or not name:
            return self.skip("which amdgpu driver runs could not be told", evidence=evidence)
        if row is None:
            return self.info(f"amdgpu {name}: which ROCm releases AMD supports with it could not be told (it is not in "
                             "AMD's driver table rocm-doctor carries)", evidence=evidence)
        supported = ", ".join(row["rocm"])
        evidence.append(f"AMD GPU Driver {row['driver']}.x supports ROCm {supported} "
                        f"[{table.source(row['source']).get('title', row['source'])}]")
        if table.supports(row, rocm):
            return self.ok(f"the amdgpu driver {name} (AMD GPU Driver {row['driver']}.x) supports ROCm {_minor(rocm)}",
                           evidence=evidence)
        wanted = table.drivers_for(rocm)
        steps, alternatives = _package_steps(facts, _minor(rocm))
        return self.warn(
            f"the amdgpu driver {name} (AMD GPU Driver {row['driver']}.x) supports ROCm {supported}, but the installed "
            f"ROCm is {_minor(rocm)} ({rocm}): the kernel driver and the user space are outside the range AMD supports together, where "
            "the runtime can fail to find the GPU or hang and tools like amd-smi misreport.", evidence=evidence,
            fix=steps, alternatives=alternatives, remediation=[
                (f"AMD lists ROCm {_minor(rocm)} with the AMD GPU Driver {', '.join(w + '.x' for w in wanted)}."
                 if wanted else f"AMD's driver table names no driver for ROCm {_minor(rocm)}.")
                + " Or move ROCm to a release the running driver lists."])

    def _inbox(self, facts, driver, rocm, evidence):
        amd = gpus(facts)
        if amd and all(integrated(facts, g) for g in amd):
            rows = table.inbox_rows(rocm, "ryzen-apu")
            release = facts.get(OS_RELEASE_FACT) or {}
            here = (release.get("id"), (release.get("version_id") or ""))
            for row in rows:
                listed = [f"{d['id']} {d['version']}" for d in row["distros"]]
                evidence.append(f"AMD: the inbox kernel driver for Ryzen APUs with ROCm {_minor(rocm)} on "
                                f"{', '.join(listed)} [{table.source(row['source']).get('title', row['source'])}]")
                if any(d["id"] == here[0] and here[1].startswith(d["version"]) for d in row["distros"]):
                    return self.ok(f"the kernel's own amdgpu is the driver AMD documents for Ryzen APUs with ROCm "
                                   f"{_minor(rocm)} on {here[0]} {here[1]}", evidence=evidence)
                return self.info(f"AMD documents the kernel's own amdgpu for Ryzen APUs with ROCm {_minor(rocm)} on "
                                 f"{', '.join(listed)} only; this is {here[0] or 'an unknown distribution'} "
                                 f"{here[1]}.", evidence=evidence)
        statement = table.inbox_rows(rocm, "discrete")
        evidence += [f"AMD: {row['note']} [{table.source(row['source']).get('title', row['source'])}]" for row in statement]
        wanted = table.drivers_for(rocm)
        return self.info(
            f"amdgpu is the distribution kernel's own (kernel {driver.get('kernel') or 'unknown'}). AMD documents ROCm "
            f"{_minor(rocm)} with the AMD GPU Driver" + (f" {', '.join(w + '.x' for w in wanted)}" if wanted else "")
            + " (amdgpu-dkms), not with a distribution kernel's amdgpu: whether this kernel's driver matches ROCm "
            f"{_minor(rocm)} could not be told.", evidence=evidence, remediation=[
                "If ROCm misbehaves with this driver, AMD's own is installed with amdgpu-install --usecase=dkms."])


class AmdgpuFirmwareKnownBad(Check):
    id = "amdgpu-firmware-known-bad"
    title = "GPU firmware versions known to be bad for this GPU"
    explains = DRIVER_SYMPTOMS
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX,)
    requires = (GPU_FIRMWARE,)
    docs = ("https://github.com/ROCm/ROCm/issues/5724",)

    def run(self, facts):
        firmware = {g["index"]: g for g in facts[GPU_FIRMWARE]}
        packages = [f"{r['name']} {r['version']}" for r in (facts.get(ROCM_PACKAGES) or {}).get("rows") or []
                    if r["kind"] == "firmware"]
        findings = []
        by_index = {g.get("index"): g for g in gpus(facts)}
        for index, fw in sorted(firmware.items()):
            gpu = by_index.get(index) or {}
            gfx = real_gfx(facts, gpu) if gpu else None
            name = label(gpu) if gpu else f"GPU {index}"
            shown = ", ".join(f"{k} {v}" for k, v in fw["versions"].items())
            tool = fw.get("source", "rocm-smi --showfwinfo")  # a fact without its tool came from rocm-smi
            evidence = [f"{tool} GPU[{index}]: {shown}"] + [f"package {p}" for p in packages]
            issues = table.firmware_issues(gfx)
            bad = [(row, fw["versions"][row["component"]]) for row in issues
                   if fw["versions"].get(row["component"]) in row["bad"]]
            if bad:
                row, value = bad[0]
                findings.append(self.warn(
                    f"{name} ({gfx}) runs {row['component']} firmware {value}, a version AMD established as bad for "
                    f"{', '.join(row['gfx'])}: {row['effect']}.", subject=str(index), evidence=evidence + [
                        f"bad: {', '.join(row['bad'])}; known good: {', '.join(row['good'])} "
                        f"[{table.source(row['source']).get('title', row['source'])}]"],
                    fix=[S.advice(f"Install {row['remedy']}, then reboot")],
                    remediation=[f"{tool} shows the version the GPU loaded; check it again after the reboot."]))
            elif issues and any(r["component"] not in fw["versions"] for r in issues):
                unseen = sorted({r["component"] for r in issues if r["component"] not in fw["versions"]})
                findings.append(self.info(
                    f"{name} ({gfx}): {tool} does not show the {', '.join(unseen)} firmware, of which AMD established "
                    "bad versions for this GPU: whether it runs one could not be told.", subject=str(index),
                    evidence=evidence, remediation=[f"rocm-smi --showfwinfo prints the {', '.join(unseen)} version."]))
            elif issues:
                seen = ", ".join(f"{r['component']} {fw['versions'][r['component']]}" for r in issues)
                findings.append(self.ok(f"{name}: {seen}, none of the versions known to be bad", subject=str(index),
                                        evidence=evidence))
            else:
                findings.append(self.info(f"{name}: firmware {shown or 'not shown'}; rocm-doctor knows no bad version "
                                          f"for {gfx or 'this GPU'}", subject=str(index), evidence=evidence))
        return findings or self.skip("rocm-smi showed no GPU's firmware")
