"""torch's measured arch list against the wheel table."""

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.knowledge import wheels

CHECK = load_registry(include_plugins=False).by_id("torch-arch-list-vs-table")


def run(version, flavour, arch_list):
    facts = Facts(Observations())
    facts.set("platform.os", "linux")
    facts.set("torch.version", version)
    facts.set("torch.flavour", flavour)
    facts.set("torch.arch_list", arch_list)
    return run_one(CHECK, facts)[0]


def test_the_published_wheel_matches():
    table = wheels.index_archs("rocm6.3")
    finding = run("2.7.1+rocm6.3", "rocm", table)
    assert finding.status.value == "ok"


def test_a_custom_build_is_reported_with_the_difference():
    table = wheels.index_archs("rocm6.3")
    custom = [a for a in table if a != "gfx1100"] + ["gfx1032:xnack-"]
    finding = run("2.7.1+rocm6.3", "rocm", custom)
    assert finding.status.value == "info"
    assert "has gfx1032" in finding.message and "lacks gfx1100" in finding.message


@pytest.mark.parametrize("version, flavour, expected", [
    ("2.9.1+rocmsdk20260116", "rocm", "no record"),
    ("2.13.0+cu128", "cuda", "not a ROCm build"),
])
def test_unknown_index_and_other_builds(version, flavour, expected):
    finding = run(version, flavour, ["gfx1100"])
    assert expected in finding.message
