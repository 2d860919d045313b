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
        path = Path(explicit).expanduser()
        if not path.exists():
            raise TargetError(f"--python {explicit}: no such file")
        if path.is_dir():
            raise TargetError(f"--python {explicit}: is a folder; give the interpreter itself (e.g. {path / 'bin' / 'python'})")
        if not os.access(path, os.X_OK):
            raise TargetError(f"--python {explicit}: not executable")
        return str(path), "given with --python"
    own_prefix = Path(sys.prefix).resolve()
    for variable, kind in (("VIRTUAL_ENV", "virtual environment"), ("CONDA_PREFIX", "conda environment")):
        prefix = env.get(variable)
        if not prefix:
            continue
        candidate = _env_python(prefix)
        if Path(prefix).resolve() == own_prefix:
            return sys.executable, f"the active {kind} ({variable}), which rocm-doctor runs in"
        if candidate.exists():
            return str(candidate), f"the active {kind} ({variable}={prefix})"
    return sys.executable, "the interpreter rocm-doctor runs in; no virtual or conda environment is active"
