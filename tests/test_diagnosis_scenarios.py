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


def test_a_uuid_that_matches_no_gpu_is_not_explained_by_a_guess():
    """Nothing observed ties torch's failure to the UUID yet: torch-cuda-unavailable stays the root cause rather
    than a plausible-sounding one."""
    found = relinked("check-cuda-visible-devices-unknown-uuid.json")
    assert [r.finding.check for r in found.root_causes] == ["torch-cuda-unavailable"]


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
