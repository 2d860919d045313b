"""Turns Observations into Facts by running every interpreter module in this package.

Each module defines `interpret(observations, facts)` and may set `ORDER` (default 50; lower runs first) when it
reads facts another interpreter sets. Interpreters are pure: they only read observations and call parsers, so
they run the same on a live machine and on a replayed snapshot. One that raises is recorded, not fatal.
"""

from __future__ import annotations

import traceback
from types import ModuleType

from rocm_doctor.engine.modules import import_public_modules
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations


def interpreter_modules(failures: dict[str, str]) -> list[ModuleType]:
    """Every interpreter module, in ORDER; one that cannot be imported is noted in `failures`."""
    modules = [m for m in import_public_modules(__name__, __path__, failures) if hasattr(m, "interpret")]
    return sorted(modules, key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


def interpret(observations: Observations) -> Facts:
    facts = Facts(observations)
    for module in interpreter_modules(facts.interpreter_errors):
        try:
            module.interpret(observations, facts)
        except Exception:  # an interpreter bug must not stop the diagnosis
            name = module.__name__.rsplit(".", 1)[-1]
            facts.interpreter_errors[name] = traceback.format_exc(limit=6)
    return facts
