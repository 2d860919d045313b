"""The maintainer's rebuild: the saved sources parse offline to the committed tables, byte for byte, and a table
that drifts from them is rewritten with a line saying what changed."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "tests" / "fixtures" / "sources"
sys.path.insert(0, str(ROOT / "tools"))

import rebuild_data  # noqa: E402
import source_parsers as parse  # noqa: E402


def _text(name):
    return (SOURCES / name).read_text(encoding="utf-8")


def test_the_committed_tables_are_what_the_saved_sources_give():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "rebuild_data.py"), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "data/ is what the saved sources give" in done.stdout


def test_a_drifted_table_is_rebuilt_byte_for_byte(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    table = json.loads((data / "rocm_support_linux.json").read_text(encoding="utf-8"))
    table["releases"] = [row for row in table["releases"] if row["rocm"] != "10.0"]
    table["therock_status"]["linux"]["release_ready"].remove("gfx942")
    (data / "rocm_support_linux.json").write_text(json.dumps(table), encoding="utf-8")
    manifest = json.loads((data / "manifest.json").read_text(encoding="utf-8"))
    (data / "manifest.json").write_text(json.dumps(dict(manifest, data_version="2099.01.01")), encoding="utf-8")
    changes = rebuild_data.rebuild(data)
    assert "rocm_support_linux.json: release 10.0 added" in changes
    assert "rocm_support_linux.json: therock_status changed" in changes
    newest = max(parse.header(_text(path.name))["read"] for path in SOURCES.iterdir())
    assert any(line.startswith(f"manifest.json: data_version {newest.replace('-', '.')}") for line in changes)
    for path in sorted((ROOT / "data").glob("*.json")):
        assert (data / path.name).read_bytes() == path.read_bytes(), path.name
    assert rebuild_data.rebuild(data) == []


def test_the_manifest_is_dated_by_the_saved_sources_and_says_how_current_each_table_is():
    manifest = json.loads((ROOT / "data" / "manifest.json").read_text(encoding="utf-8"))
    reads = {parse.header(_text(path.name))["read"] for path in SOURCES.iterdir()}
    assert manifest["generated"] == max(reads) and manifest["data_version"] == max(reads).replace("-", ".")
    current = {entry["name"]: entry["current_as_of"] for entry in manifest["files"]}
    assert current["rocm_support_linux.json"] == min(
        s["read"] for s in json.loads((ROOT / "data" / "rocm_support_linux.json").read_text())["sources"].values()
        if s.get("verified") is True)
    assert current["nvidia_xid.json"] is None  # no source of it is verified with a quote yet
    counts = {entry["name"]: entry["sources_verified"] for entry in manifest["files"]}
    assert counts["nvidia_xid.json"][0] == 0 and 0 < counts["rocm_support_linux.json"][0] < counts[
        "rocm_support_linux.json"][1]


def test_the_10_0_release_notes_parse_to_targets_devices_and_os_tables():
    text = _text(rebuild_data.RN_10)
    assert parse.header(text)["page-date"] == "2026-08-26"
    assert parse.hardware_targets(text) == ["gfx950", "gfx942", "gfx90a", "gfx908", "gfx1201", "gfx1200", "gfx1100",
                                            "gfx1101", "gfx1102", "gfx1030", "gfx1151", "gfx1150", "gfx1152",
                                            "gfx1153", "gfx1103"]
    devices = {d["name"]: d for d in parse.apu_devices(text)}
    assert devices["Ryzen AI 7 445"] == {"name": "Ryzen AI 7 445", "igpu": "Radeon 840M", "gfx": "gfx1153",
                                         "codename": "Gorgon Point"}
    assert devices["Ryzen AI 5 330"]["gfx"] == "gfx1152" and devices["Ryzen 3 210"]["codename"] == "Hawk Point"
    tables = parse.os_tables(text)
    assert tables["Instinct"][0] == {"name": "Ubuntu", "version": "26.04", "kernel": "GA 7.0"}
    assert {"name": "SUSE Linux Enterprise Server (SLES)", "version": "15.7", "kernel": "6.4.0-150700.51"} \
        in tables["Instinct"]
    assert [row["kernel"] for row in tables["Ryzen"]] == ["GA 7.0", "OEM 6.17", "—"]


def test_the_7_14_release_notes_list_the_gpus_they_add():
    added = parse.added_gpus(_text(rebuild_data.RN_714))
    assert [gpu["gfx"] for gpu in added] == ["gfx1151"] * 3 + ["gfx1153"] * 4
    assert added[3]["name"] == "Ryzen AI 5 435"


def test_therocks_status_and_device_extras_parse():
    status = parse.therock_status(_text(rebuild_data.TR_SUP))
    assert "gfx1153" in status["linux"]["build_only"] and "gfx942" in status["linux"]["release_ready"]
    assert "gfx1201" in status["windows"]["build_only"]
    extras = parse.device_extras(_text(rebuild_data.TR_REL))
    assert extras[0] == {"product": "AMD Instinct MI355X / MI350X", "gfx": "gfx950", "extra": "device-gfx950"}
    assert len(extras) == 26
    assert parse.torch_companions(_text(rebuild_data.TR_REL))[0] == {"torch": "2.14", "torchaudio": "2.11",
                                                                   "torchvision": "0.29"}


def test_a_quote_missing_from_its_saved_copy_stops_the_rebuild():
    with pytest.raises(AssertionError, match="the quote is not in the saved copy"):
        rebuild_data.source_entry(rebuild_data.RN_714, _text(rebuild_data.RN_714), "ROCm 7.14.0 drops gfx1153")


def test_the_10_0_release_notes_name_the_pytorch_releases_per_os():
    assert parse.pytorch_versions(_text(rebuild_data.RN_10)) == {"linux": ["2.13.0", "2.12.0", "2.11.0"],
                                                                 "windows": ["2.13.0"]}


def test_a_system_requirements_page_parses_to_marked_gpus_and_kernels():
    import rocm_pages

    text = _text(rocm_pages.SR["6.1"])
    gpus = {gpu["name"]: gpu for gpu in parse.gpu_support(text)}
    assert gpus["Instinct MI50"]["status"] == "deprecated" and gpus["Instinct MI25"]["status"] == "unsupported"
    assert gpus["Instinct MI300X"]["note"].startswith("MI300X is supported only on Ubuntu 22.04.4")
    systems = {(row["name"], row["version"]): row for row in parse.os_support_rows(text)}
    assert systems[("SLES", "15 SP4")]["kernel"] == "5.14.21-150500"
    assert systems[("Oracle Linux", "8.9")]["note"] == "Oracle Linux 8.9 is supported only on AMD Instinct MI300X."
    assert parse.labelled_kernels("5.15 [GA], 6.5 [HWE]") == [{"series": "5.15", "kind": "GA"},
                                                               {"series": "6.5", "kind": "HWE"}]
    assert parse.labelled_kernels("6.6") is None


def test_the_compatibility_matrix_parses_per_point_release():
    import rocm_pages

    history = parse.matrix_csv(_text(rocm_pages.CM_HIST))
    assert list(history)[0] == "6.3.3" and list(history)[-1] == "6.0.0"
    assert history["6.1.2"]["gfx"] == ["gfx1100", "gfx1030", "gfx942", "gfx90a", "gfx908"]
    assert ("centos", "7.9", ()) in history["6.1.2"]["os"] and history["6.1.2"]["pytorch"] == ["2.1", "2.0", "1.13"]
    latest = parse.matrix_table(_text(rocm_pages.CM_LRB))
    assert set(latest) == {"7.2.4", "7.2.3", "7.2.2", "7.2.1", "7.1.0"}
    assert ("rhel", "9.7", ()) in latest["7.2.1"]["os"] and ("rhel", "9.7", ()) not in latest["7.1.0"]["os"]
    assert latest["7.2.4"]["pytorch"] == ["2.9.1", "2.8.0", "2.7.1"]


def test_a_row_the_matrix_disagrees_with_stops_the_rebuild():
    import rocm_pages

    row = {"rocm": "7.2", "gfx": {"gfx950": "supported", "gfx1151": "supported"}}
    with pytest.raises(AssertionError, match="CM-LRB lists"):
        rocm_pages._check_targets(row, parse.matrix_table(_text(rocm_pages.CM_LRB)), "CM-LRB")


def test_a_5x_support_page_and_the_microarchitecture_pages_parse():
    import rocm_pages

    gpus = parse.md_gpu_support(_text(rocm_pages.GOS["5.7"]))
    assert {"name": "Radeon RX 7900 XTX", "gfx": "gfx1100", "status": "supported", "note": "Ubuntu 22.04 only"} in gpus
    assert rocm_pages._targets(gpus)["gfx1100"] == {"status": "supported", "note": "Ubuntu 22.04 only"}
    peaks = {key: parse.peak_tflops(_text(saved)) for key, (saved, _, _) in rocm_pages.PEAK_PAGES.items()}
    assert peaks["ROCM-MI300"]["Matrix BF16"] == 1307.4 and peaks["ROCM-MI100"]["Matrix BF16"] == 92.3
    assert peaks["ROCM-MI200"]["Vector FP32"] == 45.3


def test_a_windows_page_target_the_specification_table_contradicts_is_counted_under_the_tables():
    import rocm_pages

    specs = rocm_pages._spec_targets({rocm_pages.ARCH_SPECS: _text(rocm_pages.ARCH_SPECS)})
    assert specs["radeon rx 7600"] == "gfx1102" and specs["mi300x"] == "gfx942"
    texts = {name: _text(name) for name in rocm_pages.WIN["5.5"][1] + rocm_pages.WIN["6.0"][1]}
    row = rocm_pages._windows_release(rocm_pages.WIN["5.5"][1], texts, specs)
    assert row["gfx"]["gfx1102"] == {"runtime": "supported", "sdk": "supported"}
    assert "Radeon RX 7600 as gfx1100 (the hardware specification table: gfx1102)" in row["disagreement"]
    assert row["os"] == ["Windows 10 22H2", "Windows 11 22H2", "Windows Server 2022"]
    later = rocm_pages._windows_release(rocm_pages.WIN["6.0"][1], texts, specs)
    assert later["gfx"]["gfx1101"]["from"] == "6.0.2" and later["note"].startswith("6.0.2 adds Radeon PRO W7700")


def test_kfd_and_the_firmware_blocks_parse_to_targets_and_files():
    import linux_pages

    targets = linux_pages.kfd_targets(_text(linux_pages.KFD))
    assert targets["9.4.2"] == "gfx90a" and targets["11.0.3"] == "gfx1101" and targets["11.0.4"] == "gfx1103"
    assert targets["10.3.7"] == "gfx1036" and targets["12.0.1"] == "gfx1201"
    assert linux_pages.gfx_name(90012) == "gfx90c" and linux_pages.gfx_name(110501) == "gfx1151"
    files = linux_pages.firmware_files(_text(linux_pages.FIRMWARE["GFX12-FW"][0]))
    assert files[0] == "gc_12_0_0_pfp.bin" and "gc_12_0_1_rlc_kicker.bin" in files


def test_the_cuda_build_script_gives_each_cuda_its_arch_lists():
    import pytorch_pages

    built = pytorch_pages.build_arch_lists(_text(pytorch_pages.BUILD_CUDA))
    assert built["12.6"]["x86_64"][:2] == ["5.0", "6.0"] and built["12.6"]["aarch64"] == ["8.0", "9.0"]
    assert built["13.0"]["x86_64"] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
    assert built["13.0"]["aarch64"] == ["8.0", "9.0", "10.0", "11.0", "12.0"]


def test_hipvars_maps_the_legacy_platform_names():
    import hip_pages

    assert hip_pages.platform_renames(_text(hip_pages.HIPVARS)) == {"hcc": "amd", "nvcc": "nvidia"}


def test_therocks_cmake_names_the_families_of_each_target():
    import therock_pages

    families = therock_pages.cmake_families(_text(therock_pages.CMAKE))
    assert families["gfx103X-all"] == ["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"]
    assert families["gfx1151"] == ["gfx1151"] and "gfx1250" in families["dcgpu-all"]


def test_the_last_per_family_matrix_names_the_platforms_of_each_family():
    import therock_pages

    platforms = therock_pages.matrix_platforms(_text(therock_pages.FAMILY_MATRIX))
    assert platforms["gfx94X-dcgpu"] == {"linux"} and platforms["gfx1151"] == {"linux", "windows"}
    assert len(platforms) == 14


def test_llvms_generic_processor_table_gives_each_generic_targets_members():
    import llvm_pages

    members = llvm_pages.generic_members(_text(llvm_pages.GENERIC))
    assert members["gfx9-4-generic"] == ["gfx942", "gfx950"]  # the restrictions column's gfx1100 etc. left out
    assert members["gfx11-generic"][-1] == "gfx1153" and members["gfx12-generic"] == ["gfx1200", "gfx1201"]


def test_libhsakmt_gives_the_override_limits():
    import hip_pages

    assert hip_pages.override_limits(_text(hip_pages.TOPOLOGY)) == {"major": 63, "minor": 255, "stepping": 255}


def test_gpuopens_table_gives_the_windows_drivers_of_the_decoded_majors():
    import rocm_pages

    rows = rocm_pages.amd_driver_versions(_text(rocm_pages.AMDVK), [31, 32])
    assert rows[0] == {"adrenalin": "26.3.1", "windows_version": "32.0.23033.1002", "internal_version": "25.30.33.01",
                       "date": "2026-03-19", "whql": True, "source": "AMDVK"}
    assert rows[1]["branch"] == "RDNA1 and RDNA2"
    assert all(row["windows_version"].split(".")[0] in ("31", "32") for row in rows)


def test_a_figure_the_later_spec_table_contradicts_is_kept_with_the_disagreement():
    import rocm_pages

    gpu = {"id": "x", "vram_gb": 12, "figures_source": "AMD-PRODUCT", "source": "AMD-ARCH"}
    rocm_pages._take_specs(gpu, "ARCH-SPECS-LATER", {"gfx": "gfx1201", "vram_gb": 16, "compute_units": 48})
    assert gpu["vram_gb"] == 12 and gpu["gfx"] == "gfx1201" and gpu["compute_units"] == 48
    assert gpu["disagreement"] == "vram_gb: ARCH-SPECS-LATER gives 16, the row keeps 12 (AMD-PRODUCT)"
