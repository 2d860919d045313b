"""HSA_OVERRIDE_GFX_VERSION A/B and the AMD confirm stage, with fake children (real processes, fake torch side).

The fake interpreter ignores the child script and answers the JSON-lines protocol according to its environment:
HSA_OVERRIDE_GFX_VERSION=10.3.0 runs everything correctly, 11.0.0 returns wrong results, unset crashes on the
first kernel the way a torch without code for gfx1032 does.
"""

import json
import stat
import sys
import textwrap

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.gpu.kernels import ab
from rocm_doctor.gpu.kernels.stage import ConfirmOptions, confirm

import importlib

gpu_confirm = importlib.import_module("rocm_doctor.checks.gpu_confirm")

FAKE = textwrap.dedent('''
    import json, os, signal, sys

    def emit(event, **kw):
        kw["event"] = event
        sys.stdout.write(json.dumps(kw) + "\\n")
        sys.stdout.flush()

    payload = json.loads(sys.stdin.read())
    override = os.environ.get("HSA_OVERRIDE_GFX_VERSION")
    if os.environ.get("MIOPEN_ENABLE_LOGGING") == "1":
        sys.stderr.write("MIOpen(HIP): Info [ForwardBackwardDataGetWorkSpaceSize] fake log line\\n")
        sys.stderr.write("MIOpen(HIP): Info2 [CallGemm] rocBLAS\\n")
        sys.stderr.write("./rocblas-bench -f gemm_ex --transposeA N -m 512\\n")
    emit("start", pid=os.getpid())
    emit("hello", vendor="amd", device_type="cuda", device="cuda", hip="6.4", torch="2.9.0+rocm6.4",
         devices=[{"index": 0, "name": "AMD Radeon RX 6650 XT", "arch": "gfx1032"}],
         logging=os.environ.get("MIOPEN_ENABLE_LOGGING"))
    names = payload.get("cases") or ["alloc-fill", "arith-float32", "mm-float32", "mm-float16",
                                     "conv2d-fwd-bwd-float32", "jiterator-float32"]
    emit("plan", cases=[{"name": n, "category": "matmul" if n.startswith("mm") else "memory", "dtype": "float32"}
                        for n in names])
    for name in names:
        emit("begin", case=name)
        if override is None:
            sys.stderr.write("rocBLAS error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGABRT)
        if override == "11.0.0":
            emit("result", case=name, category="matmul", dtype="float32", outcome="wrong", rel_err=0.7,
                 rel_err_text="0.7", tol=1e-4)
        else:
            emit("result", case=name, category="matmul", dtype="float32", outcome="ok", rel_err=1e-7,
                 rel_err_text="1e-07", tol=1e-4)
    emit("done")
''')


@pytest.fixture
def fake_amd_python(tmp_path):
    script = tmp_path / "fake_child.py"
    script.write_text(FAKE)
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{script}'\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return str(python)


def base_env(**extra):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HSA_", "MIOPEN_", "ROCBLAS_", "AMD_LOG"))}
    env.update(extra)
    return env


def check_on(result):
    facts = Facts(Observations())
    facts.set("platform.os", "linux")
    facts.set("gpu.kernels", {"ran": True, "suite": {}, "override_ab": result})
    [finding] = run_one(gpu_confirm.HsaOverrideKernelsFail, facts)
    return finding


def test_wrong_override_recommended_value_works(fake_amd_python):
    result = ab.run_ab(fake_amd_python, env=base_env(HSA_OVERRIDE_GFX_VERSION="11.0.0"), recommended="10.3.0",
                       case_timeout_s=10, startup_timeout_s=20)
    rows = {row["label"]: row for row in result["variants"]}
    assert list(rows) == ["as set", "unset", "recommended"]
    assert not rows["as set"]["works"] and rows["as set"]["failed"][0]["outcome"] == "wrong"
    assert not rows["unset"]["works"] and rows["unset"]["failed"][0]["outcome"] == "crashed"
    assert rows["recommended"]["works"] and rows["recommended"]["ok"] == list(ab.CORE_CASES)
    assert result["current_works"] is False
    assert result["advice"] == "set HSA_OVERRIDE_GFX_VERSION=10.3.0"
    finding = check_on(result)
    assert finding.status is Status.FAIL
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0" in finding.message and "recommended" in finding.message
    assert finding.remediation[0].startswith("Set HSA_OVERRIDE_GFX_VERSION=10.3.0")


def test_no_override_but_one_is_needed(fake_amd_python):
    result = ab.run_ab(fake_amd_python, env=base_env(), recommended="10.3.0", case_timeout_s=10, startup_timeout_s=20)
    assert [row["label"] for row in result["variants"]] == ["unset", "recommended"]
    assert result["current_works"] is False and result["working"] == ["recommended"]
    assert check_on(result).status is Status.FAIL


def test_current_override_works(fake_amd_python):
    result = ab.run_ab(fake_amd_python, env=base_env(HSA_OVERRIDE_GFX_VERSION="10.3.0"), recommended="10.3.0",
                       case_timeout_s=10, startup_timeout_s=20)
    assert [row["label"] for row in result["variants"]] == ["as set", "unset"]
    assert result["current_works"] is True and result["advice"] is None
    assert check_on(result).status is Status.OK


@pytest.mark.parametrize("vendor,os_name,env,recommended,expected", [
    ("nvidia", "linux", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, None, False),
    ("amd", "windows", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, None, False),
    ("amd", "linux", {}, None, False),
    ("amd", "linux", {}, "10.3.0", True),
    ("amd", "wsl", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, None, True),
    ("cpu", "linux", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, None, False),
])
def test_when_the_ab_runs(vendor, os_name, env, recommended, expected):
    assert ab.should_run(vendor, os_name, env, recommended)[0] is expected


def test_recommended_value_comes_from_the_knowledge_module():
    assert ab.recommended_override("gfx1032") == "10.3.0"
    assert ab.recommended_override(None) is None


def test_confirm_on_a_fake_amd_gpu_runs_logs_and_ab(fake_amd_python):
    facts = Facts(Observations(env=base_env()))
    facts.set("platform.os", "linux")
    facts.set("torch.devices", [{"gcnArchName": "gfx1032"}])
    stage = confirm(facts, ConfirmOptions(python=fake_amd_python, env=base_env(HSA_OVERRIDE_GFX_VERSION="10.3.0"),
                                          case_timeout_s=10, startup_timeout_s=20))
    suite = stage["suite"]
    assert stage["vendor"] == "amd" and suite["counts"]["ok"] == 6
    assert suite["hello"]["logging"] is None  # logging variables only in the log child
    logs = stage["library_logs"]
    assert logs["ran"] and logs["variables"]["MIOPEN_ENABLE_LOGGING"] == "1"
    assert logs["lines_by_library"] == {"MIOpen": 2, "rocBLAS": 1}
    assert "CallGemm" in logs["log"]
    assert stage["override_ab"]["gfx"] == "gfx1032" and stage["override_ab"]["current_works"] is True
    # jiterator ok on the GPU: a static hiprtc-headers-missing finding would be refuted
    facts.set("gpu.kernels", stage)
    assert gpu_confirm.GpuKernelsFailed().evidence_on(facts)["hiprtc-headers-missing"]["refuted"]
    json.dumps(stage)  # the stage goes into the JSON report as is


def test_the_ab_takes_the_real_gfx_not_the_one_an_override_makes_torch_report():
    """Under HSA_OVERRIDE_GFX_VERSION=11.0.0 torch reports gfx1100 for a gfx1032 card: the A/B must still try the
    value recommended for gfx1032 (10.3.0)."""
    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.gpu.kernels import ab
    from rocm_doctor.gpu.kernels.stage import gpu_gfx
    from rocm_doctor.interpret import gpu_targets

    env = {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    facts = Facts(Observations(env=env))
    facts.set("gpu.inventory", [{"index": 0, "node": 1, "gfx": "gfx1100", "igpu": False, "name": "RX 6650 XT",
                                 "sources": {"kfd": "gfx1032", "rocminfo": "gfx1100"}}])
    gpu_targets.interpret(facts.observations, facts)
    suite = {"hello": {"devices": [{"arch": "gfx1100"}]}}
    assert gpu_gfx(facts, suite) == "gfx1032"
    values = [v["value"] for v in ab.variants(env, ab.recommended_override(gpu_gfx(facts, suite)))]
    assert values == ["11.0.0", None, "10.3.0"]


def test_the_ab_takes_the_recommendation_gpu_targets_computed():
    """The stage reads the override gpu.targets recommended for the real gfx instead of computing its own; without
    GPU targets (a stage-only `kernels`) it looks one up for the gfx torch reported."""
    from rocm_doctor.gpu.kernels.stage import recommended_for

    facts = Facts(Observations())
    facts.set("gpu.targets", [{"real_gfx": "gfx1032", "recommended_override": "as-computed"}])
    assert recommended_for(facts, "gfx1032") == "as-computed"
    assert recommended_for(Facts(Observations()), "gfx1032") == "10.3.0"
    assert recommended_for(facts, None) is None
