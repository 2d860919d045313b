"""The Windows layer checks, facts in and findings out (rocm_doctor.testing, os=windows): each verdict the driver,
Visual C++ runtime and Windows build checks can give, including what they say when nothing can be told."""

import json
from pathlib import Path

import pytest

from rocm_doctor.testing import Case, run_case

CASES = json.loads((Path(__file__).parent / "cases" / "windows-fix-cases.json").read_text(encoding="utf-8"))["cases"]


def fact(case: str, key: str):
    return json.loads(json.dumps(CASES[case]["facts"][key]))


def with_driver(adrenalin, version, internal, date=None, branch=None, registry=None, in_table=True):
    return {"registry_adrenalin": registry, "wmi_ran": True, "adapters": [
        {"name": "AMD Radeon RX 7900 XTX", "windows_version": version, "internal": internal, "adrenalin": adrenalin,
         "branch": branch, "date": date, "in_table": in_table}]}


def pytorch_needs(release: str, torch: str, hip: str, rocm=None):
    from rocm_doctor.knowledge.windows_layer import pytorch_release

    row, how = pytorch_release(rocm, torch, hip)
    assert row["release"] == release
    return {"pytorch": {"release": release, "matched_by": how, "row": row, "torch": torch, "hip": hip, "rocm": rocm},
            "hip_sdks": [], "system32_runtimes": [], "system32_scanned": True}


PREVIEW_644 = pytorch_needs("6.4.4", "2.8.0a0+gitfc14c65", "6.4.43482")


@pytest.mark.parametrize("name,driver,needs,status,text", [
    ("the-named-preview-driver", with_driver(None, "32.0.22001.14011", "25.20.01.14", in_table=False), PREVIEW_644,
     "ok", "PyTorch on Windows Preview Edition 25.20.01.14"),
    ("adrenalin-24.2.1-older-than-the-preview", with_driver("24.2.1", "31.0.24019.1006", "23.40.19.01", "2024-02-26"),
     PREVIEW_644, "fail", "older than 25.20.01.14"),
    ("a-newer-adrenalin-than-the-preview", with_driver("25.12.1", "32.0.22029.9039", "25.20.29.09", "2025-12-10"),
     PREVIEW_644, "info", "was not established"),
    ("the-rdna2-branch", with_driver("26.3.1", "32.0.21043.5001", "25.10.43.05", "2026-03-19", branch="RDNA1 and RDNA2"),
     pytorch_needs("7.2.1", "2.9.1+rocm7.2.1", "7.2.53211", "7.2.1"), "info", "could not be told"),
    ("a-preview-driver-under-the-7.2-wheels", with_driver(None, "32.0.22001.17002", "25.20.01.17", in_table=False),
     pytorch_needs("7.2", "2.9.1+rocmsdk20260116", "7.2.26024", "7.2.0.dev0"), "fail", "older than Adrenalin 26.1.1's"),
    ("adrenalin-26.2.2-under-the-7.2.1-wheels", with_driver("26.2.2", "32.0.23027.2005", "25.30.27.02", registry="26.2.2"),
     pytorch_needs("7.2.1", "2.9.1+rocm7.2.1", "7.2.53211", "7.2.1"), "ok", "26.2.2"),
])
def test_driver_against_the_pytorch_wheels(name, driver, needs, status, text):
    run_case(Case(name=name, check="windows-driver-too-old", os="windows",
                  facts={"windows.driver_release": driver, "windows.driver_needs": needs},
                  expect={"windows-driver-too-old:pytorch": status}, text=text))


def test_nightly_wheels_name_no_driver():
    needs = {"pytorch": {"release": None, "matched_by": "", "row": None, "torch": "2.10.0+rocm7.13.0a20260318",
                         "hip": "7.13.26110", "rocm": "7.13.0a20260318"}, "hip_sdks": []}
    run_case(Case(name="therock-nightly", check="windows-driver-too-old", os="windows",
                  facts={"windows.driver_release": with_driver("26.3.1", "32.0.23033.1002", "25.30.33.01"),
                         "windows.driver_needs": needs},
                  expect={"windows-driver-too-old:pytorch": "info"}, text="names no minimum"))


def test_driver_check_skips_without_an_amd_driver_or_a_stack():
    run_case(Case(name="no-amd-adapter", check="windows-driver-too-old", os="windows",
                  facts={"windows.driver_release": {"registry_adrenalin": None, "adapters": [], "wmi_ran": True},
                         "windows.driver_needs": PREVIEW_644},
                  expect={"windows-driver-too-old": "skip"}, text="no AMD display driver was seen"))
    run_case(Case(name="nothing-installed", check="windows-driver-too-old", os="windows",
                  facts={"windows.driver_release": with_driver("26.1.1", "32.0.23017.1001", "25.30.17.01"),
                         "windows.driver_needs": {"pytorch": None, "hip_sdks": []}},
                  expect={"windows-driver-too-old": "skip"}, text="nothing names a driver"))


def test_hip_sdk_runtime_present_passes():
    needs = fact("hip-sdk-6.2-on-a-driver-with-only-the-hip-5-runtime", "windows.driver_needs")
    needs["hip_sdks"][0]["runtime_present"] = True
    run_case(Case(name="hip-6-runtime-present", check="windows-driver-too-old", os="windows",
                  facts={"windows.driver_release": with_driver("24.12.1", "32.0.12033.1030", "24.20.33.01"),
                         "windows.driver_needs": needs},
                  expect={"windows-driver-too-old": "ok"}, text="HIP SDK 6.2"))


def test_vc_runtime_present_passes_and_a_missing_key_alone_is_no_problem():
    runtime = fact("runtime-14.38-older-than-torchs-msvc-14.44", "windows.vc_runtime")
    runtime["registry"]["version"], runtime["registry"]["version_tuple"] = "v14.44.35211.00", [14, 44, 35211]
    run_case(Case(name="runtime-14.44", check="windows-vc-runtime-missing", os="windows",
                  facts={"windows.vc_runtime": runtime}, expect={"windows-vc-runtime-missing": "ok"},
                  text="torch built with MSVC 14.44"))
    runtime["registry"] = None
    run_case(Case(name="dlls-without-a-key", check="windows-vc-runtime-missing", os="windows",
                  facts={"windows.vc_runtime": runtime}, expect={"windows-vc-runtime-missing": "ok"},
                  text="some installs register elsewhere"))


def test_vc_runtime_that_could_not_be_read_is_skipped():
    runtime = {"registry": None, "registry_read": False, "system32": r"C:\Windows\System32", "scanned": False,
               "present": [], "missing": [], "torch_msvc": None, "torch_warning": None}
    run_case(Case(name="unread", check="windows-vc-runtime-missing", os="windows", facts={"windows.vc_runtime": runtime},
                  expect={"windows-vc-runtime-missing": "skip"}))


def test_listed_windows_builds_pass_and_product_name_does_not_mislead():
    case = CASES["windows-11-21h2-under-hip-sdk-6.2"]
    system = dict(case["facts"]["windows.os"], build=22631, ubr=4751, display_version="23H2", name="Windows 11 23H2")
    run_case(Case(name="win11-23h2", check="windows-build-unsupported", os="windows",
                  facts=dict(case["facts"], **{"windows.os": system}),
                  expect={"windows-build-unsupported:hip-sdk-6.2": "ok"}, text="the build decides"))


def test_server_2022_is_listed_for_hip_sdk_6_but_not_for_7():
    case = CASES["windows-11-21h2-under-hip-sdk-6.2"]
    server = dict(case["facts"]["windows.os"], build=20348, ubr=None, display_version="21H2", server=True,
                  windows11=False, name="Windows Server 2022", product_name="Windows Server 2022 Datacenter")
    installs = [dict(case["facts"]["windows.hip.installs"][0]),
                dict(case["facts"]["windows.hip.installs"][0], path=r"C:\Program Files\AMD\ROCm\7.1", version="7.1")]
    run_case(Case(name="server-2022", check="windows-build-unsupported", os="windows",
                  facts=dict(case["facts"], **{"windows.os": server, "windows.hip.installs": installs}),
                  expect={"windows-build-unsupported:hip-sdk-6.2": "ok", "windows-build-unsupported:hip-sdk-7.1": "fail"}))


def test_build_check_skips_when_nothing_lists_windows_versions():
    case = CASES["windows-11-21h2-under-hip-sdk-6.2"]
    run_case(Case(name="nothing", check="windows-build-unsupported", os="windows",
                  facts=dict(case["facts"], **{"windows.hip.installs": []}),
                  expect={"windows-build-unsupported": "skip"}, text="nothing installed lists Windows versions"))


def test_the_layer_checks_skip_off_windows():
    for check in ("windows-driver-too-old", "windows-vc-runtime-missing", "windows-build-unsupported"):
        run_case(Case(name=f"{check}-linux", check=check, expect={check: "skip"}, text="not applicable on linux"))


def test_the_drivers_system32_copy_is_no_shadowing_risk():
    """The display driver installs amdhip64_7.dll into System32: with torch's loaded DLLs unknown (torch did not
    import), System32 on PATH is no reason to propose taking System32 off PATH."""
    own = {"amdhip64_7.dll": [r"C:\venv\Lib\site-packages\_rocm_sdk_core\bin\amdhip64_7.dll"]}
    dlls = {"own_dirs": [r"C:\venv\Lib\site-packages\_rocm_sdk_core\bin"], "own_copies": own,
            "system32": r"C:\Windows\System32", "system32_copies": ["amdhip64_7.dll"], "system32_scanned": True,
            "on_path": [{"folder": r"C:\Windows\system32", "name": "amdhip64_7.dll", "position": 1, "own": False}],
            "loaded": None, "loaded_why_missing": "the torch probe did not import torch"}
    findings = run_case(Case(name="system32-on-path", check="dll-shadowing", os="windows", facts={"windows.dlls": dlls},
                             expect={"dll-shadowing": "ok"}, text="outside System32"))
    assert not findings[0].fix
