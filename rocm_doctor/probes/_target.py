"""Chooses the interpreter to diagnose: --python, else the active virtual or conda environment, else our own."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping, Optional


class TargetError(ValueError):
    """--python names nothing runnable; the message is one line for the user."""


def _env_python(prefix: str) -> Path:
    if sys.platform == "win32":
        candidates = [Path(prefix) / "python.exe", Path(prefix) / "Scripts" / "python.exe"]
    else:
        candidates = [Path(prefix) / "bin" / "python", Path(prefix) / "bin" / "python3"]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return candidates[0]


def choose_python(explicit: Optional[str], env: Mapping[str, str]) -> tuple[str, str]:
    """Return (interpreter path, why it was chosen)."""
    if explicit:
        try:
            return _explicit_python(explicit)
        except (OSError, RuntimeError, ValueError) as exc:  # a name too long, a symlink loop, a NUL byte
            if isinstance(exc, TargetError):
                raise
            raise TargetError(f"--python {explicit}: cannot use it ({getattr(exc, 'strerror', None) or exc})") from None
    own_prefix = Path(sys.prefix).resolve()
    unusable = []
    for variable, kind in (("VIRTUAL_ENV", "virtual environment"), ("CONDA_PREFIX", "conda environment")):
        prefix = env.get(variable)
        if not prefix:
            continue
        try:
            candidate = _env_python(prefix)
            if Path(prefix).resolve() == own_prefix:
                return sys.executable, f"the active {kind} ({variable}), which rocm-doctor runs in"
            if candidate.exists():
                return str(candidate), f"the active {kind} ({variable}={prefix})"
        except (OSError, RuntimeError, ValueError):  # a bad variable must not stop the doctor
            pass
        unusable.append(variable)
    if unusable:
        return sys.executable, (f"the interpreter rocm-doctor runs in; {' and '.join(unusable)} "
                                f"{'is' if len(unusable) == 1 else 'are'} set but hold{'s' if len(unusable) == 1 else ''} "
                                "no usable Python")
    return sys.executable, "the interpreter rocm-doctor runs in; no virtual or conda environment is active"


def _explicit_python(explicit: str) -> tuple[str, str]:
    path = Path(explicit).expanduser()
    if not path.exists():
        raise TargetError(f"--python {explicit}: no such file")
    if path.is_dir():
        raise TargetError(f"--python {explicit}: is a folder; give the interpreter itself (e.g. {path / 'bin' / 'python'})")
    if not os.access(path, os.X_OK):
        raise TargetError(f"--python {explicit}: not executable")
    return str(path), "given with --python"
