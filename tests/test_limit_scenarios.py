"""When torch says nothing: snapshots recorded on a real NVIDIA H200 (benchmarks/run_limit_scenarios.sh,
2026-12-01) in the situations job scripts and typos set up, replayed with `check --from`, and the recorded
`check --json` findings of the two whose kernels failed, linked again with today's relations. Each must lead with
the cause and plan its step; the plain machine raises nothing but its own missing bytecode (PYTHONDONTWRITEBYTECODE=1
is set in that image)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocm_doctor.engine import diagnosis, relations
from rocm_doctor.engine.model import Finding
from rocm_doctor.engine.registry import load_registry

H200 = Path(__file__).parent / "fixtures" / "h200"
PROBLEMS = ("warn", "fail", "error")
IMAGE = "torch-bytecode-not-cached"  # true of that machine's image in every situation


def causes(report):
    return [r for r in report["diagnosis"]["root_causes"] if r["finding"] != IMAGE]


def test_the_plain_machine_raises_nothing_else(replayed):
    report = replayed("linux-h200-limits-healthy")
    assert [f["id"] for f in report["findings"] if f["status"] in PROBLEMS] == [IMAGE]
    runtime = next(f for f in report["findings"] if f["check"] == "gpu-runtime-refuses")
    assert runtime["status"] == "ok" and "cuInit() = ok" in runtime["message"]


@pytest.mark.parametrize("name, root, symptoms, step", [
    ("linux-h200-ulimit-v-8gib", "process-address-space-limited:RLIMIT_AS",
     {"gpu-runtime-refuses:cuda-driver", "torch-cuda-unavailable"}, "advice"),
    ("linux-h200-cuda-visible-devices-0-0", "gpu-visibility-env:CUDA_VISIBLE_DEVICES",
     {"gpu-runtime-refuses:cuda-driver", "torch-cuda-unavailable"}, "unset_env"),
    ("linux-h200-ulimit-n-32", "process-open-files-limited", set(), "advice"),
    ("linux-h200-taskset-one-cpu", "process-cpus-restricted", set(), None),
    ("linux-h200-cuda-force-ptx-jit", "gpu-library-logging-enabled:CUDA_FORCE_PTX_JIT", set(), "unset_env"),
    ("linux-h200-cuda-visible-device-misspelt", "env-name-misspelt:CUDA_VISIBLE_DEVICE", set(), "set_env"),
])
def test_the_cause_comes_first_with_its_step(replayed, name, root, symptoms, step):
    report = replayed(name)
    first = causes(report)[0]
    assert first["finding"] == root
    assert set(first["symptoms"]) == symptoms
    kinds = [s["step"]["kind"] for s in report["diagnosis"]["plan"] if s["id"] in first["plan"]]
    assert (kinds[0] if kinds else None) == step


def test_the_runtime_names_what_torch_did_not(replayed):
    report = replayed("linux-h200-ulimit-v-8gib")
    runtime = next(f for f in report["findings"] if f["id"] == "gpu-runtime-refuses:cuda-driver")
    assert "cuInit() returned CUDA_ERROR_OUT_OF_MEMORY (2)" in runtime["message"]
    torch = next(f for f in report["findings"] if f["id"] == "torch-cuda-unavailable")
    assert "CUDA_ERROR_OUT_OF_MEMORY" in " ".join(torch["evidence"])


def relinked(name):
    recorded = json.loads((H200 / name).read_text(encoding="utf-8"))
    findings = [Finding.from_dict(f) for f in recorded["findings"]]
    relations.link(findings, load_registry(include_plugins=False).checks)
    return diagnosis.build(findings)


@pytest.mark.parametrize("name, root, symptoms", [
    ("check-ulimit-n-32.json", "process-open-files-limited", {"gpu-kernels-failed", "sdpa-math-fallback"}),
    ("check-cuda-force-ptx-jit.json", "gpu-library-logging-enabled:CUDA_FORCE_PTX_JIT", {"gpu-kernels-failed"}),
])
def test_the_failed_kernels_fold_under_the_cause(name, root, symptoms):
    found = relinked(name)
    first = next(r for r in found.root_causes if r.finding.id != IMAGE)
    assert first.finding.id == root and set(first.symptoms) == symptoms
