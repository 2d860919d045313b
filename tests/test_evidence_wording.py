"""Evidence, not guesses: a check names what was observed and, where nothing was, what could not be told; none
offers an unobserved cause as the likely one."""

from __future__ import annotations

import re
from pathlib import Path

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations

CHECKS = Path(__file__).resolve().parents[1] / "checks"
REGISTRY = load_registry(include_plugins=False)
NO_AGENT = {"rocminfo.status": {"state": "out-of-resources", "evidence": []}}


def test_no_check_calls_a_cause_likely():
    said = [f"{path.name}:{number}: {line.strip()}" for path in sorted(CHECKS.glob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"\blikely\b", line, re.I)]
    assert not said, said


def _wsl(values: dict):
    facts = Facts(Observations(env={}))
    facts.set("platform.os", "wsl")
    for key, value in values.items():
        facts.set(key, value)
    (finding,) = run_one(REGISTRY.by_id("wsl-rocm-support"), facts)
    return finding


def test_wsl_without_a_gpu_agent_says_what_it_saw_and_what_it_could_not_tell():
    release = _wsl(dict(NO_AGENT, **{"rocm.paths": {"installs": [
        {"path": "/opt/rocm", "exists": True, "active": True, "version": "6.4.2-120"}]}}))
    assert release.status.value == "fail" and release.id == "wsl-rocm-support"
    assert "Observed: ROCm 6.4.2 is installed and has no WSL build." in release.message
    assert "Not told from here: whether the GPU is on AMD's WSL list" in release.message
    assert "Adrenalin driver in Windows matches the ROCm WSL release: WSL does not show it" in release.message
    gpu = _wsl(dict(NO_AGENT, **{"gpu.inventory": [{"index": 0, "gfx": "gfx1032", "name": "RX 6600"}],
                                 "gpu.targets": [{"index": 0, "real_gfx": "gfx1032"}]}))
    assert "Observed: GPU 0 (RX 6600), gfx1032, is not on AMD's WSL list." in gpu.message
    assert "which ROCm release is installed" in gpu.message and "whether the GPU is on" not in gpu.message
