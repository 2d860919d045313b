"""data/os_support.json and data/amdgpu_firmware.json: every row sourced and dated, the matching rules, and the
firmware map agreeing with the GPU catalog."""

import pytest

from rocm_doctor.knowledge import catalog, firmware, os_support
from rocm_doctor.knowledge.store import load

TABLES = ("os_support.json", "amdgpu_firmware.json")


@pytest.mark.parametrize("name", TABLES)
def test_every_source_is_dated_and_named(name):
    table = load(name)
    for key, source in table["sources"].items():
        assert source.get("title") and source.get("read") and (source.get("url") or source.get("document")), key


def test_every_release_and_firmware_row_names_a_known_source():
    os_table, fw = load("os_support.json"), load("amdgpu_firmware.json")
    assert all(row["source"] in os_table["sources"] for row in os_table["releases"])
    assert os_table["wsl"]["source"] in os_table["sources"]
    assert all(row["source"] in fw["sources"] and row["gc_source"] in fw["sources"] for row in fw["targets"])


def test_releases_cover_6_0_to_10_0_and_entries_are_well_formed():
    assert os_support.releases() == ["6.0", "6.1", "6.2", "6.3", "6.4", "7.0", "7.1", "7.2", "7.14", "10.0"]
    for row in load("os_support.json")["releases"]:
        for entry in row["distros"]:
            assert entry["id"] == entry["id"].lower() and entry["version"]
            for kernel in entry.get("kernels") or []:
                assert kernel["kind"] in ("GA", "HWE", "OEM") and kernel["series"].count(".") == 1


@pytest.mark.parametrize("rocm,distro,version,point,status", [
    ("6.3.42131", "ubuntu", "24.04", "24.04.3", "listed"),
    ("6.2.4", "ubuntu", "24.04", "24.04.1", "listed"),
    ("6.1.2", "ubuntu", "24.04", "24.04", "not-listed"),       # 24.04 arrived with 6.2
    ("7.2.1", "ubuntu", "26.04", "26.04", "not-listed"),
    ("6.4.1", "ubuntu", "25.04", "25.04", "not-listed"),
    ("7.1.0", "rhel", "10.0", "10.0", "listed"),
    ("7.0.1", "rhel", "10.0", "10.0", "not-listed"),          # RHEL 10.0 from 7.0.2
    ("7.0.2", "rhel", "10.0", "10.0", "listed"),
    ("7.1.0", "ol", "9.4", "9.4", "listed"),                  # "Oracle Linux 9" covers 9.x
    ("6.4.0", "sles", "15.6", "15 SP6", "listed"),
    ("6.4.0", "fedora", "42", "42", "not-listed"),
    ("5.7.1", "ubuntu", "22.04", "22.04.3", "unknown-release"),
    ("10.0.0", "ubuntu", "26.04", "26.04", "listed"),
    ("7.14.0", "rhel", "10.2", "10.2", "listed"),
    ("7.14.0", "rhel", "10.1", "10.1", "not-listed"),         # 10.2 replaced it as the validated RHEL 10
    ("7.1.1", "rhel", "9.7", "9.7", "listed"),
    ("7.1.0", "rhel", "9.7", "9.7", "not-listed"),            # added by 7.1.1
    ("10.0.0", "sles", "16.0", "16", "listed"),
])
def test_distro_matching(rocm, distro, version, point, status):
    assert os_support.distro(rocm, distro, version, point).status == status


def test_kernels_and_glibc():
    entry = os_support.distro("7.0.2", "ubuntu", "24.04", "24.04.3").entry
    assert [(k["series"], k["kind"]) for k in entry["kernels"]] == [("6.8", "GA"), ("6.14", "HWE")]
    assert entry["glibc"] == "2.39"
    assert os_support.oldest_glibc("7.1.0") == "2.28" and os_support.oldest_glibc("6.2.4") is None
    assert {(d["id"], d["version"]) for d in os_support.wsl_distros()} == {("ubuntu", "22.04"), ("ubuntu", "24.04")}


def test_firmware_rows_name_catalogued_targets_and_prefixes():
    targets = {row["gfx"] for row in load("gpu_catalog.json")["targets"]}
    for row in load("amdgpu_firmware.json")["targets"]:
        assert row["gfx"] in targets, row["gfx"]
        assert all(p.endswith("_") for p in row["prefixes"])
    assert firmware.target("gfx1201")["prefixes"] == ["gc_12_0_1_"]
    assert firmware.target("gfx942:sramecc+:xnack-")["gc"] == ["9.4.3", "9.4.4"]
    assert firmware.present(firmware.target("gfx1201"), ["gc_12_0_1_pfp.bin.zst", "gc_12_0_0_me.bin",
                                                        "gc_12_0_1_readme.txt"]) == ["gc_12_0_1_pfp.bin.zst"]
    assert catalog.gfx_for_pci_id("0x7550") == "gfx1201" and firmware.target(catalog.gfx_for_pci_id("7550"))
