"""One cause, several symptoms: the cause leads the diagnosis with the symptoms folded under it.

Two sources: `check --json` outputs recorded on a real NVIDIA H200 set up the way users' machines often are
(tests/fixtures/h200, 2026-12-01, benchmarks/run_diagnosis_scenarios.sh), re-linked with today's relations; and
replayed AMD snapshots built from real outputs of public threads.
"""

import json
from pathlib import Path

import pytest

from rocm_doctor.engine import diagnosis, relations
from rocm_doctor.engine.model import Finding
from rocm_doctor.engine.registry import load_registry

H200 = Path(__file__).parent / "fixtures" / "h200"
SNAPSHOTS = Path(__file__).parent / "snapshots"


def relinked(name):
    """The recorded findings with their relations cleared, linked again and diagnosed."""
    recorded = json.loads((H200 / name).read_text(encoding="utf-8"))
    findings = [Finding.from_dict(f) for f in recorded["findings"]]
    relations.link(findings, load_registry(include_plugins=False).checks)
    return diagnosis.build(findings)


def test_an_empty_visibility_variable_explains_torch_seeing_no_gpu():
    found = relinked("check-cuda-visible-devices-empty.json")
    (root,) = found.root_causes
    assert root.finding.id == "gpu-visibility-env:CUDA_VISIBLE_DEVICES"
    assert root.symptoms == ["torch-cuda-unavailable"]


def test_the_visibility_cause_plans_unsetting_the_variable():
    from rocm_doctor.testing import Case, run_case

    (finding,) = run_case(Case(check="gpu-visibility-env", env={"CUDA_VISIBLE_DEVICES": ""},
                               expect={"gpu-visibility-env:CUDA_VISIBLE_DEVICES": "fail"}))
    found = diagnosis.build([finding])
    (step,) = [found.plan.by_id(i).step for i in found.root_causes[0].plan]
    assert step.kind == "unset_env" and step.name == "CUDA_VISIBLE_DEVICES"


def test_a_malformed_allocator_configuration_explains_the_kernel_crashes_and_the_sdpa_fallback():
    found = relinked("check-alloc-conf-malformed.json")
    root = found.root_causes[0]
    assert root.finding.id == "alloc-conf-invalid:PYTORCH_CUDA_ALLOC_CONF"
    assert {"gpu-kernel-crash", "gpu-kernels-failed", "sdpa-math-fallback"} <= set(root.symptoms)
    assert len(found.root_causes) == 1 and found.verdict == "broken"


def replay(doctor, name):
    result = doctor("check", "--from", str(SNAPSHOTS / f"{name}.json"), "--json")
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)["diagnosis"]


@pytest.mark.parametrize("name,root,symptoms", [
    # the wrong-family override is the cause: with 10.3.0, torch's gfx1030 code runs on gfx1032
    ("linux-rx6600xt-gfx1032-override-11.0.0", "hsa-override-gfx-version:0", {"gfx-not-in-torch-arch-list:0"}),
    ("linux-rx6600xt-gfx1032-cpu-torch", "torch-build-mismatch", {"gfx-not-in-torch-arch-list:0"}),
    ("windows-no-device", "windows-gpu-not-enumerated", {"torch-cuda-unavailable"}),
])
def test_the_cause_leads_with_its_symptoms_folded(doctor, name, root, symptoms):
    found = replay(doctor, name)
    assert found["root_causes"][0]["finding"] == root, [r["finding"] for r in found["root_causes"]]
    assert symptoms <= set(found["root_causes"][0]["symptoms"])


def test_the_human_report_leads_with_the_cause_and_nests_its_symptoms(doctor):
    result = doctor("check", "--from", str(SNAPSHOTS / "linux-rx6600xt-gfx1032-override-11.0.0.json"))
    text = result.stdout
    wrong = text.index("WHAT IS WRONG")
    first = text.index(" 1. ", wrong)
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0" in text[first:text.index("\n", first)]
    assert text.index("This also explains:", first) < text.index("\n\n", first)
    assert "export HSA_OVERRIDE_GFX_VERSION=10.3.0" in text[first:text.index("\n\n", first)]


def finding(fid, status="fail"):
    from rocm_doctor.engine.model import Status

    return Finding(id=fid, check=fid.split(":")[0], status=Status(status), title=fid, message=fid)


@pytest.mark.parametrize("cause,symptoms", [
    ("gpu-visibility-env:HIP_VISIBLE_DEVICES", ["torch-cuda-unavailable", "gpu-kernel-crash", "bench-matmul-low"]),
    ("alloc-conf-invalid:PYTORCH_HIP_ALLOC_CONF", ["gpu-kernel-crash", "gpu-kernels-failed", "bench-section-failed"]),
    ("hsa-override-gfx-version:0", ["gpu-kernel-hang", "hsa-override-kernels-fail", "torch-probe-crashed"]),
    ("gfx-not-in-torch-arch-list:0", ["rocblas-library-coverage:0-rocblas", "gpu-kernels-failed"]),
    ("torch-build-mismatch", ["torch-cuda-unavailable", "gfx-not-in-torch-arch-list:0", "gpu-kernels-failed"]),
    ("torch-probe-crashed", ["torch-cuda-unavailable"]),
    ("rocm-device-access", ["torch-cuda-unavailable", "torch-probe-crashed", "gpu-kernels-failed"]),
    ("rocm-kernel-driver", ["rocm-device-access", "torch-cuda-unavailable"]),
    ("wsl-rocm-support", ["torch-cuda-unavailable", "rocm-device-access"]),
    ("windows-gpu-not-enumerated", ["torch-cuda-unavailable"]),
    ("amd-display-driver-missing", ["windows-gpu-not-enumerated", "torch-cuda-unavailable"]),
    ("dll-shadowing", ["hip-runtime-loaded-twice", "torch-cuda-unavailable"]),
    ("gpu-kernel-crash", ["sdpa-math-fallback", "bench-sdpa-math-only"]),
])
def test_each_declared_relation_puts_the_cause_first(cause, symptoms):
    findings = [finding(s) for s in symptoms] + [finding(cause)]
    relations.link(findings, load_registry(include_plugins=False).checks)
    found = diagnosis.build(findings)
    assert [r.finding.id for r in found.root_causes] == [cause]
    assert sorted(found.root_causes[0].symptoms) == sorted(symptoms)


def test_a_warning_of_the_override_check_explains_nothing():
    findings = [finding("hsa-override-gfx-version:0", "warn"), finding("gpu-kernel-crash")]
    relations.link(findings, load_registry(include_plugins=False).checks)
    assert len(diagnosis.build(findings).root_causes) == 2


def test_a_cycle_of_explanations_keeps_one_root():
    findings = [finding("rocm-kernel-driver"), finding("rocm-device-access"), finding("wsl-rocm-support")]
    relations.link(findings, load_registry(include_plugins=False).checks)
    roots = diagnosis.build(findings).root_causes
    assert len(roots) == 1 and len(roots[0].symptoms) == 2


def test_a_schema_1_report_still_replays_into_a_diagnosis(doctor, tmp_path):
    """Reports written before the diagnosis existed: no `diagnosis`, no relation fields on the findings."""
    new = tmp_path / "new.json"
    doctor("report", "--from", str(SNAPSHOTS / "linux-rx6600xt-gfx1032-cpu-torch.json"), "-o", str(new))
    old = json.loads(new.read_text(encoding="utf-8"))
    old["schema_version"] = 1
    old.pop("diagnosis")
    for item in old["findings"]:
        for key in ("alternatives", "caused_by", "explains", "confirmed_by", "refuted_by"):
            item.pop(key)
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    result = doctor("check", "--from", str(tmp_path / "old.json"), "--json")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["diagnosis"]["root_causes"][0]["finding"] == "torch-build-mismatch"


def test_every_json_output_has_the_same_envelope(doctor, tmp_path):
    outputs = {
        "diagnosis": doctor("check", "--from", str(SNAPSHOTS / "windows-no-device.json"), "--json"),
        "fix-plan": doctor("fix", "--dry-run", "--json", "--from", str(SNAPSHOTS / "windows-hsa-override.json")),
        "checks": doctor("checks", "--json"),
        "kernels": doctor("kernels", "--device", "cpu", "--only", "norm", "--json"),
    }
    for kind, result in outputs.items():
        document = json.loads(result.stdout)
        assert (document["kind"], document["schema_version"]) == (kind, 2), kind
        assert document["tool"]["name"] == "rocm-doctor" and document["generated_at"]


def test_fix_takes_an_alternative_by_its_step_id(doctor):
    snapshot = str(SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json")
    plan = json.loads(doctor("fix", "--dry-run", "--json", "--from", snapshot).stdout)
    (root,) = json.loads(doctor("check", "--from", snapshot, "--json").stdout)["diagnosis"]["root_causes"]
    workaround = next(a for a in root["alternatives"] if a["workaround"])["steps"][0]["id"]
    assert workaround not in [s["id"] for s in plan["steps"]]
    chosen = json.loads(doctor("fix", "--dry-run", "--json", "--from", snapshot, "--only", workaround).stdout)
    assert [(s["id"], s["step"]["value"]) for s in chosen["steps"]] == [(workaround, "10.3.0")]
    text = doctor("fix", "--dry-run", "--from", snapshot).stdout
    assert "Not planned" in text and workaround in text


def test_a_machine_without_any_gpu_is_not_called_healthy():
    from rocm_doctor.engine.diagnosis import no_gpu_seen
    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations

    def facts_of(os_name="linux", **values):
        facts = Facts(Observations())
        facts.set("platform.os", os_name)
        for key, value in values.items():
            facts.set(key.replace("_", "."), value)
        return facts

    bare = facts_of(**{"gpu_pci": [], "gpu_inventory": [], "torch_available": False})
    assert "no AMD or NVIDIA GPU" in no_gpu_seen(bare)
    assert diagnosis.build([], no_gpu=no_gpu_seen(bare)).verdict == "no-gpu"
    assert no_gpu_seen(facts_of("wsl", **{"gpu_pci": [], "gpu_inventory": []})) is None  # WSL hides the PCI GPUs
    assert no_gpu_seen(facts_of(**{"gpu_pci": [{"vendor": "nvidia"}], "gpu_inventory": []})) is None
    assert no_gpu_seen(facts_of(**{"gpu_inventory": []})) is None  # no PCI reading: cannot tell
    assert diagnosis.build([]).verdict == "healthy"
