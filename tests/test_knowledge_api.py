"""The knowledge API over data/, asserted on real facts."""

import pytest

from rocm_doctor.knowledge import catalog, overrides, support, wheels
from rocm_doctor.knowledge.store import load


@pytest.mark.parametrize("name,gpu_id,gfx", [
    ("AMD Radeon RX 7900 XTX", "rx-7900-xtx", "gfx1100"), ("AMD Radeon RX 7900 XT", "rx-7900-xt", "gfx1100"),
    ("RX 6650 XT", "rx-6650-xt", "gfx1032"), ("AMD Radeon RX 6650 XT", "rx-6650-xt", "gfx1032"),
    ("NVIDIA H200", "h200-sxm", "sm_90"), ("NVIDIA H200 NVL", "h200-nvl", "sm_90"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm", "sm_80"), ("AMD Instinct MI300X", "instinct-mi300x", "gfx942"),
    ("MI300X", "instinct-mi300x", "gfx942"), ("AMD Radeon(TM) 780M", "radeon-780m", "gfx1103"),
])
def test_names_resolve(name, gpu_id, gfx):
    gpu = catalog.by_name(name)
    assert (gpu.id, gpu.gfx) == (gpu_id, gfx)


def test_generic_igpu_name_is_ambiguous():
    assert catalog.by_name("AMD Radeon Graphics") is None
    assert catalog.by_name("") is None


def test_h200_peak_is_the_benchmark_reference():
    peak = catalog.peak("NVIDIA H200")
    assert peak["bandwidth_gbs"] == 4800 and peak["vram_gb"] == 141
    assert peak["tflops"]["bf16"] == pytest.approx(989, abs=1) and peak["tflops"]["fp32"] == pytest.approx(67, abs=0.5)


def test_pci_ids():
    assert catalog.gfx_for_pci_id("0x73FF") == "gfx1032"
    assert catalog.gfx_for_pci_id(0x744C) == "gfx1100"
    assert catalog.gfx_for_pci_id("74b5") == "gfx942"
    assert catalog.gfx_for_pci_id("zz") is None
    assert [gpu.id for gpu in catalog.by_pci_id("73ff")] == ["rx-6600-xt"]
    assert {gpu.gfx for gpu in catalog.by_pci_id("73ef")} == {"gfx1032"}


def test_by_gfx_strips_features():
    assert {gpu.id for gpu in catalog.by_gfx("gfx942:sramecc+:xnack-")} >= {"instinct-mi300x", "instinct-mi325x"}
    assert catalog.target("gfx1151")["gfx_target_version"] == 110501


@pytest.mark.parametrize("gfx,version,status", [
    ("gfx1100", "6.0.2", "supported"), ("gfx1100", "6.3.42131", "supported"), ("gfx1100", "7.2.53211", "supported"),
    ("gfx906", "6.2", "deprecated"), ("gfx906", "6.4.0", "unsupported"), ("gfx1032", "6.3", "unsupported"),
    ("gfx1201", "6.4.0", "unsupported"), ("gfx1201", "6.4.1", "supported"), ("gfx950", "7.0.0", "supported"),
    ("gfx1151", "7.13.0", "supported"), ("gfx1030", "7.11", "unsupported"), ("gfx1030", "7.13", "supported"),
    ("gfx1100", "4.5", "unknown"), ("gfx1030", "5.0.1", "supported"), ("gfx906", "5.4.3", "supported"),
    ("gfx90a", "5.2.50200", "supported"), ("gfx1032", "5.0.1", "unsupported"), ("gfx900", "5.6", "unsupported"),
    ("gfx1100", "5.6.1", "unsupported"), ("gfx1100", "5.7.1", "supported"),
])
def test_linux_support(gfx, version, status):
    assert support.linux(gfx, version).status == status


def test_every_linux_release_from_50_has_a_row_in_order():
    rows = [row["rocm"] for row in load("rocm_support_linux.json")["releases"]]
    assert rows[:8] == ["5.0", "5.1", "5.2", "5.3", "5.4", "5.5", "5.6", "5.7"]


@pytest.mark.parametrize("version", ["5.7", "6.1", "6.2.4", "6.4.2"])
def test_gfx1032_is_runtime_only_on_windows(version):
    result = support.windows("gfx1032", version)
    assert (result.runtime, result.sdk) == ("supported", "unsupported")


def test_windows_rdna2_gone_in_7x_and_rdna4_in_64():
    assert support.windows("gfx1030", "7.2").runtime == "unsupported"
    assert support.windows("gfx1030", "6.4.2").sdk == "supported"
    assert support.windows("gfx1201", "6.4").sdk == "supported"
    assert support.windows("gfx1201", "6.2").runtime == "unsupported"


def test_windows_apus_follow_amds_tables():
    """HIP SDK 7.2 lists gfx1150 and gfx1151, not gfx1152; 6.4.2's Ryzen tab lists gfx1151."""
    assert support.windows("gfx1152", "7.2").runtime == "unsupported"
    assert (support.windows("gfx1151", "7.2").sdk, support.windows("gfx1150", "7.2").sdk) == ("supported", "supported")
    assert support.windows("gfx1151", "6.4.2").sdk == "supported" and support.windows("gfx1151", "6.4.2").note is None
    assert support.windows("gfx1102", "7.2").note is None


def test_wsl_release_builds_and_cards():
    assert support.wsl("gfx1100", "6.4.2").status == "unsupported"
    assert support.wsl("gfx1100", "6.4.2.1").status == "supported"
    assert support.wsl("gfx1102", "6.2.3").status == "unsupported"
    assert support.wsl("gfx1030", "6.3.4").status == "unsupported"


def test_closest_working_path():
    kinds = [path["kind"] for path in support.closest_working_path("gfx1032")]
    assert kinds[0] == "override"
    assert support.closest_working_path("gfx906")[0]["text"] == "ROCm 6.3 lists gfx906"
    assert support.closest_working_path("gfx1032", "windows")[0]["text"].startswith("HIP SDK 6.4: runtime only")


def test_gfx1032_not_in_rocm64_wheels_but_override_covers_it():
    archs = wheels.index_archs("rocm6.4")
    assert not wheels.covers(archs, "gfx1032")
    value = overrides.recommended("gfx1032")
    assert value == "10.3.0" and wheels.covers(archs, overrides.target_of(value))


@pytest.mark.parametrize("arch_list,gfx,expected", [
    (["gfx90a:sramecc+:xnack-"], "gfx90a", True), (["gfx942"], "gfx942:sramecc+:xnack-", True),
    (["gfx10-3-generic"], "gfx1032", True), (["gfx11-generic"], "gfx1151", True), (["gfx11-generic"], "gfx1030", False),
    (["gfx1100"], "gfx1101", False), ([], "gfx1100", False), (["gfx1100"], "not-a-gpu", False),
])
def test_covers(arch_list, gfx, expected):
    assert wheels.covers(arch_list, gfx) is expected


def test_native_indexes_and_therock():
    assert wheels.native_indexes("gfx1151")[0] == "rocm7.2"
    assert "rocm6.2.4" in wheels.native_indexes("gfx1102")
    assert wheels.native_indexes("gfx1032") == []
    assert wheels.therock_multi_arch("gfx1100")["torch"] == "torch[device-gfx1100]"
    assert wheels.therock_multi_arch("gfx1032")["index"] == "https://repo.amd.com/rocm/whl-multi-arch/"
    assert wheels.therock_multi_arch("gfx906")["index"] == "https://rocm.nightlies.amd.com/whl-multi-arch/"
    assert wheels.therock_multi_arch("gfx803") is None
    assert wheels.therock_multi_arch("gfx90c") is None  # built by TheRock, but RELEASES.md lists no device extra
    assert wheels.torch_versions("rocm7.2") == ["2.11", "2.12", "2.13", "2.14"]  # 2.14 is on rocm7.14 as well
    assert wheels.torch_versions("rocm7.1") == ["2.10", "2.11", "2.12", "2.13"]
    assert wheels.torch_versions("rocm7.0") == ["2.10"]
    assert wheels.windows_options()["pytorch_org"] is False


def test_an_index_whose_wheels_bundle_no_rocm_says_so_in_the_advice():
    assert wheels.needs_beside("rocm7.14")["requirement"] == "rocm[libraries]"
    assert wheels.needs_beside("https://download.pytorch.org/whl/rocm7.2")["rocm"] == "bundled"
    index, why, _ = wheels.amd_torch_index("gfx1100", "linux")
    assert index.endswith("/rocm7.14") and "rocm[libraries]" in why and "carry no ROCm libraries" in why
    index, why, _ = wheels.amd_torch_index("gfx1032", "linux")  # TheRock's own index: its torch pulls rocm itself
    assert "multi-arch" in why and "rocm[libraries]" not in why


def test_existing_wheel_helpers_keep_working():
    assert wheels.latest_rocm_index() == "https://download.pytorch.org/whl/rocm7.14"
    assert wheels.cuda_index().startswith("https://download.pytorch.org/whl/cu")


@pytest.mark.parametrize("torch_version,index", [  # 2.14: stable CUDA 13.0 (PyPI pins 13.0.3), 13.2 experimental
    ("2.13.0+cpu", "cu130"), ("2.14.1", "cu130"), ("2.9.1+rocm6.4", "cu128"), ("2.11.0", "cu130"),
    ("2.7.1+cu118", "cu126"), (None, "cu130"), ("3.0.0", "cu130"), ("not a version", "cu130"),
])
def test_cuda_index_has_that_torch_release(torch_version, index):
    assert wheels.cuda_index(torch_version) == "https://download.pytorch.org/whl/" + index


def test_no_cuda_index_past_its_last_torch():
    """cu128 has no torch after 2.11 (RELEASE.md): a newer torch never gets it."""
    rows = load("torch_wheels.json")["releases"]
    assert [r["torch"] for r in rows if "cu128" in r["cuda_indexes"]][-1] == "2.11"
    assert all(wheels.cuda_index(r["torch"]).rsplit("/", 1)[-1] in r["cuda_indexes"] for r in rows)


@pytest.mark.parametrize("value,ok", [("10.3.0", True), ("9.0.10", True), (" 11.0.0", True), ("+10.3.0", True),
                                      (" 11.0.0 ", False), ("10.3.0\r", False), ("10.3.0\n", False), ("1030", False),
                                      ("10.3", False), ("gfx1030", False), ("10.3.0.1", False), ("", False), ("64.0.0", False)])
def test_parse_override(value, ok):
    fields, message = overrides.parse(value)
    assert (fields is not None) is ok and (message is None) is ok


def test_override_messages_suggest_the_value():
    assert "10.3.0" in overrides.parse("gfx1030")[1]
    assert "9.0.10" in overrides.parse("gfx90a")[1]


@pytest.mark.parametrize("gfx,value", [("gfx1031", "10.3.0"), ("gfx1036", "10.3.0"), ("gfx1102", "11.0.0"),
                                       ("gfx1100", None), ("gfx1201", None), ("gfx1151", None), ("gfx90c", None)])
def test_recommended_override(gfx, value):
    assert overrides.recommended(gfx) == value


def test_weak_overrides_only_on_request():
    assert overrides.recommended("gfx90c", include_weak=True) == "9.0.0"


@pytest.mark.parametrize("value,gfx,expected", [("10.3.0", "gfx1032", True), ("11.0.0", "gfx1101", True),
                                                ("11.0.0", "gfx1032", False), ("10.3.0", "gfx1102", False),
                                                ("12.0.1", "gfx1201", True), ("1030", "gfx1032", False)])
def test_override_family(value, gfx, expected):
    assert overrides.matches_family(value, gfx) is expected


def test_override_caveats_say_linux_only():
    assert {caveat["id"] for caveat in overrides.caveats()} >= {"linux-only", "all-devices"}


@pytest.mark.parametrize(
    "gfx, platform_os, expected",
    [
        ("gfx1100", "linux", "download.pytorch.org/whl/rocm"),
        ("gfx1032", "linux", "repo.amd.com/rocm/whl-multi-arch/"),
        ("gfx1100", "windows", "repo.amd.com/rocm/whl-multi-arch/"),
        (None, "linux", "download.pytorch.org/whl/rocm"),
        (None, "windows", "whl-multi-arch"),
    ],
)
def test_amd_torch_index_by_gfx_and_os(gfx, platform_os, expected):
    from rocm_doctor.knowledge.wheels import amd_torch_index

    index, why, packages = amd_torch_index(gfx, platform_os)
    assert expected in index and why
    assert packages == ([f"torch[device-{gfx}]"] if "whl-multi-arch" in index and gfx else ["torch"])


def test_gfx1153_is_named_from_amds_hardware_table_and_its_igpu_name_is_ambiguous():
    row = catalog.target("gfx1153")
    assert row["codename"] == "Gorgon Point" and "Ryzen AI 5 435 (Radeon 840M)" in row["products"]
    ambiguous = load("gpu_catalog.json")["ambiguous_names"]["names"]
    assert ambiguous["Radeon 840M"] == [{"gfx": "gfx1152", "sources": ["RN-10.0"]},
                                        {"gfx": "gfx1153", "sources": ["RN-10.0"]}]
    assert ambiguous["Radeon 820M"] == [{"gfx": "gfx1152", "sources": ["RN-10.0"]},  # AMD: Ryzen AI 5 330
                                        {"gfx": "gfx1153", "sources": ["TR-REL"]}]   # TheRock's extras table
    assert catalog.by_name("AMD Radeon 840M") is None  # the name alone does not tell the target


@pytest.mark.parametrize("gfx,rocm,status", [
    ("gfx1153", "7.14.0", "supported"), ("gfx1153", "10.0.0", "supported"), ("gfx1153", "7.13.0", "unsupported"),
    ("gfx1200", "10.0.1", "supported"), ("gfx1030", "7.12.0", "unsupported"),
])
def test_the_production_stream_rows_from_7_14(gfx, rocm, status):
    assert support.linux(gfx, rocm).status == status
