"""vswhere and hipInfo parsers on the real Windows fixtures (values asserted), plus garbage."""

import json

import pytest

from rocm_doctor.parsers.hipinfo import parse_hipinfo
from rocm_doctor.parsers.vswhere import has_cpp_tools, parse_vswhere

COMMUNITY = "vswhere/windows-vs2022-community-17.5.4-native-desktop-json.txt"
BANNER = "vswhere/windows-vs2019-buildtools-only-vswhere-all-finds-nothing-without-products-star.txt"
XTX = "hipinfo/windows-rx7900xtx-only-after-igpu-disabled-rocm6.4.4-preview.txt"
NO_WDDM = "hipinfo/windows-adrenalin26.3.1-igpu-only-gfx1036-no-wddm-adapters-no-rocm-capable-device.txt"


def test_vswhere_community_json(fixture_text):
    parsed = parse_vswhere(fixture_text(COMMUNITY))
    assert parsed["format"] == "json" and parsed["error"] is None and parsed["banner"] is None
    (inst,) = parsed["instances"]
    assert inst["instance_id"] == "491ec752"
    assert inst["display_name"] == "Visual Studio Community 2022"
    assert inst["product"] == "Community" and inst["is_build_tools"] is False
    assert inst["installation_path"] == r"C:\Program Files\Microsoft Visual Studio\2022\Community"
    assert inst["installation_version"] == "17.5.33530.505" and inst["major"] == 17
    assert inst["display_version"] == "17.5.4" and inst["product_line_version"] == "2022"
    assert inst["is_complete"] is True and inst["is_launchable"] is True and inst["is_prerelease"] is False
    assert inst["setup_engine_path"] == r"C:\Program Files (x86)\Microsoft Visual Studio\Installer\setup.exe"
    assert inst["packages"] is None and has_cpp_tools(inst) is None


def test_vswhere_banner_only(fixture_text):
    parsed = parse_vswhere(fixture_text(BANNER))
    assert parsed == {"format": "banner", "banner": {"version": "2.6.7+91f4c1d09e", "query_version": "2.0.2250.60958"},
                      "instances": [], "error": None}


def test_vswhere_include_packages_and_text_format():
    raw = [{"instanceId": "abc", "installationPath": r"C:\BT", "productId": "Microsoft.VisualStudio.Product.BuildTools",
            "installationVersion": "16.11.5", "packages": [{"id": "Microsoft.VisualStudio.Workload.VCTools", "type": "Workload"},
                                                           {"id": "Microsoft.VisualStudio.Component.VC.Tools.x86.x64"}]}]
    inst = parse_vswhere(json.dumps(raw))["instances"][0]
    assert inst["is_build_tools"] and inst["major"] == 16 and has_cpp_tools(inst) is True
    inst["packages"] = ["Microsoft.VisualStudio.Workload.MSBuildTools"]
    assert has_cpp_tools(inst) is False
    text = ("Visual Studio Locator version 3.1.7+f39851e70f [query version 3.9.2164.6281]\nCopyright (C) Microsoft Corporation. "
            "All rights reserved.\n\ninstanceId: 6a1b2c3d\ninstallationPath: C:\\BT\ninstallationVersion: 17.14.36301.6\n"
            "productId: Microsoft.VisualStudio.Product.BuildTools\ncatalog_productDisplayVersion: 17.14.8\n")
    parsed = parse_vswhere(text)
    assert parsed["format"] == "text" and parsed["banner"]["version"] == "3.1.7+f39851e70f"
    assert parsed["instances"][0]["display_version"] == "17.14.8" and parsed["instances"][0]["product"] == "BuildTools"


@pytest.mark.parametrize("text", ["", "[", "{\"a\": 1", "\x00\xff garbage", "[]", "null", "[1, \"x\"]", "]]]["])
def test_vswhere_garbage_never_raises(text):
    parsed = parse_vswhere(text)
    assert parsed["instances"] == []


def test_hipinfo_rx7900xtx(fixture_text):
    parsed = parse_hipinfo(fixture_text(XTX))
    assert parsed["no_device"] is False and parsed["no_wddm_adapters"] is False and parsed["hip_errors"] == []
    (dev,) = parsed["devices"]
    assert dev["index"] == 0 and dev["name"] == "AMD Radeon RX 7900 XTX"
    assert dev["gfx"] == "gfx1100" and dev["gcn_arch_name"] == "gfx1100"
    assert dev["is_integrated"] is False
    assert dev["multi_processor_count"] == 48 and dev["pci_bus_id"] == 3
    assert dev["major"] == 11 and dev["minor"] == 0
    assert dev["total_global_mem_bytes"] == int(23.98 * 1024**3)
    assert dev["fields"]["warpSize"] == "32" and dev["fields"]["non-peers"] == "device#0"


def test_hipinfo_no_wddm_adapters(fixture_text):
    parsed = parse_hipinfo(fixture_text(NO_WDDM))
    assert parsed["devices"] == []
    assert parsed["no_wddm_adapters"] is True and parsed["no_device"] is True
    assert parsed["hip_errors"] == [{"code": "0100", "message": "no ROCm-capable device is detected"}]
    assert len(parsed["error_lines"]) == 2  # the WDDM line is printed twice; kept once


def test_hipinfo_two_devices_with_separators(fixture_text):
    xtx = fixture_text(XTX)
    igpu = xtx.replace("AMD Radeon RX 7900 XTX", "AMD Radeon(TM) Graphics").replace(
        "isIntegrated:                     0", "isIntegrated:                     1").replace(
        "gcnArchName:                      gfx1100", "gcnArchName:                      gfx1036:xnack-")
    second = xtx.replace("device#                           0", "device#                           1")
    parsed = parse_hipinfo("-" * 80 + "\n" + igpu + "\n" + "-" * 80 + "\n" + second)
    assert [(d["index"], d["gfx"], d["is_integrated"]) for d in parsed["devices"]] == [(0, "gfx1036", True), (1, "gfx1100", False)]


@pytest.mark.parametrize("text", ["", "device#", "device# 0\nName:\n", "\x00\x01", "HIP API error = xx", "device# 7\n" * 3])
def test_hipinfo_garbage_never_raises(text):
    parse_hipinfo(text)
