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


GUESS = re.compile(r"\b(likely|usually|probably|most often)\b", re.I)


def _guesses(paths, sourced_is_fine: bool = False) -> list[str]:
    """Lines that offer a cause as the likely or usual one; in a check's doc a line that names its source (a URL)
    may say what something usually does."""
    return [f"{path.name}:{number}: {line.strip()}" for path in paths
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if GUESS.search(line) and not (sourced_is_fine and "https://" in line)]


def test_no_check_calls_a_cause_likely_or_usual():
    said = _guesses(sorted(CHECKS.glob("*.py")))
    assert not said, said


def test_no_check_doc_calls_a_cause_likely_or_usual():
    said = _guesses(sorted((CHECKS / "docs").glob("*.md")), sourced_is_fine=True)
    assert not said, said


def test_the_guess_filter_catches_what_it_forbids():
    assert GUESS.search("a crash in import usually means mismatched libraries")
    assert GUESS.search("it was most likely cut") and GUESS.search("Most often a ROCm release")
    assert not GUESS.search("unusually long output")


def _tool_flood(env: dict):
    from rocm_doctor.testing import Case, run_case

    flood = {"argv": ["/opt/rocm/bin/rocminfo"], "returncode": 0, "stdout": "x", "stderr": "",
             "stdout_truncated_bytes": 5_000_000}
    (finding,) = run_case(Case(check="external-tool-misbehaved", observations={"commands": {"rocminfo": flood}},
                               env=env, expect={"external-tool-misbehaved:rocminfo": "warn"}))
    return finding.remediation[0]


def test_a_flood_of_output_names_the_logging_switch_seen_or_says_none_was():
    assert _tool_flood({"AMD_LOG_LEVEL": "4"}).startswith("AMD_LOG_LEVEL=4 is set here")
    quiet = _tool_flood({})
    assert "No GPU library logging switch is set here" in quiet and "could not be told" in quiet


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
