"""The triage harness (benchmarks/triage_replay.py) over every recorded real paste (tests/data/triage/cases.json):
the established cause first in at least the share docs/triage.md gives, and no healthy paste named a cause."""

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FLOOR = 0.90  # docs/triage.md: 96% reached on 2026-12-02; the floor keeps it


def harness():
    spec = importlib.util.spec_from_file_location("triage_replay", REPO / "benchmarks" / "triage_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_real_pastes_name_their_established_cause_first_and_healthy_ones_none():
    result = harness().run()
    assert result["total"] >= 40 and result["healthy"] >= 15
    assert result["false_failures"] == 0, [m for m in result["misses"] if m["expected"] is None]
    assert result["first"] / result["total"] >= FLOOR, result["misses"]


@pytest.mark.parametrize("case", json.loads((REPO / "tests/data/triage/cases.json").read_text())["cases"],
                         ids=lambda case: Path(case["paste"] if isinstance(case["paste"], str) else case["paste"][0]).stem)
def test_every_case_names_its_thread_and_a_paste_that_exists(case):
    assert case["source"] and case["cause"] and case["class"]
    assert all(path.is_file() for path in harness()._paths(case))
