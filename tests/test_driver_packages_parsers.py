"""Parsers of the driver and package layer on real outputs (tests/fixtures/INDEX.md gives each file's thread):
package lists (dpkg, rpm), the release an AMD package version carries, dkms status of today's amdgpu-dkms, ls -l
of /opt/rocm links, rocm-smi --showfwinfo and amd-smi firmware."""

import pytest

from rocm_doctor.parsers.dkms import parse_dkms_status
from rocm_doctor.parsers.ls_long import missing_paths, parse_ls_long
from rocm_doctor.parsers.packages import amd_release, parse_dpkg, parse_rpm, versioned_release
from rocm_doctor.parsers.smi_firmware import parse_amd_smi_firmware, parse_showfwinfo


def test_dpkg_list_with_amd_and_ubuntu_builds(fixture_text):
    rows = parse_dpkg(fixture_text("dpkg/ubuntu22.04-rocm5.7.1-plus-ubuntu-libhsa-runtime64-5.0-dpkg-l-grep-rocm.txt"))
    assert len(rows) == 38 and all(r["status"] == "ii" and r["arch"] == "amd64" for r in rows)
    by_name = {r["name"]: r for r in rows}
    assert by_name["libhsa-runtime64-1"]["version"] == "5.0.0-1ubuntu0.1"
    assert amd_release(by_name["libhsa-runtime64-1"]["version"]) is None
    assert {amd_release(r["version"]) for r in rows if not r["name"].startswith("libhsa")} == {"5.7.1"}
    assert amd_release(by_name["rocm-llvm"]["version"]) == "5.7.1"  # 17.0.0.23382.50701: the last field counts


def test_dpkg_list_header_and_not_installed_rows(fixture_text):
    rows = parse_dpkg(fixture_text("dpkg/ubuntu18.04-rocm4.0-dpkg-l-star-rocm-with-un-procmail-excerpt.txt"))
    assert [r["name"] for r in rows][:2] == ["procmail", "rocm-clang-ocl"]
    assert rows[0] == {"name": "procmail", "version": None, "status": "un", "arch": None}
    assert [amd_release(r["version"]) for r in rows[1:]] == ["4.0", "4.0", "4.0.0", "4.0.0", "4.0.0", "4.0"]


def test_dpkg_list_removed_rows_and_arch_qualified_names(fixture_text):
    rows = parse_dpkg(fixture_text("dpkg/ubuntu20.04-rock-dkms-4.1-plus-amdgpu-pro-20.45-dpkg-l-grep-gpu-rc-amdgpu-dkms.txt"))
    assert len(rows) == 64 and [r["name"] for r in rows if r["status"] == "rc"] == ["amdgpu-dkms", "rocm-amdgpu-pro-icd"]
    assert rows[1] == {"name": "amdgpu-dkms", "version": "1:5.6.20.906300-1164792", "status": "rc", "arch": "all"}
    by_name = {(r["name"], r["arch"]): r for r in rows}
    assert by_name[("libdrm-amdgpu-amdgpu1", "i386")]["version"] == "1:2.4.100-1164792"
    assert by_name[("rock-dkms", "all")]["version"] == "1:4.1-26"
    assert amd_release(by_name[("rocm-dbgapi", "amd64")]["version"]) == "4.1.0"
    assert amd_release(by_name[("amdgpu-dkms", "all")]["version"]) is None  # 906300: amdgpu-pro's build, no release


def test_dpkg_query_format_with_unfinished_states():
    """The probe's own format (name version status-abbrev); no real listing with these states was found, so the
    lines are written here in the format dpkg-query prints."""
    rows = parse_dpkg("amdgpu-dkms 1:6.8.5.60200-2009582.24.04 iF \nrocm-core 6.2.0.60200-66~24.04 ii \n"
                      "hipblas  un \nrocblas 4.2.0.60200-66~24.04 iU \nlibhsa-runtime64-1:amd64 5.0.0-1ubuntu0.1 rc \n")
    assert [(r["name"], r["status"]) for r in rows] == [("amdgpu-dkms", "iF"), ("rocm-core", "ii"), ("hipblas", "un"),
                                                       ("rocblas", "iU"), ("libhsa-runtime64-1", "rc")]
    assert rows[4]["arch"] == "amd64" and rows[2]["version"] is None


def test_rpm_plain_and_query_format(fixture_text):
    rows = parse_rpm(fixture_text("rpm/centos7.5-rocm2.1.96-rpm-qa-grep-rocm-hip-rock.txt"))
    by_name = {r["name"]: r for r in rows}
    assert len(rows) == 15 and by_name["rocm-smi"]["version"] == "1.0.0_100_g3cacdb9-1"
    assert by_name["rock-dkms"] == {"name": "rock-dkms", "version": "2.1-96.el7", "status": "ii", "arch": "noarch"}
    assert amd_release(by_name["rocm-dev"]["version"]) is None  # ROCm 2.x packed no release field
    assert parse_rpm("rocm-core 6.2.0.60200-66.el9\nwarning: junk\n") == [
        {"name": "rocm-core", "version": "6.2.0.60200-66.el9", "status": "ii", "arch": None}]


@pytest.mark.parametrize("version,release", [
    ("1:6.8.5.60200-2009582.24.04", "6.2.0"),          # ROCm/rocm-install-on-linux#293
    ("1:6.12.12.60401-2164967.24.04", "6.4.1"),        # ROCm/amdgpu#192
    ("1:6.16.13.30300400-2341068.24.04", "30.30.4"),   # ROCm/ROCm#6193: the AMD GPU Driver's 8-digit field
    ("30.30.0.0.30300000-2278356.24.04", "30.30.0"),
    ("1:5.6.20.906300-1164792", None),                 # ROCm/ROCm#1436: amdgpu-pro 20.45's build number
    ("1:5.13.20.22.10.50103-1420322", "5.1.3"),        # ROCm/ROCm#1748: amdgpu 22.10 of ROCm 5.1.3
    ("20240318.git3b128b60-0ubuntu2.19", None),        # linux-firmware: a date, not a release
    ("20251111-1.fc43", None),
])
def test_release_field_of_package_versions(version, release):
    assert amd_release(version) == release


def test_versioned_package_names():
    assert versioned_release("rocm-core6.2.0") == "6.2.0" and versioned_release("miopen-hip-dev7.1.1") == "7.1.1"
    assert versioned_release("libhsa-runtime64-1") is None and versioned_release("rocm-core") is None


def test_dkms_status_of_todays_amdgpu_dkms(fixture_text):
    two = parse_dkms_status(fixture_text("dkms/ubuntu25.10-rocm7.1.1-amdgpu-6.16.6-installed-for-two-kernels.txt"))
    assert [(r["version"], r["kernel"], r["state"], r["note"]) for r in two] == [
        ("6.16.6-2255209.24.04", "6.17.0-5-generic", "installed", "Original modules exist"),
        ("6.16.6-2255209.24.04", "6.17.0-8-generic", "installed", "Original modules exist")]
    sample = parse_dkms_status(fixture_text("dkms/ubuntu24.04-amdgpu-docs-sample-6.14.14-installed.txt"))
    assert sample[0]["version"] == "6.14.14-2204008.24.04" and sample[0]["kernel"] == "6.14.0-29-generic"
    (stale,) = parse_dkms_status(fixture_text("dkms/ubuntu22.04-stale-amdgpu-6.7.0-tree-dkms-conf-missing.txt"))
    assert (stale["state"], stale["kernel"]) == ("broken", None)  # a tree without dkms.conf builds for no kernel


def test_ls_long_links_and_directories(fixture_text):
    links = parse_ls_long(fixture_text("ls/therock-opt-rocm-ls-l-alternatives-links-as-pasted.txt"))
    assert links[0] == {"name": "amdgcn", "type": "link", "target": "/etc/alternatives/rocm-amdgcn"}
    assert {"name": "core-8.1", "type": None, "target": None} in links and len(links) == 9
    dirs = parse_ls_long(fixture_text("ls/ubuntu-rocm3.8.0-ls-l-opt-rocm-3.8.0-after-3.7-upgrade.txt"))
    assert len(dirs) == 16 and all(d["type"] == "dir" for d in dirs) and dirs[4]["name"] == "hsa-amd-aqlprofile"
    assert parse_ls_long("lrwxrwxrwx 1 root root 22 2025-09-10 12:00 /opt/rocm -> /etc/alternatives/rocm\n") == [
        {"name": "/opt/rocm", "type": "link", "target": "/etc/alternatives/rocm"}]
    assert missing_paths("ls: cannot access '/etc/alternatives/rocm': No such file or directory\n") == [
        "/etc/alternatives/rocm"]
    by_hand = parse_ls_long(fixture_text("ls/ubuntu-rocm3.3-ls-l-opt-rocm-link-made-by-hand-to-rocm-3.3.0.txt"))
    assert by_hand == [{"name": "/opt/rocm", "type": "link", "target": "/opt/rocm-3.3.0"}]  # "Apr  2  2020": a year


def test_showfwinfo_versions_and_unsupported(fixture_text):
    igpu = parse_showfwinfo(fixture_text("rocm-smi/linux-raphael-igpu-0x164e-showfwinfo-firmware-block-excerpt.txt"))
    assert list(igpu) == [0] and igpu[0]["versions"]["SMC"] == "00.84.79.221" and len(igpu[0]["versions"]) == 21
    assert igpu[0]["versions"]["RLC SRLC"] == "1" and igpu[0]["unsupported"] == []
    instinct = parse_showfwinfo(fixture_text("rocm-smi/linux-instinct-showfwinfo-not-supported-lines-gpu0-excerpt.txt"))
    assert "MES" in instinct[0]["unsupported"] and instinct[0]["versions"]["TA XGMI"] == "32.00.00.17"
    assert parse_showfwinfo("garbage\n") == {}


def test_amd_smi_firmware_lists(fixture_text):
    mi300a = parse_amd_smi_firmware(fixture_text("amd-smi/linux-rocky9.5-4x-mi300a-gfx942-firmware-amd-smi-24.7.1-rocm6.3.3.txt"))
    assert list(mi300a) == [0, 1, 2, 3] and all(g == mi300a[0] for g in mi300a.values())
    assert list(mi300a[0]["versions"]) == ["CP_MEC1", "CP_MEC2", "RLC", "SDMA0", "SDMA1", "VCN", "PSP_SOSDRV", "TA_RAS",
                                           "TA_XGMI", "PM"]
    assert mi300a[0]["versions"]["VCN"] == "06.11.30.0C" and mi300a[0]["unsupported"] == []
    rdna4 = parse_amd_smi_firmware(fixture_text("amd-smi/linux-ubuntu24.04-rx9070xt-gfx1201-firmware-amd-smi-26.0.2-rocm7.0.2.txt"))
    assert rdna4[0]["versions"]["CP_PFP"] == "2630" and rdna4[0]["versions"]["PM"] == "00.104.57.00"
    assert "MES" not in rdna4[0]["versions"] and len(rdna4[0]["versions"]) == 10
    assert parse_amd_smi_firmware("FW_ID: RLC\nFW_VERSION: 1\n") == {}  # no GPU header: nothing to attach it to
    assert parse_showfwinfo(fixture_text("amd-smi/linux-rocky9.5-4x-mi300a-gfx942-firmware-amd-smi-24.7.1-rocm6.3.3.txt")) == {}


def test_every_fixture_here_has_its_source_in_the_index(fixture_text):
    index = fixture_text("INDEX.md")
    used = ["dpkg/ubuntu22.04-rocm5.7.1-plus-ubuntu-libhsa-runtime64-5.0-dpkg-l-grep-rocm.txt",
            "dpkg/ubuntu18.04-rocm4.0-dpkg-l-star-rocm-with-un-procmail-excerpt.txt",
            "rpm/centos7.5-rocm2.1.96-rpm-qa-grep-rocm-hip-rock.txt",
            "dkms/ubuntu25.10-rocm7.1.1-amdgpu-6.16.6-installed-for-two-kernels.txt",
            "dkms/ubuntu24.04-amdgpu-docs-sample-6.14.14-installed.txt",
            "dkms/ubuntu22.04-stale-amdgpu-6.7.0-tree-dkms-conf-missing.txt",
            "ls/therock-opt-rocm-ls-l-alternatives-links-as-pasted.txt",
            "ls/ubuntu-rocm3.8.0-ls-l-opt-rocm-3.8.0-after-3.7-upgrade.txt",
            "ls/ubuntu-rocm3.3-ls-l-opt-rocm-link-made-by-hand-to-rocm-3.3.0.txt",
            "dpkg/ubuntu20.04-rock-dkms-4.1-plus-amdgpu-pro-20.45-dpkg-l-grep-gpu-rc-amdgpu-dkms.txt",
            "amd-smi/linux-rocky9.5-4x-mi300a-gfx942-firmware-amd-smi-24.7.1-rocm6.3.3.txt",
            "amd-smi/linux-ubuntu24.04-rx9070xt-gfx1201-firmware-amd-smi-26.0.2-rocm7.0.2.txt",
            "rocm-smi/linux-raphael-igpu-0x164e-showfwinfo-firmware-block-excerpt.txt",
            "rocm-smi/linux-instinct-showfwinfo-not-supported-lines-gpu0-excerpt.txt"]
    assert [name for name in used if f"| {name} | http" not in index and f"| {name} | ROCm/" not in index] == []
