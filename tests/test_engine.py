"""The engine: skips for missing facts and other platforms, isolation of a raising check, selection, order."""

import pytest

from rocm_doctor.engine.engine import Selection, UnknownCheckError, run_checks, validate_selection
from rocm_doctor.engine.model import Check, Platform, Severity, Status
from rocm_doctor.engine.registry import LoadProblem, Registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations


class Raises(Check):
    id = "raises"
    title = "raises"

    def run(self, facts):
        raise RuntimeError("boom")


class NeedsTorch(Check):
    id = "needs-torch"
    title = "needs torch"
    requires = ("torch.version",)

    def run(self, facts):
        return self.ok(facts["torch.version"])


class WindowsOnly(Check):
    id = "windows-only"
    title = "windows only"
    platforms = (Platform.WINDOWS,)

    def run(self, facts):
        return self.fail("should not run on linux")


class Fails(Check):
    id = "fails"
    title = "fails"
    severity = Severity.CRITICAL

    def run(self, facts):
        return [self.fail("bad", subject="a"), self.warn("meh", subject="b")]


class Silent(Check):
    id = "silent"
    title = "silent"

    def run(self, facts):
        return None


def facts_for(os_name="linux", **values):
    facts = Facts(Observations())
    facts.set("platform.os", os_name)
    for key, value in values.items():
        facts.set(key.replace("__", "."), value)
    facts.set_missing("torch.version", "the torch probe crashed (SIGSEGV) during import torch")
    return facts


def registry(*checks):
    return Registry(checks=list(checks))


def by_check(findings):
    return {f.id: f for f in findings}


def test_a_raising_check_becomes_an_error_and_the_others_still_run():
    findings = by_check(run_checks(registry(Raises, Fails, Silent), facts_for()))
    assert findings["raises"].status is Status.ERROR
    assert "RuntimeError: boom" in findings["raises"].message
    assert findings["fails:a"].status is Status.FAIL
    assert findings["silent"].status is Status.OK


def test_missing_facts_give_skip_with_the_reason():
    finding = by_check(run_checks(registry(NeedsTorch), facts_for()))["needs-torch"]
    assert finding.status is Status.SKIP
    assert "SIGSEGV" in finding.message


def test_present_facts_run_the_check():
    facts = facts_for()
    facts.set("torch.version", "2.13.0")
    assert by_check(run_checks(registry(NeedsTorch), facts))["needs-torch"].message == "2.13.0"


def test_other_platform_is_skipped():
    finding = by_check(run_checks(registry(WindowsOnly), facts_for("linux")))["windows-only"]
    assert finding.status is Status.SKIP and "linux" in finding.message
    assert by_check(run_checks(registry(WindowsOnly), facts_for("windows")))["windows-only"].status is Status.FAIL


def test_selection_only_and_skip():
    reg = registry(Fails, Silent, Raises)
    only = run_checks(reg, facts_for(), Selection(only=("silent",)))
    assert [f.check for f in only] == ["silent"]
    skipped = run_checks(reg, facts_for(), Selection(skip=("raises",)))
    assert "raises" not in {f.check for f in skipped}


def test_unknown_ids_are_rejected_with_their_names():
    with pytest.raises(UnknownCheckError, match="nope"):
        validate_selection(registry(Fails), Selection(only=("nope",)))


def test_worst_first():
    findings = run_checks(registry(Silent, Fails, Raises), facts_for())
    statuses = [f.status for f in findings]
    assert statuses == sorted(statuses, key=lambda s: s.rank, reverse=True)
    assert findings[0].id == "fails:a"


def test_load_problems_become_findings():
    reg = registry(Silent)
    reg.problems.append(LoadProblem(source="entry point broken = pkg:mod", error="ImportError: nope"))
    findings = run_checks(reg, facts_for())
    problem = [f for f in findings if f.check == "plugin-load-failed"][0]
    assert problem.status is Status.ERROR and "ImportError" in problem.message


class _EntryPoint:
    """An entry point as importlib.metadata gives one: a name, a value and a load() that runs the plugin's code."""

    def __init__(self, name, load):
        self.name, self.value, self._load = name, f"plugin_pkg:{name}", load

    def load(self):
        return self._load()


def _missing_module():
    raise ModuleNotFoundError("No module named 'plugin_pkg'")


def _raising_provider():
    raise RuntimeError("the provider is broken")


@pytest.mark.parametrize("entry_point, error", [
    (_EntryPoint("unimportable", _missing_module), "ModuleNotFoundError: No module named 'plugin_pkg'"),
    (_EntryPoint("provider", lambda: _raising_provider), "RuntimeError: the provider is broken"),
    (_EntryPoint("returns-none", lambda: (lambda: None)), "TypeError: 'NoneType' object is not iterable"),
], ids=["module-fails-to-import", "callable-raises", "callable-returns-no-list"])
def test_a_broken_plugin_is_a_finding_and_the_rest_still_run(monkeypatch, entry_point, error):
    from rocm_doctor.engine import registry as registry_module

    monkeypatch.setattr(registry_module, "_entry_points", lambda: [entry_point, _EntryPoint("good", lambda: Fails)])
    loaded = registry_module.load_registry()
    assert [p.error for p in loaded.problems] == [error]
    assert "fails" in loaded.ids() and len(loaded.checks) > 50, "the good plugin and every built-in still load"
    findings = run_checks(loaded, facts_for(), Selection(only=("fails", "plugin-load-failed")))
    problem = next(f for f in findings if f.check == "plugin-load-failed")
    assert problem.status is Status.ERROR and entry_point.value in problem.message and error in problem.message
    assert any(f.check == "fails" for f in findings)


def test_probe_and_parser_errors_become_findings():
    facts = facts_for()
    facts.observations.probe_errors["kfd"] = "Traceback\nValueError: x"
    facts.interpreter_errors["rocminfo"] = "Traceback\nKeyError: y"
    checks = {f.check for f in run_checks(registry(Silent), facts)}
    assert {"probe-failed", "parser-failed"} <= checks


def test_statuses_are_a_closed_set():
    assert {s.value for s in Status} == {"ok", "info", "warn", "fail", "skip", "error"}
    with pytest.raises(ValueError):
        Status("maybe")
