"""rocm_doctor.testing itself: readable failures, cases from JSON, environment edits, and the ways a fix case can
be wrong (a step it cannot simulate without `after`, an override that hides the step's effect)."""

import json
import re
from pathlib import Path

import pytest

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check
from rocm_doctor.testing import (Case, CaseError, apply_steps, assert_fix_passes, facts_for, load_cases, run_case,
                                 step_sites)
from rocm_doctor.testing.fixes import edit_env

TARGET = {"python": "/venv/bin/python", "reason": "test"}
AMD_PCI = [{"vendor": "amd", "vendor_id": "0x1002", "device_id": "0x73ef", "source": "sysfs"}]
MISMATCH = {"check": "torch-build-mismatch", "facts": {"torch.flavour": "cpu", "torch.version": "2.5.1+cpu",
                                                       "gpu.pci": AMD_PCI, "python.target": TARGET},
            "expect": {"torch-build-mismatch": "fail"}}
MACHINE_KEY = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"


class WantsFlag(Check):
    """A plugin-style check: FLAG must be 1, and FLAG=0 is worse; its step sets FLAG to STEP_VALUE (default 1)."""

    id = "wants-flag"
    title = "FLAG is 1"

    def run(self, facts):
        findings = []
        if facts.env.get("FLAG") != "1":
            findings.append(self.warn("FLAG is not 1", fix=[S.set_env("FLAG", facts.env.get("STEP_VALUE", "1"))]))
        if facts.env.get("FLAG") == "0":
            findings.append(self.fail("FLAG=0 breaks things", subject="zero"))
        return findings or self.ok("FLAG is 1")


class NoSteps(Check):
    id = "no-steps"
    title = "never attaches a step"

    def run(self, facts):
        return self.fail("broken", fix=[])


def test_a_wrong_status_shows_expected_got_and_every_finding():
    case = Case.from_dict(dict(MISMATCH, expect={"torch-build-mismatch": "ok", "torch-build-mismatch:x": "warn"},
                               text="no such words", name="wrong"))
    with pytest.raises(AssertionError) as err:
        run_case(case)
    text = str(err.value)
    assert "case 'wrong' (torch-build-mismatch on linux)" in text
    assert "torch-build-mismatch: expected ok, got fail" in text
    assert "torch-build-mismatch:x: expected warn, got no such finding" in text
    assert "text not found: 'no such words'" in text
    assert "fail  torch-build-mismatch: torch 2.5.1+cpu is a CPU build" in text
    assert "step: install torch from" in text


def test_cases_from_a_json_file(tmp_path):
    path = tmp_path / "torch-build-mismatch.json"
    path.write_text(json.dumps({"check": "torch-build-mismatch", "cases": {
        "cpu-torch-on-amd": {k: v for k, v in MISMATCH.items() if k != "check"},
        "no-gpu": {"facts": {"torch.flavour": "cpu", "torch.version": "2.5.1+cpu", "gpu.pci": []},
                   "expect": {"torch-build-mismatch": "ok"}, "text": "no AMD or NVIDIA GPU"}}}))
    cases = load_cases(path)
    assert [c.name for c in cases] == ["cpu-torch-on-amd", "no-gpu"]
    for case in cases:
        run_case(case)


@pytest.mark.parametrize("raw, words", [
    (dict(MISMATCH, expekt={}), "unknown key(s) expekt"),
    (dict(MISMATCH, expect={"torch-build-mismatch": "failed"}), "unknown status"),
    (dict(MISMATCH, os="win32"), "os must be one of"),
    (dict(MISMATCH, observations={"env": {"A": "1"}}), "the environment is the case's env"),
    (dict(MISMATCH, after={"set_env": {}}), "set_env steps are applied to the environment"),
    ({"expect": {}}, "needs `check` and `expect`"),
])
def test_a_malformed_case_says_what_is_wrong(raw, words):
    with pytest.raises(CaseError) as err:
        Case.from_dict(raw)
    assert words in str(err.value)


def test_none_makes_a_fact_missing_but_cannot_remove_an_interpreted_one():
    facts = facts_for(Case(check="torch-build-mismatch", expect={}, facts={"torch.flavour": None}))
    assert not facts.has("torch.flavour") and facts.why_missing("torch.flavour") == "missing in this test case"
    with pytest.raises(CaseError, match="platform.os is set by the interpreters"):
        facts_for(Case(check="torch-build-mismatch", expect={}, facts={"platform.os": None}))


@pytest.mark.parametrize("os_name, env, step, expected", [
    ("linux", {"PATH": "/a:/opt/rocm/bin:/b:/opt/rocm/bin"}, S.path_remove("/opt/rocm/bin"), {"PATH": "/a:/b"}),
    ("linux", {"PATH": "/a:/b:/c"}, S.path_prepend("/c"), {"PATH": "/c:/a:/b"}),
    ("linux", {}, S.path_remove("/x"), {}),
    ("linux", {}, S.path_prepend("/x", "LD_LIBRARY_PATH"), {"LD_LIBRARY_PATH": "/x"}),
    ("windows", {"Path": "C:\\a;C:\\ROCm\\bin\\;C:\\b"}, S.path_remove("c:\\rocm\\bin"), {"Path": "C:\\a;C:\\b"}),
    ("windows", {"Hip_Path": "x"}, S.unset_env("HIP_PATH", scope="machine"), {}),
    ("linux", {"A": "1"}, S.set_env("B", "2", scope="process"), {"A": "1", "B": "2"}),
])
def test_environment_steps_keep_the_other_entries_in_order(os_name, env, step, expected):
    assert edit_env(env, step, os_name) == expected


def test_user_and_machine_scope_steps_change_the_recorded_windows_registry():
    values = {"HSA_OVERRIDE_GFX_VERSION": {"value": "11.0.0", "type": "REG_SZ"},
              "Path": {"value": "%SystemRoot%\\system32;C:\\old", "type": "REG_EXPAND_SZ"}}
    probes = {"windows.registry.windows_env": {"HKCU\\Environment": {"values": dict(values)},
                                               MACHINE_KEY: {"values": dict(values)}}}
    case = Case(check="hsa-override-on-windows", expect={}, os="windows", observations={"probes": probes},
                env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "Path": "C:\\old"})
    fixed = apply_steps(case, [S.unset_env("HSA_OVERRIDE_GFX_VERSION", scope="user"),
                               S.path_prepend("C:\\ROCm\\bin", scope="machine")])
    record = fixed.observations["probes"]["windows.registry.windows_env"]
    assert record["HKCU\\Environment"]["values"] == {"Path": values["Path"]}
    assert record[MACHINE_KEY]["values"]["Path"] == {"value": "C:\\ROCm\\bin;%SystemRoot%\\system32;C:\\old",
                                                     "type": "REG_EXPAND_SZ"}
    assert fixed.env == {"Path": "C:\\ROCm\\bin;C:\\old"}
    assert case.observations["probes"]["windows.registry.windows_env"]["HKCU\\Environment"]["values"] == values


def test_a_step_that_cannot_be_simulated_needs_after():
    with pytest.raises(CaseError, match="pip_install step"):
        assert_fix_passes(Case.from_dict(MISMATCH))
    with pytest.raises(CaseError, match="`after` names run_command, but the fix has no such step"):
        assert_fix_passes(Case.from_dict(dict(MISMATCH, after={"pip_install": {"torch.flavour": "rocm"},
                                                                "run_command": {}})))
    after = assert_fix_passes(Case.from_dict(dict(MISMATCH, after={"pip_install": {"torch.flavour": "rocm"}})))
    assert [f.status.value for f in after] == ["ok"]


def test_a_step_that_does_not_fix_or_brings_a_new_problem_fails():
    def case(step_value):
        return Case(check="wants-flag", env={"STEP_VALUE": step_value}, expect={"wants-flag": "warn"})

    with pytest.raises(AssertionError, match=r"(?s)set_env: set FLAG=2.*still reported: wants-flag \(warn -> warn\)"):
        assert_fix_passes(case("2"), [WantsFlag])
    with pytest.raises(AssertionError, match=r"new problem: wants-flag:zero \(fail\)"):
        assert_fix_passes(case("0"), [WantsFlag])
    assert [f.status.value for f in assert_fix_passes(case("1"), [WantsFlag])] == ["ok"]


def test_nothing_to_fix_and_a_problem_without_steps_fail():
    with pytest.raises(AssertionError, match="no fail/warn finding"):
        assert_fix_passes(Case(check="wants-flag", env={"FLAG": "1"}, expect={"wants-flag": "ok"}), [WantsFlag])
    with pytest.raises(AssertionError, match="no-steps carries no fix step"):
        assert_fix_passes(Case(check="no-steps", expect={"no-steps": "fail"}), [NoSteps])


def test_an_override_that_hides_what_the_step_changes_is_refused():
    probes = {"windows.registry.windows_env": {"HKCU\\Environment": {"values": {}}}}
    scopes = {"process": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, "user": {}, "machine": None}
    case = Case(check="hsa-override-on-windows", os="windows", env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
                observations={"probes": probes}, facts={"windows.env.scopes": scopes},
                expect={"hsa-override-on-windows": "warn"})
    with pytest.raises(CaseError, match="windows.env.scopes hide what the steps change"):
        assert_fix_passes(case)


def test_an_alternative_is_picked_by_its_title():
    facts = {"torch.flavour": "rocm", "torch.version": "2.7.1+rocm6.3", "torch.arch_list": ["gfx1030"],
             "gpu.inventory": [{"index": 0, "gfx": "gfx1032", "igpu": False, "node": 1, "sources": {"kfd": "gfx1032"}}]}
    case = Case(check="gfx-not-in-torch-arch-list", facts=facts, expect={"gfx-not-in-torch-arch-list:0": "fail"},
                alternative="no such path")
    with pytest.raises(CaseError, match="0 alternatives of gfx-not-in-torch-arch-list:0 match 'no such path'"):
        assert_fix_passes(case)


def test_step_sites_find_fix_arguments_but_not_empty_ones():
    assert len(step_sites(WantsFlag)) == 1
    assert step_sites(NoSteps) == []


def test_the_examples_in_docs_testing_md_run(tmp_path):
    text = (Path(__file__).parent.parent / "docs" / "testing.md").read_text(encoding="utf-8")
    examples = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def test_" not in b]
    assert len(examples) == 2
    for example in examples:
        exec(compile(example, "docs/testing.md", "exec"), {})
    (tmp_path / "cases.json").write_text(re.search(r"```json\n(.*?)```", text, re.S).group(1), encoding="utf-8")
    for case in load_cases(tmp_path / "cases.json"):
        run_case(case)
