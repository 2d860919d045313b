"""The torch family end to end: replayed snapshots built from the real cases, each with the family mismatch as the
first root cause, the nms error folded under it, and one pip install of torch with its companions as the plan; the
healthy machines raise nothing from the family check."""

import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
CHECK = "torch-family-mismatch"

# snapshot, {where in the snapshot: fixture it holds verbatim}, the plan's packages, index, extra arguments
SCENARIOS = [
    ("linux-mi300x-rocm7.1-nightly-torch-reinstalled-stale-torchvision-0.26.0-log",
     {"probes/user.log": "pip/linux-mi325x-rocm7.1-nightly-torch-reinstalled-stale-torchvision-0.26.0-requires-torch-"
                         "2.11.0-excerpt.txt"},
     ["torch", "torchvision"], "https://download.pytorch.org/whl/nightly/rocm7.1", ["--force-reinstall", "--pre"]),
    ("linux-mi300x-rocm-pytorch-image-torch2.9.1-rocm7.2.1-pypi-torchvision-0.24.1",
     {"torch-family/torchvision": "errors/linux-rocm-pytorch-docker-torch2.9.1-rocm7.2.1-torchvision-0.24.1-import-nms-"
                                  "does-not-exist.txt"},
     ["torch", "torchvision"], "https://download.pytorch.org/whl/rocm7.14", ["--force-reinstall"]),
]
HEALTHY = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy", "linux-2x-h200-cuda-torch2.11",
           "linux-h200-live-state-idle-healthy"]



def observed(snapshot: dict, where: str) -> str:
    kind, _, key = where.partition("/")
    observations = snapshot["observations"]
    if kind == "probes":
        return observations["probes"][key]["text"]
    records = [json.loads(line) for line in observations["commands"][kind]["stdout"].splitlines()]
    return next(r["traceback"] for r in records if r.get("stage") == "import" and r.get("module") == key)


@pytest.mark.parametrize("name,verbatim,packages,index,extra", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_the_family_mismatch_comes_first_with_one_install(replayed, name, verbatim, packages, index, extra):
    snapshot = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
    for where, fixture in verbatim.items():
        assert observed(snapshot, where) == (FIXTURES / fixture).read_text(encoding="utf-8"), where
    document = replayed(name)
    first = document["diagnosis"]["root_causes"][0]
    assert first["finding"] == CHECK, [r["finding"] for r in document["diagnosis"]["root_causes"]]
    assert "known-error-signatures:torchvision-nms-missing" in first["symptoms"]
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    (step,) = [steps[i] for i in first["plan"]]
    assert (step["kind"], step["packages"], step["index_url"], step["extra_args"]) == \
        ("pip_install", packages, index, extra)
    finding = next(f for f in document["findings"] if f["id"] == CHECK)
    assert any(item["kind"] == "error-message" for item in finding["confirmed_by"])


def test_the_stale_torchvision_names_both_versions_and_the_log(replayed):
    document = replayed(SCENARIOS[0][0])
    message = next(f for f in document["findings"] if f["id"] == CHECK)["message"]
    assert "torchvision 0.26.0" in message and "requires torch==2.11.0" in message
    assert "2.12.0.dev20260411+rocm7.1" in message and "read from the log torchtitan-ci.log" in message


def test_fix_dry_run_plans_the_same_install(doctor, replayed):
    name = SCENARIOS[1][0]
    document = replayed(name)
    dry = doctor("fix", "--dry-run", "--json", "--from", str(SNAPSHOTS / f"{name}.json"))
    assert [s["id"] for s in json.loads(dry.stdout)["steps"]] == [i["id"] for i in document["diagnosis"]["plan"]]


def test_markdown_lists_the_family(doctor, tmp_path):
    name = SCENARIOS[1][0]
    out = tmp_path / "report.md"
    result = doctor("report", "--from", str(SNAPSHOTS / f"{name}.json"), "--format", "markdown", "-o", str(out))
    assert result.returncode in (0, 1), result.stderr
    assert "- PyTorch packages: `torch==2.9.1+rocm7.2.1.lw.gitff65f5bc`, `torchvision==0.24.1`" in out.read_text()


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_machines_raise_nothing_from_the_family_check(replayed, name):
    findings = [f for f in replayed(name)["findings"] if f["check"] == CHECK]
    assert all(f["status"] in ("ok", "info", "skip") for f in findings), findings
