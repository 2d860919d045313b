"""Turns Observations into Facts by running every interpreter module in this package.

Each module defines `interpret(observations, facts)` and sets the facts that rocm_doctor/facts/keys.py names it
the owner of; it declares in `REQUIRES` the facts of other interpreters it reads, and runs after their owners
(and, like everything that reads Facts.env or Facts.os, after the owners of run.env and platform.os); modules
that need nothing of each other run by name. Interpreters are pure: they only read observations and call
parsers, so they run the same on a live machine and on a replayed snapshot. One that raises is recorded, not fatal.
"""

from __future__ import annotations

import traceback
from types import ModuleType
from typing import Iterable

from rocm_doctor.engine.modules import import_public_modules
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import PLATFORM_OS, RUN_ENV, owner
from rocm_doctor.facts.observations import Observations

EVERYONE_REQUIRES = (RUN_ENV, PLATFORM_OS)  # read by Facts.env and Facts.os, which any interpreter may use


def short_name(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


def runs_after(module: ModuleType) -> set[str]:
    """The interpreters `module` runs after: the owners of what it requires (an unowned key names none)."""
    name = short_name(module)
    keys = set(getattr(module, "REQUIRES", ()))
    if all(owner(key) != name for key in EVERYONE_REQUIRES):
        keys.update(EVERYONE_REQUIRES)
    return {owner(key) for key in keys} - {name, None}


def in_order(modules: list[ModuleType], failures: dict[str, str]) -> list[ModuleType]:
    """`modules`, each after those it runs after, else by name; a circle is noted in `failures` and run by name."""
    pending = {short_name(m): m for m in sorted(modules, key=lambda m: m.__name__)}
    needs = {name: runs_after(m) & set(pending) for name, m in pending.items()}
    ordered: list[ModuleType] = []
    while pending:
        ready = [name for name in pending if not needs[name]]
        if not ready:
            failures["interpret"] = f"interpreters require each other: {', '.join(sorted(pending))}"
            return ordered + list(pending.values())
        ordered.append(pending.pop(ready[0]))
        for others in needs.values():
            others.discard(ready[0])
    return ordered


def interpreter_modules(failures: dict[str, str]) -> list[ModuleType]:
    """Every interpreter module, in order; one that cannot be imported is noted in `failures`."""
    return in_order([m for m in import_public_modules(__name__, __path__, failures) if hasattr(m, "interpret")],
                    failures)


def interpret(observations: Observations) -> Facts:
    facts = Facts(observations)
    for module in interpreter_modules(facts.interpreter_errors):
        try:
            module.interpret(observations, facts)
        except Exception:  # an interpreter bug must not stop the diagnosis
            facts.interpreter_errors[short_name(module)] = traceback.format_exc(limit=6)
    return facts


def derive_again(facts: Facts, changed: Iterable[str]) -> None:
    """Facts set from outside (a test case's) take effect as the pipeline's own would: the interpreters that
    require one of them, and those after them, run again; an interpreter owning a changed fact keeps it."""
    changed = set(changed)
    for module in interpreter_modules(facts.interpreter_errors):
        name = short_name(module)
        if any(owner(key) == name for key in changed) or not changed & set(getattr(module, "REQUIRES", ())):
            continue
        try:
            module.interpret(facts.observations, facts)
        except Exception:
            facts.interpreter_errors[name] = traceback.format_exc(limit=6)
        changed |= {key for key in facts.keys() if owner(key) == name}
