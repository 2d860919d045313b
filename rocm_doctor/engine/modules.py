"""Imports every public module of a package (no side-effect registration: callers pick what they need).

Used for probes, interpreters and built-in checks. A module that fails to import is reported in `failures`
(name → traceback) so the run goes on without it and says so.
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
from types import ModuleType
from typing import Iterable


def import_public_modules(package: str, path: Iterable[str], failures: dict[str, str]) -> list[ModuleType]:
    modules = []
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        try:
            modules.append(importlib.import_module(f"{package}.{info.name}"))
        except Exception:
            failures[info.name] = traceback.format_exc(limit=6)
    return modules
