"""Kernel outcomes → findings, signature matches, and static findings confirmed or refuted (pure, no processes)."""

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.gpu.kernels.stage import judge
from rocm_doctor.engine.pipeline import apply_evidence
from rocm_doctor.interpret.stage_results import interpret
from rocm_doctor.gpu.kernels.signatures import analyse, signature_matches
import importlib

gpu_confirm = importlib.import_module("rocm_doctor.checks.gpu_confirm")


def apply_kernel_evidence(findings, stage):
    return apply_evidence(list(findings), gpu_confirm.GpuKernelsFailed().evidence_on(facts_with(stage)))


def ok(case, category="matmul"):
    return {"case": case, "category": category, "dtype": "float32", "outcome": "ok", "rel_err": 1e-7,
            "rel_err_text": "1e-07", "tol": 1e-4}


def suite_of(*results, device_type="cuda", fatal=None, vendor="amd"):
    results = list(results)
    counts = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    return {
        "device": device_type,
        "hello": {"device_type": device_type, "vendor": vendor,
                  "devices": [{"index": 0, "name": "AMD Radeon RX 6650 XT", "arch": "gfx1032"}]},
        "fatal": fatal,
        "results": results,
        "counts": counts,
    }


def stage_of(suite, **extra):
    stage = {"ran": True, "suite": suite, "library_logs": {"ran": False}, "override_ab": {"ran": False}}
    stage.update(extra)
    stage["analysis"] = analyse(suite, (stage.get("library_logs") or {}).get("log") or "")
    return stage


def facts_with(stage, os_name="linux"):
    facts = Facts(Observations())
    facts.set("platform.os", os_name)
    if stage is not None:
        facts.set("gpu.kernels", stage)
    else:
        interpret(facts.observations, facts)
    return facts


def run(check_cls, stage):
    return run_one(check_cls, facts_with(stage))


def static(check, status, message="static message"):
    return Finding(id=check, check=check, status=status, title=check, message=message)


ALL_OK = [ok(f"case-{i}") for i in range(12)] + [ok("jiterator-float32", "jit")]


# -- signatures ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,check", [
    ("RuntimeError: HIP error: invalid device function\nHIP kernel errors might be asynchronously reported",
     "gfx-not-in-torch-arch-list"),
    ("rocBLAS error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
     "gfx-not-in-torch-arch-list"),
    ("/tmp/comgr-ededb1/input/naive_conv.cpp:39:10: fatal error: 'limits' file not found", "hiprtc-headers-missing"),
    ("error: fatal error: 'type_traits' file not found", "hiprtc-headers-missing"),
])
def test_signature_matches_name_the_static_check(text, check):
    assert check in {m["check"] for m in signature_matches(text)}


def test_no_signature_in_an_unrelated_error():
    assert signature_matches("ValueError: something else") == []


# -- outcome → finding ---------------------------------------------------------------------------------------

def test_without_the_stage_every_kernel_check_skips():
    for cls in (gpu_confirm.GpuKernelsFailed, gpu_confirm.GpuKernelsWrongResult, gpu_confirm.GpuKernelCrash,
                gpu_confirm.GpuKernelHang, gpu_confirm.SdpaMathFallback, gpu_confirm.HsaOverrideKernelsFail):
        [finding] = run(cls, None)
        assert finding.status is Status.SKIP and "did not run" in finding.message


@pytest.mark.parametrize("record,check_cls,status,words", [
    ({"case": "mm-float16", "category": "matmul", "outcome": "error",
      "error": "RuntimeError: HIP error: invalid device function"},
     gpu_confirm.GpuKernelsFailed, Status.FAIL, ["1 of 2", "gfx-not-in-torch-arch-list"]),
    ({"case": "conv2d-fwd-bwd-float32", "category": "conv", "outcome": "wrong", "rel_err": 0.4,
      "rel_err_text": "0.4", "tol": 5e-3},
     gpu_confirm.GpuKernelsWrongResult, Status.FAIL, ["conv2d-fwd-bwd-float32", "0.4"]),
    ({"case": "mm-float32", "category": "matmul", "outcome": "crashed", "detail": "killed by SIGSEGV (11)",
      "stderr_tail": ["hipErrorNoBinaryForGpu: Unable to find code object"]},
     gpu_confirm.GpuKernelCrash, Status.FAIL, ["mm-float32", "SIGSEGV", "gfx-not-in-torch-arch-list"]),
    ({"case": "fft-complex64", "category": "fft", "outcome": "hung", "detail": "no result within 60 s"},
     gpu_confirm.GpuKernelHang, Status.FAIL, ["fft-complex64", "60 s"]),
])
def test_each_bad_outcome_has_its_finding(record, check_cls, status, words):
    stage = stage_of(suite_of(ok("alloc-fill", "memory"), record))
    [finding] = run(check_cls, stage)
    assert finding.status is status
    text = finding.message + "\n".join(finding.evidence) + "\n".join(finding.remediation)
    for word in words:
        assert word in text


def test_all_ok_gives_ok_findings():
    stage = stage_of(suite_of(*ALL_OK))
    for cls in (gpu_confirm.GpuKernelsFailed, gpu_confirm.GpuKernelsWrongResult, gpu_confirm.GpuKernelCrash,
                gpu_confirm.GpuKernelHang):
        [finding] = run(cls, stage)
        assert finding.status is Status.OK, finding
    [failed] = run(gpu_confirm.GpuKernelsFailed, stage)
    assert "13 operator kernels ran correctly on AMD Radeon RX 6650 XT (gfx1032)" in failed.message


def test_fatal_suite_fails_gpu_kernels_failed():
    stage = stage_of(suite_of(fatal={"stage": "startup", "error": "the kernel child crashed before listing its cases",
                                     "stderr_tail": ["Segmentation fault"]}))
    [finding] = run(gpu_confirm.GpuKernelsFailed, stage)
    assert finding.status is Status.FAIL and "could not start" in finding.message


def sdpa(case, outcome, reason=None, info=None):
    record = {"case": case, "category": "sdpa", "dtype": "float16", "outcome": outcome}
    if reason:
        record["reason"] = reason
    if info:
        record["info"] = info
    return record


def test_sdpa_served_only_by_math_warns_with_the_reasons():
    reason = "FLASH_ATTENTION not usable here: Flash attention was not compiled for current AMD GPU architecture"
    stage = stage_of(suite_of(
        sdpa("sdpa-flash-float16", "unavailable", reason),
        sdpa("sdpa-efficient-float16", "unavailable", "EFFICIENT_ATTENTION not usable here: ..."),
        sdpa("sdpa-cudnn-float16", "unavailable", "CUDNN_ATTENTION not usable here: ..."),
        sdpa("sdpa-math-float16", "ok"),
        sdpa("sdpa-default-float16", "ok", info={"chosen": "MATH"}),
    ))
    [finding] = run(gpu_confirm.SdpaMathFallback, stage)
    assert finding.status is Status.WARN
    assert "math backend" in finding.message and "MATH" in finding.message
    assert any("not compiled for current AMD GPU architecture" in line for line in finding.evidence)


def test_sdpa_with_flash_is_ok():
    stage = stage_of(suite_of(sdpa("sdpa-flash-float16", "ok"), sdpa("sdpa-math-float16", "ok"),
                              sdpa("sdpa-default-float16", "ok", info={"chosen": "FLASH_ATTENTION"})))
    [finding] = run(gpu_confirm.SdpaMathFallback, stage)
    assert finding.status is Status.OK and "flash" in finding.message


def test_sdpa_is_not_judged_on_the_cpu_device():
    stage = stage_of(suite_of(sdpa("sdpa-math-float16", "ok"), device_type="cpu"))
    [finding] = run(gpu_confirm.SdpaMathFallback, stage)
    assert finding.status is Status.SKIP


# -- confirm / refute ----------------------------------------------------------------------------------------

def test_all_kernels_ok_refutes_a_gfx_arch_fail():
    stage = stage_of(suite_of(*ALL_OK))
    [finding] = apply_kernel_evidence([static("gfx-not-in-torch-arch-list", Status.FAIL)], stage)
    assert finding.status is Status.WARN and finding.message == "static message"
    assert finding.refuted_by == [{"kind": "gpu-kernels", "detail": "13 kernels ran correctly on the GPU",
                                   "status_before": "fail"}]


def test_jiterator_ok_refutes_hiprtc_headers_missing():
    stage = stage_of(suite_of(*ALL_OK))
    [finding] = apply_kernel_evidence([static("hiprtc-headers-missing", Status.WARN)], stage)
    assert finding.status is Status.INFO and "runtime-compiled kernels" in finding.refuted_by[0]["detail"]


def test_invalid_device_function_confirms_and_strengthens():
    failing = {"case": "mm-float16", "category": "matmul", "outcome": "error",
               "error": "RuntimeError: HIP error: invalid device function"}
    stage = stage_of(suite_of(ok("alloc-fill", "memory"), failing))
    evidence = gpu_confirm.GpuKernelsFailed().evidence_on(facts_with(stage))
    assert evidence["gfx-not-in-torch-arch-list"]["cases"] == ["mm-float16"]
    assert "refuted" not in evidence["gfx-not-in-torch-arch-list"]
    [finding] = apply_kernel_evidence([static("gfx-not-in-torch-arch-list", Status.WARN)], stage)
    assert finding.status is Status.FAIL and finding.confirmed_by[0]["cases"] == ["mm-float16"]
    assert finding.confirmed_by[0]["status_before"] == "warn"


def test_cpu_runs_and_failures_refute_nothing():
    cpu = stage_of(suite_of(*ALL_OK, device_type="cpu"))
    bad = stage_of(suite_of(*ALL_OK, {"case": "x", "category": "matmul", "outcome": "wrong"}))
    for stage in (cpu, bad):
        [finding] = apply_kernel_evidence([static("gfx-not-in-torch-arch-list", Status.FAIL)], stage)
        assert finding.status is Status.FAIL and finding.message == "static message"


def test_ok_findings_and_unrelated_checks_are_untouched():
    stage = stage_of(suite_of(*ALL_OK))
    findings = [static("gfx-not-in-torch-arch-list", Status.OK), static("python-version", Status.FAIL)]
    assert apply_kernel_evidence(findings, stage) == findings


def test_judge_replaces_the_skip_placeholders_and_applies_the_verdicts():
    facts = facts_with(None)
    placeholders = []
    for cls in (gpu_confirm.GpuKernelsFailed, gpu_confirm.SdpaMathFallback):
        placeholders += run_one(cls, facts)
    findings = placeholders + [static("gfx-not-in-torch-arch-list", Status.FAIL)]
    result = judge(findings, facts, stage_of(suite_of(*ALL_OK)))
    by_check = {}
    for f in result:
        by_check.setdefault(f.check, []).append(f)
    assert len(by_check["gpu-kernels-failed"]) == 1 and by_check["gpu-kernels-failed"][0].status is Status.OK
    assert by_check["gfx-not-in-torch-arch-list"][0].status is Status.WARN
    assert {"gpu-kernel-crash", "gpu-kernel-hang", "gpu-kernels-wrong-result"} <= set(by_check)


def test_case_verdicts_skip_when_the_suite_never_started():
    from rocm_doctor.engine.engine import run_one
    from rocm_doctor.engine.registry import load_registry
    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations

    registry = load_registry(include_plugins=False)
    facts = Facts(Observations())
    facts.set("platform.os", "linux")
    facts.set("gpu.kernels", {"ran": True, "device": "cuda",
                              "suite": {"fatal": {"stage": "device", "error": "no GPU"}, "results": [], "hello": {}}})
    statuses = {check_id: run_one(registry.by_id(check_id), facts)[0].status.value
                for check_id in ("gpu-kernels-failed", "gpu-kernel-crash", "gpu-kernel-hang", "gpu-kernels-wrong-result")}
    assert statuses["gpu-kernels-failed"] == "fail"
    assert {statuses[c] for c in ("gpu-kernel-crash", "gpu-kernel-hang", "gpu-kernels-wrong-result")} == {"skip"}
