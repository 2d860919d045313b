"""rocm-smi and amd-smi parsers on every real output in tests/fixtures/rocm-smi and tests/fixtures/amd-smi."""

import json
from pathlib import Path

from rocm_doctor.parsers.amd_smi import parse_amd_smi
from rocm_doctor.parsers.rocm_smi import parse_rocm_smi

FIXTURES = Path(__file__).parent / "fixtures"


def rocm_smi(name):
    return parse_rocm_smi((FIXTURES / "rocm-smi" / name).read_text(encoding="utf-8"))


def amd_smi(name):
    return parse_amd_smi((FIXTURES / "amd-smi" / name).read_text(encoding="utf-8"))


def test_showhw_gfx11002_rendering_is_gfx1102():
    result = rocm_smi("linux-arch-rx7600xt-gfx1102-plus-raphael-igpu-showhw-gfx11002-rocm6.2.txt")
    assert result["format"] == "text" and result["errors"] == []
    dgpu, igpu = result["devices"]
    assert (dgpu["gfx_raw"], dgpu["gfx"], dgpu["device_id"], dgpu["node"]) == ("gfx11002", "gfx1102", "0x7480", 1)
    assert dgpu["bdf"] == "0000:03:00.0"
    assert (igpu["gfx"], igpu["device_id"], igpu["node"], igpu["bdf"]) == ("gfx1036", "0x164e", 2, "0000:12:00.0")


def test_all_strings_json():
    result = rocm_smi("linux-docker-mi300x-vf-gfx942-showproductname-showmeminfo-vram-showuse-json-card-series-na.txt")
    assert result["format"] == "json"
    (card,) = result["devices"]
    assert card["name"] is None, '"Card Series": "N/A" is no name'
    assert (card["gfx"], card["device_id"], card["node"], card["guid"]) == ("gfx942", "0x74b5", 1, 21947)
    assert card["vram_total_bytes"] == 205822885888
    assert card["sku"] == "M3000100"


def test_map_at_abort():
    result = rocm_smi("linux-fedora40-radeonvii-rocm-smi-6.1.2-map-at-get_multiplier_from_str-assert.txt")
    assert result["devices"] == []
    assert result["errors"][0] == "Exception caught: map::at"
    assert any("get_multiplier_from_str" in line for line in result["errors"])
    assert result["errors"][-1] == "Aborted (core dumped)"


def test_showproductname_hex_only_names():
    (card,) = rocm_smi("linux-mi100-gfx908-showproductname-rocm4.0-hex-only-names.txt")["devices"]
    assert card["name"] is None, "a hex id is not a marketing name"
    assert (card["series"], card["model"], card["device_id"], card["sku"]) == ("0x738c", "0xc34", "0x738c", "D34314")


def test_concise_table_two_devices():
    result = rocm_smi("linux-popos24.04-rx9070xt-plus-granite-ridge-igpu-concise-rocm7.2.1.txt")
    assert [(d["index"], d["node"], d["device_id"], d["guid"]) for d in result["devices"]] == [
        (0, 1, "0x7550", 45211), (1, 2, "0x13c0", 21194)]


def test_csv_two_mi100():
    result = rocm_smi("linux-rhel8-2x-mi100-gfx908-showproductname-csv.txt")
    assert result["format"] == "csv"
    assert [d["index"] for d in result["devices"]] == [0, 1]
    assert {d["name"] for d in result["devices"]} == {"Arcturus GL-XL [AMD Instinct MI100]"}


def test_rocm_smi_whole_system_json_skips_the_system_entry():
    text = json.dumps({"card0": {"Card Series": "Navi 31 [Radeon RX 7900 XT/7900 XTX]", "GFX Version": "gfx11000"},
                       "system": {"Driver version": "6.8.5"}})
    (card,) = parse_rocm_smi(text)["devices"]
    assert (card["name"], card["gfx"]) == ("Navi 31 [Radeon RX 7900 XT/7900 XTX]", "gfx1100")


def test_amd_smi_default_table():
    result = amd_smi("linux-cloud-vm-mi300x-vf-gfx942-default-table-rocm7.2.4.txt")
    assert result["format"] == "table"
    assert result["versions"] == {"amd_smi": "26.2.2+97f5574fe2", "rocm": "7.2.4", "amdgpu": "6.16.13"}
    (gpu,) = result["devices"]
    assert (gpu["index"], gpu["bdf"], gpu["name"]) == (0, "0000:83:00.0", "AMD Instinct MI300X VF")
    assert (gpu["partition_mode"], gpu["vram_mb"]) == ("SPX/NPS1", 196288)


def test_amd_smi_version_assert_abort():
    result = amd_smi("linux-fedora43-rx7900xtx-amd-smi-version-stl_vector-assert-rocm6.4.4.txt")
    assert result["devices"] == [] and result["format"] == "empty"
    assert len(result["errors"]) == 2
    assert "Assertion '__n < this->size()' failed" in result["errors"][0]


def test_amd_smi_minimal_list():
    result = amd_smi("linux-proxmox-780m-phoenix3-gfx1103-list.txt")
    (gpu,) = result["devices"]
    assert (gpu["index"], gpu["bdf"], gpu["uuid"]) == (0, "0000:65:00.0", "00ff1900-0000-1000-8000-000000000000")
    assert gpu["kfd_id"] is None and gpu["gfx"] is None


def test_amd_smi_static_apu():
    (gpu,) = amd_smi("linux-ubuntu24.04-minisforum-hx470-gfx1150-apu-static-full-rocm7.2.0.txt")["devices"]
    assert (gpu["name"], gpu["gfx"], gpu["device_id"], gpu["compute_units"]) == ("AMD Radeon Graphics", "gfx1150", "0x150e", 16)
    assert (gpu["vram_mb"], gpu["vram_type"], gpu["bdf"]) == (65536, "DDR5", "0000:c5:00.0")


def test_amd_smi_json_shapes():
    gpu = {"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "device_id": "0x74a1",
                              "target_graphics_version": "gfx942", "num_compute_units": 304},
           "bus": {"bdf": "0000:0c:00.0"}, "vram": {"type": "HBM", "size": {"value": 196592, "unit": "MB"}}}
    for text in (json.dumps([gpu]), json.dumps({"gpu_data": [gpu]})):
        (device,) = parse_amd_smi(text)["devices"]
        assert (device["gfx"], device["vram_mb"], device["bdf"]) == ("gfx942", 196592, "0000:0c:00.0")
    listed = json.dumps([{"gpu": 1, "bdf": "0000:0c:00.0", "uuid": "u", "kfd_id": 9, "node_id": 2, "partition_id": 0}])
    (device,) = parse_amd_smi(listed)["devices"]
    assert (device["index"], device["kfd_id"], device["node_id"]) == (1, 9, 2)


def test_json_after_warning_lines():
    text = 'WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status\n\n' \
           '{"card0": {"Card Series": "Navi 33", "GFX Version": "gfx11002", "Device ID": "0x7480"}}\n'
    result = parse_rocm_smi(text)
    assert result["format"] == "json"
    assert [(d["name"], d["gfx"], d["device_id"]) for d in result["devices"]] == [("Navi 33", "gfx1102", "0x7480")]
