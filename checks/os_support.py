"""The distribution, Ubuntu kernel series and glibc against the OS table of the installed ROCm release
(os-support-matrix), and the WSL distribution against the ones ROCm's WSL packages are built for
(wsl-distro-support)."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import OS_GLIBC, OS_KERNEL, OS_RELEASE_FACT, ROCMINFO_STATUS
from rocm_doctor.knowledge import currency, os_support

from rocm_doctor.checks.amd_common import rocm_version
from rocm_doctor.checks.layer_common import amd_present, in_container

DOCS = ("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html",)
KERNEL_ADVICE = ("Boot the {series} kernel: choose it under 'Advanced options for Ubuntu' in the GRUB menu, or "
                 "remove the newer kernel packages so that it is the newest one installed")


def _describe(release: dict) -> str:
    return release.get("pretty_name") or f"{release.get('id')} {release.get('version_id') or ''}".strip()


def _older(a: str, b: str) -> bool:
    try:
        return Version(a) < Version(b)
    except InvalidVersion:
        return False


class OsSupportMatrix(Check):
    id = "os-support-matrix"
    title = "The distribution and kernel against the installed ROCm release's OS list"
    explains = ("amdgpu-dkms-not-built",)
    area = "platform"
    severity = Severity.MEDIUM
    platforms = (Platform.LINUX,)
    requires = (OS_RELEASE_FACT,)
    docs = DOCS

    def run(self, facts):
        if not amd_present(facts):
            return self.skip("no AMD GPU found")
        release = facts[OS_RELEASE_FACT]
        version, where = rocm_version(facts)
        evidence = [f"{release.get('source')}: {_describe(release)} (ID={release.get('id')}, "
                    f"VERSION_ID={release.get('version_id')})"] + ([f"ROCm {version} (from {where})"] if version else [])
        if version is None:
            return self.info(f"{_describe(release)}; the installed ROCm release is unknown, so its OS list cannot be "
                             "applied", evidence=evidence)
        result = os_support.distro(version, release.get("id"), release.get("version_id"),
                                   release.get("point_release"))
        if result.status == "unknown-release":
            return self.info(f"{_describe(release)}: {result.note}", evidence=evidence)
        if result.status == "newer-release":  # no list to hold it to: the installed packages are the machine's answer
            return self.info(f"{_describe(release)}: {result.note}, so its OS list is not known here; ROCm "
                             f"{version} is installed on it ({where})", evidence=evidence,
                             remediation=[currency.advice()], data={"release": None, "status": "newer"})
        evidence.append(f"ROCm {result.release} lists: {', '.join(result.listed)} [{result.source}]")
        findings = [self._distro(release, result, evidence)]
        if result.entry and result.entry.get("id") == "ubuntu" and not in_container(facts):
            findings.append(self._kernel(facts, release, result))
        findings.append(self._glibc(facts, version))
        return [f for f in findings if f is not None]

    def _distro(self, release, result, evidence):
        label = _describe(release)
        data = {"release": result.release, "status": result.status}
        if result.status == "listed":
            note = f" ({result.entry['note']})" if result.entry.get("note") else ""
            return self.ok(f"{label} is on ROCm {result.release}'s list{note}", subject="distro", evidence=evidence,
                           data=data)
        listed_family = sorted({e.split()[0] for e in result.listed})
        base = next((like for like in release.get("id_like") or [] if like in listed_family), None)
        if base and release.get("id") not in listed_family:
            return self.info(f"{label} is a derivative of {base}; ROCm {result.release} lists {base} itself, not "
                             f"{label}: AMD does not test this distribution, and whether {base}'s packages install "
                             "here cannot be told before they are tried.",
                             subject="distro", evidence=evidence, data=data)
        same = os_support.same_distro_versions(result.release, release.get("id") or "")
        why = f" ({result.note})" if result.note else ""
        return self.warn(
            f"{label} is not on ROCm {result.release}'s list of supported distributions{why}: AMD builds and tests "
            "its packages and the amdgpu-dkms driver only for the listed ones.", subject="distro", evidence=evidence,
            data=data, remediation=([f"ROCm {result.release} supports {release.get('id')} "
                                     f"{', '.join(same)}: move to one of them"] if same else [
                "Use a listed distribution, or run ROCm in a container image built for one (the host then only needs "
                "the amdgpu driver)."]))

    def _kernel(self, facts, release, result):
        kernel = facts.get(OS_KERNEL) or {}
        kernels = result.entry.get("kernels")
        if not kernel or not kernels:
            return None
        known = ", ".join(f"{k['series']} ({k['kind']})" for k in kernels)
        evidence = [f"running kernel: {kernel['release']}", f"ROCm {result.release} on Ubuntu "
                    f"{result.entry['version']}: {known} [{result.source}]"]
        match = next((k for k in kernels if k["series"] == kernel["series"]), None)
        if match:
            return self.ok(f"kernel {kernel['series']} is the {match['kind']} kernel ROCm {result.release} lists for "
                           f"Ubuntu {result.entry['version']}", subject="kernel", evidence=evidence)
        ga = next((k["series"] for k in kernels if k["kind"] == "GA"), kernels[0]["series"])
        return self.warn(
            f"kernel {kernel['release']} is not one ROCm {result.release} was validated with on Ubuntu "
            f"{result.entry['version']} ({known}): amdgpu-dkms may not build for it, and the inbox driver may lack "
            "what this ROCm expects.", subject="kernel", evidence=evidence, severity=Severity.LOW,
            remediation=[f"The GA kernel ({ga}) is always on the list; the HWE metapackage follows newer kernels "
                         "than ROCm may list."],
            fix=[S.run_command(["sudo", "apt-get", "install", "linux-generic"], needs_admin=True,
                               description=f"install Ubuntu {result.entry['version']}'s GA kernel ({ga})",
                               note="the GA kernel is on every ROCm release's list"),
                 S.advice(KERNEL_ADVICE.format(series=ga))])

    def _glibc(self, facts, version):
        libc = facts.get(OS_GLIBC)
        oldest = os_support.oldest_glibc(version)
        if not libc:
            return None
        shown = f"{libc['libc']} {libc.get('version') or ''}".strip()
        if libc["libc"] != "glibc":
            return self.warn(f"the C library is {shown}: ROCm's packages and the torch ROCm wheels are built for "
                             "glibc and do not load on it.", subject="glibc", evidence=[f"ldd --version: {shown}"],
                             remediation=["Use a glibc-based distribution or container image (Ubuntu, RHEL, Debian)."])
        if oldest and libc.get("version") and _older(libc["version"], oldest):
            return self.warn(f"glibc {libc['version']} is older than that of any distribution ROCm {version} supports "
                             f"(oldest: {oldest}): its libraries need newer glibc symbols.", subject="glibc",
                             evidence=[f"ldd --version: {libc.get('vendor')} {libc['version']}"],
                             remediation=["Move to a distribution on the list; a container cannot fix the host's "
                                          "kernel, but it does bring its own glibc."])
        return None


class WslDistroSupport(Check):
    id = "wsl-distro-support"
    title = "The WSL distribution against ROCm's WSL package targets"
    explains = ("wsl-rocm-support",)
    area = "platform"
    severity = Severity.MEDIUM
    platforms = (Platform.WSL,)
    requires = (OS_RELEASE_FACT,)
    docs = ("https://rocm.docs.amd.com/projects/radeon-ryzen/en/latest/docs/compatibility/compatibilityrad/wsl/"
            "wsl_compatibility.html",)

    def run(self, facts):
        state = (facts.get(ROCMINFO_STATUS) or {}).get("state")
        if not amd_present(facts) and state in (None, "not-installed"):
            return self.skip("no sign of an AMD GPU or of ROCm in this WSL distribution")
        release = facts[OS_RELEASE_FACT]
        wanted = os_support.wsl_distros()
        names = ", ".join(f"{d['id'].capitalize()} {d['version']}" for d in wanted)
        evidence = [f"{release.get('source')}: {_describe(release)}", f"ROCm's WSL packages: {names} "
                    f"[{os_support.wsl_source()}]"]
        if any(d["id"] == release.get("id") and d["version"] == release.get("version_id") for d in wanted):
            return self.ok(f"{_describe(release)} is a distribution ROCm's WSL packages are built for",
                           evidence=evidence)
        return self.warn(f"{_describe(release)} is not one of the distributions ROCm's WSL packages are built for "
                         f"({names}): amdgpu-install has no WSL packages for it.", evidence=evidence,
                         remediation=["Then install ROCm with its WSL usecase inside the new distribution."],
                         fix=[S.run_command(["wsl.exe", "--install", "-d", "Ubuntu-24.04"],
                                            description="install Ubuntu 24.04 for WSL (from Windows or this shell)")])
