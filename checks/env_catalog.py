"""Every variable set in the judged environment, against data/env_catalog.json: a value its library cannot read, a
build-time variable set at run time, and a name one or two letters from a catalogued one.

Pure functions of facts.env (under --unit/--kernel that is the service's or kernel's environment). Logging and
debugging switches are gpu-library-logging-enabled's (checks/gpu_env.py), visibility lists gpu-visibility-env's,
each reading the same catalog.
"""

from __future__ import annotations

from rocm_doctor.checks.gpu_state import known_gpus
from rocm_doctor.checks.visibility import set_in_rc_file
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.keys import ENV_KNOWN
from rocm_doctor.knowledge import env_catalog
from rocm_doctor.parsers.env_grammar import problem

# How much a value the library cannot read matters, by the variable's class: it then falls back to its default or
# ignores the variable, so what the user meant does not happen.
SEVERITY = {"selects-devices": Severity.HIGH, "changes-results": Severity.MEDIUM, "slows": Severity.MEDIUM,
            "debug-only": Severity.LOW, "logs": Severity.LOW, "tunes": Severity.MEDIUM, "paths": Severity.MEDIUM,
            "build-time": Severity.LOW}


def _evidence(row, name: str, value: str) -> list[str]:
    return [f"{name}={value!r}", f"{row.owner}: {row.effect}", f"catalog: {row.source}, {row.reference()}"]


class EnvValueInvalid(Check):
    id = "env-value-invalid"
    title = "Values given to GPU library variables"
    area = "environment"
    severity = Severity.MEDIUM
    requires = (ENV_KNOWN,)

    def run(self, facts):
        gpus = len(known_gpus(facts)) or None
        findings = []
        for name, value in sorted(facts.env.items()):
            row = env_catalog.lookup(name)
            if row is None or row.judged_by:
                continue
            reason = problem(row.grammar, value, gpus)
            if reason is None:
                continue
            findings.append(self.warn(
                f"{name}={value!r} is not a value {row.owner} reads: {reason}. {row.owner} then ignores the setting "
                "or falls back to its default: what the setting was meant to change does not happen.",
                subject=name, severity=SEVERITY.get(row.cls, self.severity), evidence=_evidence(row, name, value),
                remediation=[f"To keep the setting, give {name} a value of the form {row.grammar} "
                             "(see the source in the evidence)."],
                fix=S.unset_where_set(name, set_in_rc_file(facts, name)),
                data={"variable": name, "value": value, "reason": reason, "grammar": row.grammar, "class": row.cls}))
        return findings or self.ok("every catalogued variable that is set has a readable value")


class EnvBuildTimeAtRunTime(Check):
    id = "env-build-time-variable"
    title = "Build-time variables in the runtime environment"
    area = "environment"
    severity = Severity.LOW
    requires = (ENV_KNOWN,)

    def run(self, facts):
        findings = []
        for name, value in sorted(facts.env.items()):
            row = env_catalog.lookup(name)
            if row is None or row.cls != "build-time" or row.judged_by:
                continue
            findings.append(self.info(
                f"{name}={value} has no effect here: {row.owner} reads it only when building ({row.effect}); the "
                "installed libraries and torch ignore it at run time.",
                subject=name, evidence=_evidence(row, name, value),
                data={"variable": name, "value": value, "owner": row.owner}))
        return findings or self.ok("no build-time variable is set")


class EnvNameMisspelt(Check):
    id = "env-name-misspelt"
    title = "Misspellings of GPU library variables"
    area = "environment"
    severity = Severity.MEDIUM
    requires = (ENV_KNOWN,)

    def run(self, facts):
        findings = []
        windows = facts.os == "windows"  # names are case-insensitive there: a wrong case is no misspelling
        for name, value in sorted(facts.env.items()):
            right = env_catalog.nearest(name)
            if right is None or (windows and right.upper() == name.upper()):
                continue
            row = env_catalog.lookup(right)
            in_rc = set_in_rc_file(facts, name)
            also = right in facts.env
            steps = [] if also else [S.set_env(right, value, scope="process", note=f"the spelling {row.owner} reads")]
            if in_rc and not also:
                steps.append(S.set_env(right, value, note=f"the spelling {row.owner} reads"))
            findings.append(self.warn(
                f"{name} is not a variable any GPU library reads; it is one or two letters from {right} "
                f"({row.owner}: {row.effect}). As spelt, it does nothing."
                + (f" {right} is set as well ({right}={facts.env[right]!r}); that value is the one in effect." if also
                   else ""),
                subject=name, evidence=[f"{name}={value!r}", f"catalog: {right} ({row.source}, {row.reference()})"],
                remediation=[f"Rename it to {right} wherever it is set (a job script, a service unit, a container "
                             "definition)."],
                fix=steps + S.unset_where_set(name, in_rc),
                data={"variable": name, "value": value, "spelling": right}))
        return findings or self.ok("no variable looks like a misspelt GPU library variable")
