"""The Windows failure logs in tests/fixtures match data/error_signatures.json rows that point at registered
checks (the lead owns the table; this pins the Windows rows the Windows checks rely on)."""

from rocm_doctor.engine.registry import load_registry
from rocm_doctor.knowledge.signatures import match

IDS = set(load_registry(include_plugins=False).ids())


def test_miopen_type_traits_log_points_at_hiprtc_headers_missing(fixture_text):
    text = fixture_text("logs/miopen/windows-gfx1100-therock7.2-lstm-hiprtc-type_traits-not-found-cpu-fallback.txt")
    found = {m.id: m.check for m in match(text)}
    assert found.get("hiprtc-type-traits-missing") == "hiprtc-headers-missing"
    assert "hiprtc-headers-missing" in IDS


def test_no_wddm_hipinfo_is_recognised(fixture_text):
    text = fixture_text("hipinfo/windows-adrenalin26.3.1-igpu-only-gfx1036-no-wddm-adapters-no-rocm-capable-device.txt")
    found = {m.id: m.check for m in match(text)}
    assert {"no-wddm-adapters", "no-rocm-capable-device"} <= set(found)
    assert all(check in IDS for check in found.values())
    assert found["no-wddm-adapters"] == found["no-rocm-capable-device"] == "windows-gpu-not-enumerated"


def test_hiprtc_compile_failure_points_at_hiprtc_headers_missing(fixture_text):
    """HIPRTC_ERROR_COMPILATION / 'Code object build failed' (then miopenStatusUnknownError): ROCm/ROCm#5941."""
    for name in ("logs/miopen/windows-gfx1100-therock7.2-lstm-hiprtc-type_traits-not-found-cpu-fallback.txt",
                 "logs/miopen/linux-gfx900-ubuntu22.04-naive_conv-limits-not-found-missing-libstdcxx12-dev-rocm5.4.txt"):
        found = {m.id: m.check for m in match(fixture_text(name))}
        assert found.get("hiprtc-compilation-failed") == "hiprtc-headers-missing", name
    assert match("MIOpen Error: x/hipoc_program.cpp:299: Code object build failed. Source: a.cpp")[0].check == \
        "hiprtc-headers-missing"


def test_amdhip64_access_violation_points_at_dll_shadowing():
    text = ("Faulting application name: python.exe\nFaulting module name: amdhip64_7.dll, version: 10.0.3581.0\n"
            "Exception code: 0xc0000005")
    found = {m.id: m.check for m in match(text)}
    assert found.get("amdhip64-access-violation") == "dll-shadowing" and "dll-shadowing" in IDS
