"""Finds checks: the built-ins in rocm_doctor.checks and third-party ones from the `rocm_doctor.checks` entry-point
group. Nothing registers itself on import; a plugin that fails to load is reported, and the rest still load.
Built-ins are found by package name, like plugins, so the engine depends on no check module.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from importlib import resources
from typing import Iterable, Optional

from rocm_doctor.engine.model import Check
from rocm_doctor.engine.modules import import_public_modules

ENTRY_POINT_GROUP = "rocm_doctor.checks"
BUILTIN_PACKAGE = "rocm_doctor.checks"


@dataclass
class LoadProblem:
    """A plugin or built-in module that could not be loaded."""

    source: str
    error: str
    builtin: bool = False


@dataclass
class Registry:
    checks: list[type[Check]] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)

    def by_id(self, check_id: str) -> Optional[type[Check]]:
        for check in self.checks:
            if check.id == check_id:
                return check
        return None

    def ids(self) -> list[str]:
        return [c.id for c in self.checks]


def _checks_in_module(module) -> list[type[Check]]:
    found = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, Check) and obj is not Check and obj.__module__ == module.__name__ and "id" in vars(obj):
            found.append(obj)
    return sorted(found, key=lambda c: c.id)


def _entry_points() -> Iterable:
    from importlib import metadata

    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        return eps.select(group=ENTRY_POINT_GROUP)
    return eps.get(ENTRY_POINT_GROUP, [])  # Python < 3.10


def load_registry(include_plugins: bool = True) -> Registry:
    registry = Registry()
    package = importlib.import_module(BUILTIN_PACKAGE)

    failures: dict[str, str] = {}  # a broken built-in must not take the others down
    for module in import_public_modules(package.__name__, package.__path__, failures):
        registry.checks.extend(_checks_in_module(module))
    for name, text in failures.items():
        error = text.strip().splitlines()[-1]
        registry.problems.append(LoadProblem(source=f"{package.__name__}.{name}", error=error, builtin=True))
    if include_plugins:
        for ep in _entry_points():
            source = f"entry point {ep.name} = {ep.value}"
            try:  # loading it and calling what it names are both the plugin's code
                plugin_checks = _plugin_checks(ep.load())
            except BaseException as exc:  # noqa: BLE001 - SystemExit from a plugin is still a plugin failure
                if isinstance(exc, KeyboardInterrupt):
                    raise
                registry.problems.append(LoadProblem(source=source, error=f"{type(exc).__name__}: {exc}"))
                continue
            if not plugin_checks:
                registry.problems.append(LoadProblem(source=source, error="provides no Check subclass"))
            registry.checks.extend(plugin_checks)
    seen: set[str] = set()
    unique = []
    for check in registry.checks:
        if check.id in seen:
            registry.problems.append(LoadProblem(source=check.__module__, error=f"duplicate check id {check.id!r}"))
            continue
        seen.add(check.id)
        unique.append(check)
    registry.checks = unique
    return registry


def _plugin_checks(loaded) -> list[type[Check]]:
    """An entry point may name a Check subclass, a module of them, or a callable returning a list of them."""
    if inspect.isclass(loaded) and issubclass(loaded, Check):
        return [loaded]
    if inspect.ismodule(loaded):
        return _checks_in_module(loaded)
    if callable(loaded):
        result = loaded()
        return [c for c in result if inspect.isclass(c) and issubclass(c, Check)]
    return []


def check_doc(check: type[Check]) -> Optional[str]:
    """The check's Markdown doc: checks/docs/<id>.md for built-ins, else the class docstring."""
    if check.__module__.startswith(BUILTIN_PACKAGE + "."):
        try:
            return resources.files(BUILTIN_PACKAGE).joinpath("docs", f"{check.id}.md").read_text(encoding="utf-8")
        except (FileNotFoundError, OSError):
            pass
    doc = inspect.getdoc(check)
    return doc if doc and doc != inspect.getdoc(Check) else None
