"""The interpreters run in the order their REQUIRES and the fact owners of rocm_doctor/facts/keys.py give, and
each sets only the facts it owns: one owner per fact, checked on every recorded snapshot."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from rocm_doctor.facts import keys, snapshot
from rocm_doctor.facts.facts import Facts
from rocm_doctor.interpret import in_order, interpreter_modules, runs_after, short_name

SNAPSHOTS = sorted((Path(__file__).parent / "snapshots").glob("*.json"))
MODULES = interpreter_modules({})
NAMES = [short_name(m) for m in MODULES]


def test_every_required_fact_has_another_interpreter_as_owner():
    for module in MODULES:
        for key in getattr(module, "REQUIRES", ()):
            assert keys.owner(key) in NAMES and keys.owner(key) != short_name(module), (module.__name__, key)


def test_every_interpreter_owns_facts_and_every_owner_is_an_interpreter():
    assert set(keys.FACTS.values()) == set(NAMES)


def test_each_interpreter_runs_after_the_owners_of_what_it_reads():
    failures = {}
    assert [short_name(m) for m in interpreter_modules(failures)] == NAMES and not failures
    for position, module in enumerate(MODULES):
        assert runs_after(module) <= set(NAMES[:position]), module.__name__
    assert NAMES.index("run_env") < NAMES.index("gpu_targets"), "the override in effect is read from run.env"
    assert NAMES.index("gpu_inventory") < NAMES.index("gpu_targets")
    assert NAMES.index("torch_facts") < NAMES.index("windows_dlls") < NAMES.index("windows_layer")


def test_a_circle_is_reported_and_everything_still_runs():
    def fake(name, requires):
        return SimpleNamespace(__name__=f"rocm_doctor.interpret.{name}", REQUIRES=requires)

    failures = {}
    modules = [fake("gpu_inventory", ("gpu.targets",)), fake("gpu_targets", ("gpu.inventory",)), fake("kfd", ())]
    ordered = in_order(modules, failures)
    assert sorted(short_name(m) for m in ordered) == ["gpu_inventory", "gpu_targets", "kfd"]
    assert short_name(ordered[0]) == "kfd"
    assert failures["interpret"] == "interpreters require each other: gpu_inventory, gpu_targets"


def test_prefix_entries_own_the_keys_below_them():
    assert keys.owner("torch.version") == "torch_facts" and keys.owner("torch.family") == "torch_family"
    assert keys.owner("platform.machine") == "platform_facts" and keys.owner("no.such.fact") is None


@pytest.mark.parametrize("path", SNAPSHOTS, ids=[p.stem for p in SNAPSHOTS])
def test_each_interpreter_sets_only_the_facts_it_owns(path):
    observations = snapshot.parse(path.read_bytes(), str(path))
    facts = Facts(observations)
    for module in MODULES:
        before = set(facts.values_dict()) | set(facts.missing_dict())
        module.interpret(observations, facts)
        added = (set(facts.values_dict()) | set(facts.missing_dict())) - before
        assert {key: keys.owner(key) for key in added if keys.owner(key) != short_name(module)} == {}, module.__name__
