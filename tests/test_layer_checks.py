"""The checks of the layer under ROCm as facts in, findings out: the states the fix cases do not cover, and the
commands their steps print."""

import json
from pathlib import Path

import pytest

from rocm_doctor.testing import Case, run_case

FIX_CASES = json.loads((Path(__file__).parent / "cases" / "layer-fix-cases.json").read_text())["cases"]


def facts_of(name, **changes):
    """The facts of a fix case, with some replaced (None drops one)."""
    facts = dict(FIX_CASES[name]["facts"], **changes)
    return {k: v for k, v in facts.items() if v is not None}


OEM = "ubuntu-oem-kernel-not-on-the-list"
SB = "secure-boot-refuses-the-dkms-amdgpu"
DKMS = "amdgpu-dkms-built-for-another-kernel"
BLOCK = "blacklisted-and-nomodeset"
FW = "rdna4-without-gc-12-0-1-firmware"
BOX = "container-without-the-render-gid"
UBUNTU = FIX_CASES[OEM]["facts"]["os.release"]
K45 = FIX_CASES[DKMS]["facts"]["os.kernel"]
LOADED = {"loaded": True, "version": "6.8.5", "initstate": "live"}
POP = dict(UBUNTU, id="pop", id_like=["ubuntu", "debian"], pretty_name="Pop!_OS 24.04 LTS")
INTERIM = dict(UBUNTU, version_id="25.04", point_release="25.04", pretty_name="Ubuntu 25.04")
RHEL = dict(UBUNTU, id="rhel", id_like=["fedora"], version_id="9.6", point_release="9.6", pretty_name="RHEL 9.6")
HIP64 = {"text": "6.4.43482", "source": "hipconfig --version"}
HIP71 = {"text": "7.1.25414", "source": "hipconfig --version"}
REPOS = {"opt_rocm": ["rocm-6.4.1"], "entries": [
    {"file": "/etc/yum.repos.d/rocm.repo", "line_no": 3, "kind": "rocm", "version": "7.1", "release": "7.1",
     "enabled": True, "placeholder": False, "url": "repo.radeon.com/rocm/el9/7.1/main", "suite": None}]}

CASES = [
    Case(name="ga-kernel-is-listed", check="os-support-matrix", facts=facts_of(OEM, **{"os.kernel": K45}),
         expect={"os-support-matrix:distro": "ok", "os-support-matrix:kernel": "ok"}, text="6.8 is the GA kernel"),
    Case(name="interim-ubuntu-not-listed", check="os-support-matrix", facts=facts_of(
        OEM, **{"os.release": INTERIM, "hip.version": HIP64}), expect={"os-support-matrix:distro": "warn"},
         text="ROCm 6.4 supports ubuntu 24.04, 22.04"),
    Case(name="derivative-is-info", check="os-support-matrix", facts=facts_of(OEM, **{"os.release": POP}),
         expect={"os-support-matrix:distro": "info"}, text="derivative of ubuntu"),
    Case(name="rhel-kernel-not-judged", check="os-support-matrix", facts=facts_of(
        OEM, **{"os.release": RHEL, "hip.version": HIP71}), expect={"os-support-matrix:distro": "ok"}),
    Case(name="glibc-older-than-every-listed", check="os-support-matrix", facts=facts_of(
        OEM, **{"os.release": RHEL, "hip.version": HIP71, "os.glibc": {"libc": "glibc", "version": "2.17",
                                                                       "vendor": "GNU libc"}}),
         expect={"os-support-matrix:glibc": "warn"}, text="oldest: 2.28"),
    Case(name="musl", check="os-support-matrix", facts=facts_of(OEM, **{"os.glibc": {"libc": "musl", "version": "1.2.4"}}),
         expect={"os-support-matrix:glibc": "warn"}, text="musl"),
    Case(name="release-unknown", check="os-support-matrix", facts=facts_of(OEM, **{"hip.version": None}),
         expect={"os-support-matrix": "info"}, text="installed ROCm release is unknown"),
    Case(name="release-not-in-table", check="os-support-matrix", facts=facts_of(
        OEM, **{"hip.version": {"text": "5.7.31921", "source": "hipconfig"}}), expect={"os-support-matrix": "info"}),
    Case(name="no-amd-gpu", check="os-support-matrix", facts=facts_of(OEM, **{"gpu.pci": []}),
         expect={"os-support-matrix": "skip"}),
    Case(name="wsl-ubuntu-2404", check="wsl-distro-support", os="wsl", facts={
        "os.release": UBUNTU, "rocminfo.status": {"state": "ok", "evidence": []}}, expect={"wsl-distro-support": "ok"}),
    Case(name="wsl-without-rocm-or-amd", check="wsl-distro-support", os="wsl", facts={"os.release": UBUNTU},
         expect={"wsl-distro-support": "skip"}),
    Case(name="secure-boot-off", check="secure-boot-blocks-amdgpu", facts=facts_of(SB, **{"linux.secure_boot": {
        "state": "disabled", "validation_disabled": False, "setup_mode": True, "enforcing": False}}),
         expect={"secure-boot-blocks-amdgpu": "ok"}),
    Case(name="secure-boot-on-module-loaded", check="secure-boot-blocks-amdgpu",
         facts=facts_of(SB, **{"linux.amdgpu_module": LOADED}), expect={"secure-boot-blocks-amdgpu": "ok"}),
    Case(name="secure-boot-on-inbox-driver", check="secure-boot-blocks-amdgpu", facts=facts_of(SB, **{
        "linux.dkms_amdgpu": [], "linux.amdgpu_modinfo": {"found": True, "origin": "inbox", "signed": True,
                                                          "filename": "/lib/modules/6.8.0-45-generic/kernel/drivers/"
                                                                      "gpu/drm/amd/amdgpu/amdgpu.ko.zst"}}),
         expect={"secure-boot-blocks-amdgpu": "ok"}, text="the kernel's own"),
    Case(name="secure-boot-unsigned-dkms-on-fedora", check="secure-boot-blocks-amdgpu", facts=facts_of(SB, **{
        "os.release": RHEL, "linux.amdgpu_modinfo": dict(FIX_CASES[SB]["facts"]["linux.amdgpu_modinfo"],
                                                         signed=False, signer="")}),
         expect={"secure-boot-blocks-amdgpu": "fail"}, text=["not signed", "rebuild amdgpu so that DKMS signs it",
                                                              "turn Secure Boot off"]),
    Case(name="no-amdgpu-dkms", check="amdgpu-dkms-not-built", facts=facts_of(DKMS, **{"linux.dkms_amdgpu": []}),
         expect={"amdgpu-dkms-not-built": "skip"}),
    Case(name="dkms-tree-without-dkms-conf", check="amdgpu-dkms-not-built", facts=facts_of(DKMS, **{
        "linux.dkms_amdgpu": [{"module": "amdgpu", "version": "6.7.0-1787201.22.04", "kernel": None, "arch": None,
                               "state": "broken", "note": "/var/lib/dkms/amdgpu/6.7.0-1787201.22.04/source/dkms.conf "
                                                          "does not exist"}]}),
         expect={"amdgpu-dkms-not-built": "fail"}, text=["its dkms.conf is gone", "dkms.conf does not exist"]),
    Case(name="dkms-missing-but-inbox-loaded", check="amdgpu-dkms-not-built",
         facts=facts_of(DKMS, **{"linux.amdgpu_module": LOADED}), expect={"amdgpu-dkms-not-built": "warn"},
         text="loaded instead"),
    Case(name="nothing-blocks", check="amdgpu-blocked", facts=facts_of(BLOCK, **{"linux.amdgpu_blocks": {
        "modprobe": [], "cmdline": [], "cmdline_read": True, "folders": []}}), expect={"amdgpu-blocked": "ok"}),
    Case(name="blacklisted-but-loaded", check="amdgpu-blocked", facts=facts_of(BLOCK, **{"linux.amdgpu_module": LOADED}),
         expect={"amdgpu-blocked": "info"}),
    Case(name="container-modprobe-d-is-not-the-hosts", check="amdgpu-blocked", facts=facts_of(BLOCK, **{
        "os.container": {"in_container": True, "engine": "docker", "evidence": []}, "linux.amdgpu_blocks": dict(
            FIX_CASES[BLOCK]["facts"]["linux.amdgpu_blocks"], cmdline=[])}), expect={"amdgpu-blocked": "ok"}),
    Case(name="firmware-present", check="amdgpu-firmware-missing", facts=facts_of(FW, **{"linux.firmware": {
        "folders": {"/lib/firmware/amdgpu": 1}, "names": ["gc_12_0_1_pfp.bin.zst"]}}),
         expect={"amdgpu-firmware-missing:0": "ok"}),
    Case(name="firmware-kfd-runs-it", check="amdgpu-firmware-missing", facts=facts_of(FW, **{"gpu.inventory": [dict(
        FIX_CASES[FW]["facts"]["gpu.inventory"][0], gfx="gfx1201", sources={"kfd": "gfx1201"})]}),
         expect={"amdgpu-firmware-missing:0": "ok"}, text="KFD lists it"),
    Case(name="firmware-in-a-container", check="amdgpu-firmware-missing", facts=facts_of(FW, **{
        "os.container": {"in_container": True, "engine": "docker", "evidence": []}}),
         expect={"amdgpu-firmware-missing": "skip"}),
    Case(name="not-in-a-container", check="container-gpu-devices", facts=facts_of(BOX, **{
        "os.container": {"in_container": False, "engine": None, "evidence": []}}),
         expect={"container-gpu-devices": "skip"}),
    Case(name="container-with-devices-and-group", check="container-gpu-devices", facts=dict(
        FIX_CASES[BOX]["facts"], **FIX_CASES[BOX]["after"]["advice"]), expect={"container-gpu-devices": "ok"}),
    Case(name="repo-names-another-release", check="rocm-repos-mixed", facts={"rocm.repos": REPOS, "hip.version": HIP64},
         expect={"rocm-repos-mixed": "warn"}, text="names 7.1 but the installed ROCm is 6.4.43482"),
    Case(name="repo-matches-the-install", check="rocm-repos-mixed", facts={"rocm.repos": REPOS, "hip.version": HIP71},
         expect={"rocm-repos-mixed": "ok"}),
    Case(name="repo-without-a-release", check="rocm-repos-mixed", facts={"rocm.repos": {"opt_rocm": [], "entries": [
        dict(REPOS["entries"][0], version="debian", release=None, url="repo.radeon.com/rocm/apt/debian")]}},
         expect={"rocm-repos-mixed": "warn"}, text="names no release ('debian')"),
    Case(name="repo-in-two-files", check="rocm-repos-mixed", facts={"rocm.repos": {"opt_rocm": [], "entries": [
        REPOS["entries"][0], dict(REPOS["entries"][0], file="/etc/yum.repos.d/amd-rocm.repo")]}, "hip.version": HIP71},
         expect={"rocm-repos-mixed": "warn"}, text="configured twice"),
    Case(name="repo-several-releases", check="rocm-repos-mixed", facts={"rocm.repos": {"opt_rocm": [], "entries": [
        REPOS["entries"][0], dict(REPOS["entries"][0], release="7.0", url="repo.radeon.com/rocm/el9/7.0/main")]},
        "hip.version": HIP71}, expect={"rocm-repos-mixed": "info"}),
    Case(name="repo-all-disabled", check="rocm-repos-mixed", facts={"rocm.repos": {"opt_rocm": [], "entries": [
        dict(REPOS["entries"][0], enabled=False)]}}, expect={"rocm-repos-mixed": "skip"}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_layer_check(case):
    run_case(case)


def steps(name, **changes):
    raw = dict(FIX_CASES[name], facts=facts_of(name, **changes), text=[])
    (finding,) = [f for f in run_case(Case.from_dict(raw, name=name)) if f.status.value in ("fail", "warn")]
    return [s.argv() if hasattr(s, "argv") else s.summary() for s in finding.fix]


def test_step_commands():
    assert steps(SB)[0] == ["sudo", "mokutil", "--import", "/var/lib/shim-signed/mok/MOK.der"]
    assert steps(SB, **{"os.release": RHEL})[0] == ["sudo", "mokutil", "--import", "/var/lib/dkms/mok.pub"]
    assert steps(DKMS) == [["sudo", "apt-get", "install", "linux-headers-6.8.0-45-generic"],
                           ["sudo", "dkms", "autoinstall", "-k", "6.8.0-45-generic"]]
    assert steps(DKMS, **{"os.release": RHEL})[0] == ["sudo", "dnf", "install", "kernel-devel-6.8.0-45-generic"]
    assert steps(BLOCK) == [
        ["sudo", "sed", "-i", "-E", r"s/^\s*(blacklist|install)\s+amdgpu\b/# &/", "/etc/modprobe.d/blacklist-amdgpu.conf"],
        ["sudo", "update-initramfs", "-u"], ["sudo", "sed", "-i", r"s/ *\bnomodeset\b//", "/etc/default/grub"],
        ["sudo", "update-grub"]]
    packaged = dict(FIX_CASES[BLOCK]["facts"]["linux.amdgpu_blocks"], cmdline=["modprobe.blacklist=amdgpu"], modprobe=[
        dict(FIX_CASES[BLOCK]["facts"]["linux.amdgpu_blocks"]["modprobe"][0], file="/usr/lib/modprobe.d/x.conf")])
    assert steps(BLOCK, **{"os.release": RHEL, "linux.amdgpu_blocks": packaged}) == [
        ["sudo", "touch", "/etc/modprobe.d/x.conf"], ["sudo", "dracut", "--force"],
        ["sudo", "grubby", "--update-kernel=ALL", "--remove-args=modprobe.blacklist=amdgpu"]]
    assert steps(FW)[0] == ["sudo", "apt-get", "install", "linux-firmware"]
    debian = dict(UBUNTU, id="debian", id_like=[])
    assert steps(FW, **{"os.release": debian})[0] == ["sudo", "apt-get", "install", "firmware-amd-graphics"]
    assert steps(OEM)[0] == ["sudo", "apt-get", "install", "linux-generic"]
