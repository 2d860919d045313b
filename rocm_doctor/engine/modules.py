"""Imports every public module of a package (no side-effect registration: callers pick what they need).

Used for probes, interpreters and built-in checks. A module that fails to import is reported in `failures`
(name → traceback) so the run goes on without it and says so. Modules come as they are imported, so a caller can
start using the first before the last is imported.
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
from types import ModuleType
from typing import Iterable, Iterator, Sequence


def import_public_modules(package: str, path: Iterable[str], failures: dict[str, str],
                          first: Sequence[str] = ()) -> Iterator[ModuleType]:
    """The package's public modules by name, those named in `first` before the others."""
    names = sorted((info.name for info in pkgutil.iter_modules(path) if not info.name.startswith("_")),
                   key=lambda name: (name not in first, name))
    for name in names:
        try:
            module = importlib.import_module(f"{package}.{name}")
        except Exception:
            failures[name] = traceback.format_exc(limit=6)
            continue
        yield module
