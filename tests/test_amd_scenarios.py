"""AMD scenarios end to end: replayed snapshots built from the real fixtures (the real problem comes first, with the
fix that worked in the fixture's thread), the real 2x H200 and healthy Instinct nodes (no false alarm), and live
runs with fake rocminfo on PATH and a fake torch in the target interpreter."""

import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
AMD_CHECKS = {"gpu-inventory", "igpu-enumerated-first", "gfx-support-matrix", "gfx-not-in-torch-arch-list",
              "hsa-override-gfx-version", "hip-runtime-mismatch", "rocm-paths", "rocm-device-access",
              "rocm-kernel-driver", "wsl-rocm-support", "rocblas-library-coverage", "known-error-signatures"}

# snapshot, fixture its tool output comes from, first finding's id, a fix the thread confirmed (in its remediation)
SCENARIOS = [
    ("linux-rx6600xt-gfx1032-cpu-torch", "rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt",
     "torch-build-mismatch", "torch[device-gfx1032]"),
    ("linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032",
     "rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt",
     "gfx-not-in-torch-arch-list:0", "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("linux-rx6600xt-gfx1032-override-11.0.0", None, "hsa-override-gfx-version:0",
     "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-cpu-torch",
     "rocminfo/linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt",
     "torch-build-mismatch", "download.pytorch.org/whl/rocm"),
    ("linux-container-podman-rx6600xt-kfd-permission-denied-nogroup",
     "rocminfo/container-ubuntu-on-opensuse-podman-kfd-permission-denied-nogroup.txt",
     "rocm-device-access", "--group-add GID, where GID is the render group's number on the host"),
    ("wsl-rx7800xt-rocm6.4.2-no-wsl-build-out-of-resources",
     "rocminfo/wsl-rx7800xt-rocm6.4.2-no-wsl-build-out-of-resources.txt", "wsl-rocm-support", "6.4.2.1"),
    ("wsl-rx7600xt-rocm6.2.3-unsupported-gpu", "rocminfo/wsl-rx7600xt-rocr-unsupported-gpu-rocm6.2.3.txt",
     "wsl-rocm-support", "native Linux"),
    ("wsl-2021-rx580-rock-not-loaded", "rocminfo/wsl2-2021-rx580-rock-not-loaded-no-dev-kfd.txt",
     "wsl-rocm-support", "--usecase=wsl,rocm"),
]
HEALTHY = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy", "linux-2x-h200-cuda-torch2.11"]


def replay(doctor, name, *extra):
    return replay_document(doctor, name, *extra)["findings"]


def replay_document(doctor, name, *extra):
    result = doctor("check", "--from", str(SNAPSHOTS / f"{name}.json"), "--json", *extra)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def what_is_wrong(doctor, name):
    """The human report's "What is wrong" section: root causes, their steps and alternatives, what they explain."""
    result = doctor("check", "--from", str(SNAPSHOTS / f"{name}.json"))
    assert result.returncode in (0, 1), result.stderr
    text = result.stdout
    return text[text.index("WHAT IS WRONG"):].split("\n\n", 1)[0]


@pytest.mark.parametrize("name,fixture,first,fix", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_real_problem_comes_first_with_the_fix_that_worked(doctor, name, fixture, first, fix):
    if fixture:  # the tool output in the snapshot is the fixture, verbatim
        snap = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
        assert snap["observations"]["commands"]["rocminfo"]["stdout"] == (FIXTURES / fixture).read_text(encoding="utf-8")
    document = replay_document(doctor, name)
    roots = document["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == first, [(r["finding"], r["status"]) for r in roots]
    assert roots[0]["status"] == "fail"
    assert fix in what_is_wrong(doctor, name)


def test_cpu_torch_on_gfx1032_plans_one_install_and_no_override(doctor):
    """The torch build is the cause; the arch-list warning about the ROCm wheels is its symptom, so the override
    that only the stock ROCm wheel would need is not planned next to a wheel that builds gfx1032 natively."""
    document = replay_document(doctor, "linux-rx6600xt-gfx1032-cpu-torch")
    (root,) = document["diagnosis"]["root_causes"]
    assert root["finding"] == "torch-build-mismatch"
    assert "gfx-not-in-torch-arch-list:0" in root["symptoms"]
    steps = [item["step"] for item in document["diagnosis"]["plan"]]
    assert [s["kind"] for s in steps] == ["pip_install"] and steps[0]["packages"] == ["torch[device-gfx1032]"]


def test_rx6600xt_without_gfx1032_code_is_one_cause_with_one_plan_everywhere(doctor, tmp_path):
    name = "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032"
    document = replay_document(doctor, name)
    (root,) = document["diagnosis"]["root_causes"]
    assert root["finding"] == "gfx-not-in-torch-arch-list:0"
    assert set(root["symptoms"]) == {"rocblas-library-coverage:0-rocblas", "hsa-override-gfx-version:0",
                                     "gfx-support-matrix:0"}
    plan_ids = [item["id"] for item in document["diagnosis"]["plan"]]
    assert root["plan"] == plan_ids and len(plan_ids) == 1
    assert any(a["workaround"] and "HSA_OVERRIDE_GFX_VERSION" in a["steps"][0]["summary"] for a in root["alternatives"])
    dry = doctor("fix", "--dry-run", "--json", "--from", str(SNAPSHOTS / f"{name}.json"))
    assert [s["id"] for s in json.loads(dry.stdout)["steps"]] == plan_ids
    out = tmp_path / "r.json"
    doctor("report", "--from", str(SNAPSHOTS / f"{name}.json"), "-o", str(out))
    assert [i["id"] for i in json.loads(out.read_text())["diagnosis"]["plan"]] == plan_ids


def test_override_scenario_explains_the_disagreement_and_judges_the_real_gfx(doctor):
    findings = {f["id"]: f for f in replay(doctor, "linux-rx6600xt-gfx1032-override-11.0.0")}
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0 is in effect" in findings["gpu-inventory"]["message"]
    assert "gfx1032" in findings["gfx-not-in-torch-arch-list:0"]["message"]
    assert any("~/.bashrc:118" in e for e in findings["hsa-override-gfx-version:0"]["evidence"])


def test_dgpu_enumerated_first_in_the_rx6800_fixture(doctor):
    findings = {f["id"]: f for f in replay(doctor, "linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-cpu-torch")}
    assert findings["igpu-enumerated-first"]["status"] == "ok"
    assert "gfx90c (integrated)" in " ".join(findings["gpu-inventory"]["evidence"])


@pytest.mark.parametrize("name", HEALTHY)
def test_no_false_alarm_on_healthy_machines(doctor, name):
    alarms = [(f["id"], f["status"], f["message"]) for f in replay(doctor, name)
              if f["check"] in AMD_CHECKS and f["status"] in ("warn", "fail", "error")]
    assert alarms == []


def test_override_on_windows_is_left_to_the_windows_check(doctor):
    findings = {f["check"]: f for f in replay(doctor, "windows-hsa-override")}
    assert findings["hsa-override-gfx-version"]["status"] == "skip"
    assert findings["hsa-override-on-windows"]["status"] == "warn"
    assert not [f for f in findings.values() if f["check"] in AMD_CHECKS and f["status"] in ("fail", "error")]


FAKE_TORCH = '''
__version__ = "{version}"
class version:
    hip = {hip!r}
    cuda = None
class _Props:
    name = "AMD Radeon RX 6650 XT"
    gcnArchName = "gfx1032"
    total_memory = 8573157376
    is_integrated = 0
class cuda:
    is_available = staticmethod(lambda: {available})
    device_count = staticmethod(lambda: 1 if {available} else 0)
    get_arch_list = staticmethod(lambda: {archs!r})
    get_device_properties = staticmethod(lambda index: _Props())
'''
ROCM63 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200",
          "gfx1201"]


@pytest.mark.parametrize("version,hip,available,expected", [
    ("2.7.1+rocm6.3", "6.3.42131-fa1d09cbd", True, {"gfx-not-in-torch-arch-list:0": "fail",
                                                    "hsa-override-gfx-version:0": "warn"}),
    ("2.5.1+cpu", None, False, {"gfx-not-in-torch-arch-list:0": "warn", "hsa-override-gfx-version": "ok"}),
])
def test_live_gfx1032_with_fake_rocminfo_and_fake_torch(doctor, fake_bin, fake_python, isolated_env, version, hip,
                                                        available, expected):
    fake_bin.add_output("rocminfo", "rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt")
    fake_bin.add("hipconfig", "exit 127\n")
    python = fake_python(FAKE_TORCH.format(version=version, hip=hip, available=available, archs=ROCM63))
    result = doctor("check", "--json", "--no-gpu", "--python", str(python), env=isolated_env)
    findings = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert {k: findings[k]["status"] for k in expected} == expected
    assert findings["gpu-inventory"]["message"].startswith("1 AMD GPU: AMD Radeon RX 6600 XT gfx1032")


def test_check_log_matches_a_users_log_and_replays(doctor, tmp_path, isolated_env):
    log = FIXTURES / "errors/steamdeck-gfx1033-torch-hipErrorNoBinaryForGpu-abort.txt"
    result = doctor("check", "--from", str(SNAPSHOTS / "linux-rx6600xt-gfx1032-cpu-torch.json"), "--json",
                    "--log", str(log), "--only", "known-error-signatures")
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["id"] == "known-error-signatures:hip-no-binary-for-gpu"
    assert "gfx-not-in-torch-arch-list" in finding["message"]
    missing = doctor("check", "--from", str(SNAPSHOTS / "linux-mi300x-vf-gfx942-healthy.json"),
                     "--log", str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and "nope.log" in missing.stderr


def test_probes_record_paths_libraries_and_rc_lines(tmp_path):
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.interpret import interpret
    from rocm_doctor.probes import rocm_libs, rocm_paths, shell_rc
    from rocm_doctor.probes._base import ProbeContext, Recorder

    home = tmp_path / "home"
    (home / ".config/fish").mkdir(parents=True)
    (home / ".bashrc").write_text("# HSA_OVERRIDE_GFX_VERSION=9.0.0\nexport HSA_OVERRIDE_GFX_VERSION=10.3.0\nexport TOKEN=x\n")
    site = tmp_path / "venv/lib/python3.12/site-packages/torch/lib/rocblas/library"
    site.mkdir(parents=True)
    for name in ("TensileLibrary_lazy_gfx1030.dat", "Kernels.so-000-gfx90a-xnack-.hsaco"):
        (site / name).write_text("")
    env = {"HOME": str(home), "PATH": f"/nonexistent/rocm-5.7/bin:{tmp_path}", "ROCM_PATH": str(tmp_path / "rocm")}
    context = ProbeContext(python=str(tmp_path / "venv/bin/python"), python_reason="test", platform_os="linux", env=env)
    observations = Observations(platform={"os": "linux"}, env=env)
    for probe in (rocm_libs, rocm_paths, shell_rc):
        probe.collect(Recorder(observations, context))
    facts = interpret(observations)
    assert facts["shell.rc_lines"] == [{"file": "~/.bashrc", "line_no": 2, "variable": "HSA_OVERRIDE_GFX_VERSION",
                                        "line": "export HSA_OVERRIDE_GFX_VERSION=10.3.0"}]
    torch_rocblas = next(f for f in facts["rocm.libraries"] if f["owner"] == "torch" and f["library"] == "rocblas")
    assert torch_rocblas["gfx"] == ["gfx1030", "gfx90a"]
    assert [e["exists"] for e in facts["rocm.paths"]["PATH"]] == [False, True]
    assert facts["rocm.paths"]["installs"][0] == {"path": str(tmp_path / "rocm"), "exists": False, "active": False}


def test_the_real_h200_machine_replays_without_any_problem(doctor):
    """Recorded on 2x NVIDIA H200 by `rocm-doctor snapshot`: nothing at warn or above, from any check."""
    findings = replay(doctor, "linux-2x-h200-cuda-torch2.11")
    assert [f["id"] for f in findings if f["status"] in ("warn", "fail", "error")] == []
    assert {f["id"]: f["status"] for f in findings}["torch-cuda-unavailable"] == "ok"
