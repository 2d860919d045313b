"""Parsers of the layer under ROCm on real outputs: os-release files, ldd, mokutil, dkms, modinfo, modprobe.d, the
kernel log and /proc/1/cgroup (tests/fixtures/INDEX.md gives each file's source)."""

import pytest

from rocm_doctor.parsers.cgroup import parse_cgroup
from rocm_doctor.parsers.dkms import parse_dkms_status
from rocm_doctor.parsers.kernel_log import parse_kernel_log
from rocm_doctor.parsers.kernel_release import parse_kernel_release
from rocm_doctor.parsers.ldd import parse_ldd_version
from rocm_doctor.parsers.modinfo import parse_modinfo
from rocm_doctor.parsers.modprobe_conf import blocks, cmdline_blocks, parse_modprobe_conf
from rocm_doctor.parsers.mokutil import parse_sb_state
from rocm_doctor.parsers.os_release import describe, parse_os_release

OS_RELEASES = [
    ("ubuntu-24.04.3-noble.txt", "ubuntu", "24.04", "24.04.3", ["debian"], "noble"),
    ("ubuntu-25.04-plucky-interim.txt", "ubuntu", "25.04", "25.04", ["debian"], "plucky"),
    ("ubuntu-26.04.txt", "ubuntu", "26.04", "26.04", ["debian"], "resolute"),
    ("ubuntu-18.04.6-bionic-rocm-issue-1626-excerpt.txt", "ubuntu", "18.04", "18.04.6", ["debian"], "bionic"),
    ("ubuntu-14.04.3-trusty-as-shipped-in-linuxmint17.txt", "ubuntu", "14.04", "14.04.3", ["debian"], None),
    ("rhel-9.6-plow.txt", "rhel", "9.6", "9.6", ["fedora"], None),
    ("rhel-10.0-coughlan.txt", "rhel", "10.0", "10.0", ["centos", "fedora"], None),
    ("rocky-9.3-blue-onyx.txt", "rocky", "9.3", "9.3", ["rhel", "centos", "fedora"], None),
    ("fedora-42.txt", "fedora", "42", "42", [], None),
    ("debian-13-trixie.txt", "debian", "13", "13", [], "trixie"),
    ("arch-rolling.txt", "arch", None, None, [], None),
    ("opensuse-leap-15.txt", "opensuse-leap", "15.2", "15.2", ["suse", "opensuse"], None),
    ("sles-12-sp1.txt", "sles", "12.1", "12 SP1", [], None),
]


@pytest.mark.parametrize("name,distro,version,point,like,codename", OS_RELEASES, ids=[r[0] for r in OS_RELEASES])
def test_os_release_files(fixture_text, name, distro, version, point, like, codename):
    info = describe(parse_os_release(fixture_text(f"os-release/{name}")))
    assert (info["id"], info["version_id"], info["point_release"], info["id_like"], info["codename"]) == (
        distro, version, point, like, codename)


def test_os_release_quoting_and_empty_values(fixture_text):
    raw = parse_os_release(fixture_text("os-release/fedora-42.txt"))
    assert raw["VERSION_CODENAME"] == "" and raw["VERSION_ID"] == "42" and raw["SUPPORT_END"] == "2026-05-13"
    assert describe(raw)["codename"] is None
    assert parse_os_release("# comment\nNAME='single quoted'\nbroken line\nX=\"a \\\"b\\\"\"\n") == {
        "NAME": "single quoted", "X": 'a "b"'}
    assert describe(parse_os_release(fixture_text("os-release/arch-rolling.txt")))["build_id"] == "rolling"


@pytest.mark.parametrize("name,version,vendor", [
    ("kylin-v10-ubuntu-glibc-2.31-zh-cn.txt", "2.31", "Ubuntu GLIBC 2.31-0kylin9.1k21.6"),
    ("gentoo-glibc-2.43-r2.txt", "2.43", "Gentoo 2.43-r2 (patchset 3)"),
    ("fedora-22-gnu-libc-2.21.txt", "2.21", "GNU libc"),
    ("ubuntu-16.04-glibc-2.23-first-line-excerpt.txt", "2.23", "Ubuntu GLIBC 2.23-0ubuntu10"),
])
def test_ldd_version(fixture_text, name, version, vendor):
    assert parse_ldd_version(fixture_text(f"ldd/{name}")) == {"libc": "glibc", "version": version, "vendor": vendor}


def test_ldd_musl_and_garbage():
    assert parse_ldd_version("musl libc (x86_64)\nVersion 1.2.4\nDynamic Program Loader\n")["libc"] == "musl"
    assert parse_ldd_version("") is None and parse_ldd_version("ldd: command not found") is None


@pytest.mark.parametrize("release,series,flavour,wsl", [
    ("6.8.0-45-generic", "6.8", "generic", False), ("6.11.0-14-generic", "6.11", "generic", False),
    ("6.17.0-1012-oem", "6.17", "oem", False), ("5.14.0-427.13.1.el9_4.x86_64", "5.14", None, False),
    ("5.15.167.4-microsoft-standard-WSL2", "5.15", None, True), ("6.18.44-fc-v657-gpu", "6.18", None, False),
    ("4.16.1-041601-lowlatency", "4.16", "lowlatency", False),
])
def test_kernel_release(release, series, flavour, wsl):
    parsed = parse_kernel_release(release)
    assert (parsed["series"], parsed["flavour"], parsed["wsl"]) == (series, flavour, wsl)
    assert parse_kernel_release("garbage") is None


def test_mokutil_states(fixture_text):
    assert parse_sb_state(fixture_text("mokutil/sb-state-enabled.txt")) == {
        "state": "enabled", "validation_disabled": False, "setup_mode": False, "enforcing": True}
    assert parse_sb_state(fixture_text("mokutil/sb-state-disabled-setup-mode.txt")) == {
        "state": "disabled", "validation_disabled": False, "setup_mode": True, "enforcing": False}
    shim_off = parse_sb_state("SecureBoot enabled\nSecureBoot validation is disabled in shim\n")
    assert shim_off["state"] == "enabled" and not shim_off["enforcing"]
    assert parse_sb_state("EFI variables are not supported on this system\n")["state"] == "unsupported"
    assert parse_sb_state("This system doesn't support Secure Boot\n")["state"] == "unsupported"
    assert parse_sb_state("") is None


def test_dkms_status_names_a_tree_that_lost_its_dkms_conf(fixture_text):
    (row,) = parse_dkms_status(fixture_text("dkms/ubuntu22.04-stale-amdgpu-6.7.0-tree-dkms-conf-missing.txt"))
    assert row["module"] == "amdgpu" and row["version"] == "6.7.0-1787201.22.04" and row["state"] == "broken"
    assert row["note"] == "/var/lib/dkms/amdgpu/6.7.0-1787201.22.04/source/dkms.conf does not exist"


def test_dkms_status_old_and_new_forms(fixture_text):
    old = parse_dkms_status(fixture_text("dkms/centos7-elrepo-amdgpu-added-and-installed-original-module-exists.txt"))
    assert old == [
        {"module": "amdgpu", "version": "18.50-756341.el7", "kernel": None, "arch": None, "state": "added", "note": None},
        {"module": "amdgpu", "version": "2.3-14.el7", "kernel": "5.0.8-1.el7.elrepo.x86_64", "arch": "x86_64",
         "state": "installed", "note": "original_module exists"}]
    (new,) = parse_dkms_status(fixture_text("dkms/debian-testing-i915-sriov-installed-original-modules-exist.txt"))
    assert new == {"module": "i915-sriov-dkms", "version": "2025.03.27", "kernel": "6.12.20-amd64", "arch": "x86_64",
                   "state": "installed", "note": "Original modules exist"}
    rows = parse_dkms_status(fixture_text("dkms/deepin25-two-kernels-nvidia-installed.txt"))
    assert [(r["module"], r["kernel"]) for r in rows] == [
        ("deepin-anything", "6.18.48-amd64-desktop-rolling"), ("deepin-anything", "6.6.155-amd64-desktop-hwe"),
        ("nvidia-current", "6.18.48-amd64-desktop-rolling"), ("nvidia-current", "6.6.155-amd64-desktop-hwe")]
    assert parse_dkms_status(fixture_text("dkms/debian9-amdgpu-2.0-89-added-not-built.txt")) == [
        {"module": "amdgpu", "version": "2.0-89", "kernel": None, "arch": None, "state": "added", "note": None}]
    assert parse_dkms_status("") == [] and parse_dkms_status("Error! Could not locate dkms.conf file.\n") == []


def test_modinfo_dkms_builds(fixture_text):
    ubuntu = parse_modinfo(fixture_text("modinfo/ubuntu18.04-kernel-4.15-rock-dkms-19.10-updates-dkms-excerpt.txt"))
    assert ubuntu["filename"] == "/lib/modules/4.15.0-43-generic/updates/dkms/amdgpu.ko"
    assert (ubuntu["version"], ubuntu["kernel"], ubuntu["origin"], ubuntu["signed"]) == (
        "19.10.0.418", "4.15.0-43-generic", "dkms", False)
    assert ubuntu["firmware"][:2] == ["amdgpu/raven2_gpu_info.bin", "amdgpu/picasso_gpu_info.bin"]
    centos = parse_modinfo(fixture_text("modinfo/centos7-elrepo-5.0.8-amdgpu-extra-dkms-excerpt.txt"))
    assert (centos["origin"], centos["kernel"], centos["version"]) == ("dkms", "5.0.8-1.el7.elrepo.x86_64", "5.0.19.20.6")


def test_modinfo_inbox_unsigned_and_signed(fixture_text):
    kfd = parse_modinfo(fixture_text("modinfo/ubuntu-mainline-4.16-amdkfd-intree-empty-signer.txt"))
    assert (kfd["origin"], kfd["intree"], kfd["signer"], kfd["sig_key"], kfd["signed"]) == ("inbox", "Y", "", "", False)
    signed = parse_modinfo(fixture_text("modinfo/deepin25-nvidia-dkms-signed-by-dkms-key-excerpt.txt"))
    assert signed["signer"] == "DKMS module signing key" and signed["signed"] and signed["origin"] is None
    assert parse_modinfo("modinfo: ERROR: Module amdgpu not found.\n") is None


def test_modprobe_blacklists(fixture_text):
    amd = parse_modprobe_conf(fixture_text("modprobe.d/blacklist-amdgpu.conf"))
    assert blocks(amd) == [{"line_no": 1, "command": "blacklist", "module": "amdgpu", "args": [],
                            "line": "blacklist amdgpu", "effect": "blacklist"}]
    nvidia = parse_modprobe_conf(fixture_text("modprobe.d/usr-lib-optimus-manager.conf"))
    assert [e["module"] for e in nvidia] == ["nouveau", "nvidia_drm", "nvidia_uvm", "nvidia_modeset", "nvidia"]
    assert blocks(nvidia) == [] and blocks(nvidia, "nvidia_drm")[0]["line_no"] == 2
    more = parse_modprobe_conf("# blacklist amdgpu\ninstall amdgpu /bin/false\noptions amdgpu \\\n  ppfeaturemask=0x1\n")
    assert [(b["line_no"], b["effect"]) for b in blocks(more)] == [(2, "install-disabled")]
    assert more[-1] == {"line_no": 3, "command": "options", "module": "amdgpu", "args": ["ppfeaturemask=0x1"],
                        "line": "options amdgpu ppfeaturemask=0x1"}


def test_cmdline_blocks():
    line = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet nomodeset modprobe.blacklist=nouveau,amdgpu amdgpu.runpm=0"
    assert cmdline_blocks(line) == ["nomodeset", "modprobe.blacklist=nouveau,amdgpu"]
    assert cmdline_blocks("quiet splash module_blacklist=xe i915.enable_guc=3") == []
    assert cmdline_blocks("amdgpu.modeset=0 rd.driver.blacklist=amdgpu") == ["amdgpu.modeset=0",
                                                                             "rd.driver.blacklist=amdgpu"]


def test_kernel_log_firmware_and_init(fixture_text):
    strix = parse_kernel_log(fixture_text(
        "dmesg/ubuntu24.04-strixhalo-gfx1151-fatal-error-during-gpu-init-no-gc-firmware.txt"))
    assert strix["init_failed"] and strix["firmware_missing"] == []
    assert strix["probe_failed"] == [{"device": "0000:c5:00.0", "error": -22}]
    rpi = parse_kernel_log(fixture_text("dmesg/rpi5-w7700-gfx1101-sdma-6.0.3-firmware-missing-excerpt.txt"))
    assert rpi["required_missing"] == ["amdgpu/sdma_6_0_3.bin"] and rpi["init_failed"]
    vii = parse_kernel_log(fixture_text("dmesg/ubuntu19.10-2x-radeonvii-vega20-ta-bin-missing-harmless.txt"))
    assert vii["firmware_missing"] == ["amdgpu/vega20_ta.bin"] and vii["required_missing"] == []
    assert not vii["init_failed"] and len(vii["lines"]) == 2
    navi = parse_kernel_log(fixture_text("dmesg/void-linux-5.4-navi14-gpu-info-firmware-missing.txt"))
    assert navi["required_missing"] == ["amdgpu/navi14_gpu_info.bin"]
    assert parse_kernel_log("")["lines"] == []


def test_cgroup_engines(fixture_text):
    v1 = parse_cgroup(fixture_text("cgroup/docker-cgroup-v1-proc-1-cgroup.txt"))
    assert v1["engine"] == "docker" and not v1["v2_only"] and len(v1["paths"]) == 12
    private = parse_cgroup(fixture_text("cgroup/docker-cgroup-v2-private-namespace.txt"))
    assert private == {"engine": None, "paths": ["/"], "v2_only": True}
    assert parse_cgroup(fixture_text("cgroup/docker-cgroup-v2-host-namespace.txt"))["engine"] == "docker"
    assert parse_cgroup("0::/init.scope\n")["engine"] is None
    assert parse_cgroup("0::/system.slice/containerd.service\n")["engine"] is None


def test_package_repo_files(fixture_text):
    from rocm_doctor.parsers.package_repos import parse_repo_file

    rocky = parse_repo_file(fixture_text("repos/rockylinux9.6-rocm.repo-rocm-7.1-and-graphics-7.1.repo"))
    assert [(e["kind"], e["release"], e["line_no"], e["enabled"]) for e in rocky] == [
        ("rocm", "7.1", 3, True), ("graphics", "7.1", 11, True)]
    (old,) = parse_repo_file(fixture_text("repos/ubuntu16.04-rocm.list-unversioned-debian-path.list"))
    assert (old["kind"], old["version"], old["release"], old["suite"]) == ("rocm", "debian", None, "xenial")
    (fixed,) = parse_repo_file(fixture_text("repos/ubuntu16.04-rocm.list-rocm-3.5.1.list"))
    assert fixed["release"] == "3.5.1" and fixed["url"] == "repo.radeon.com/rocm/apt/3.5.1"
    (placeholder,) = parse_repo_file(fixture_text("repos/ubuntu22.04-amdgpu-proprietary.list-unexpanded-AMDGPUVER.list"))
    assert placeholder["placeholder"] and not placeholder["enabled"]
    (by_hand,) = parse_repo_file(fixture_text("repos/ubuntu22.04-amdgpu-proprietary.list-version-set-by-hand.list"))
    assert (by_hand["kind"], by_hand["release"], by_hand["enabled"]) == ("amdgpu", "5.4.5", True)
    deb822 = parse_repo_file("Types: deb\nURIs: https://repo.radeon.com/rocm/apt/6.4\nSuites: noble\nEnabled: no\n\n"
                             "Types: deb\nURIs: https://repo.radeon.com/rocm/apt/7.2\nSuites: noble\n")
    assert [(e["release"], e["enabled"]) for e in deb822] == [("6.4", False), ("7.2", True)]
    assert parse_repo_file("deb http://archive.ubuntu.com/ubuntu noble main\n") == []
