"""Chooses the interpreter to diagnose: --python, else the active virtual or conda environment, else, when
rocm-doctor runs from the environment pipx or `uv tool` made for it or from any virtual environment that holds no
torch (one made for it alone, as on a PEP 668 system), the python on PATH, else our own. Also says
what made the target's environment (uv; pipx or uv tool), which decides how the advice installs into it."""

from __future__ import annotations

import os
import re
import shutil
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
            return _explicit_python(explicit, env)
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
    tool = tool_environment(own_prefix)
    if tool and not unusable:
        return _beside_tool(f"the environment {tool} made for it", env, own_prefix)
    if not unusable and _own_venv_lacks_torch():
        return _beside_tool(f"{own_prefix}, a virtual environment without torch", env, own_prefix)
    if unusable:
        return sys.executable, (f"the interpreter rocm-doctor runs in; {' and '.join(unusable)} "
                                f"{'is' if len(unusable) == 1 else 'are'} set but hold{'s' if len(unusable) == 1 else ''} "
                                "no usable Python")
    return sys.executable, "the interpreter rocm-doctor runs in; no virtual or conda environment is active"


def _explicit_python(explicit: str, env: Mapping[str, str]) -> tuple[str, str]:
    path = Path(explicit).expanduser()
    if not path.exists() and os.sep not in explicit and "/" not in explicit:  # a bare name: as a shell finds it
        found = shutil.which(explicit, path=env.get("PATH"))
        if found:
            return found, f"given with --python ({explicit} on PATH)"
        raise TargetError(f"--python {explicit}: no such file, and no {explicit} on PATH")
    if not path.exists():
        raise TargetError(f"--python {explicit}: no such file")
    if path.is_dir():
        raise TargetError(f"--python {explicit}: is a folder; give the interpreter itself (e.g. {path / 'bin' / 'python'})")
    if not os.access(path, os.X_OK):
        raise TargetError(f"--python {explicit}: not executable")
    return str(path), "given with --python"


def tool_environment(prefix: Path) -> Optional[str]:
    """"pipx" or "uv tool" when `prefix` is an environment such an installer made for one application (it holds
    that application and nothing of the user's: never where torch is, never where it should go)."""
    if (prefix / "pipx_metadata.json").is_file():
        return "pipx"
    if (prefix / "uv-receipt.toml").is_file():
        return "uv tool"
    return None


def environment_of(python: str) -> dict:
    """{"venv": "uv"} for an environment uv made (it has no pip: installs go through `uv pip --python`), and
    {"tool": ...} for one pipx or uv tool made; {} for any other."""
    out: dict = {}
    path = Path(python)
    for prefix in (path.parent.parent, path.parent):  # bin/python (Scripts\python.exe), or a conda python.exe
        try:
            with open(prefix / "pyvenv.cfg", encoding="utf-8", errors="replace") as handle:
                config = handle.read(8192)
        except OSError:
            continue
        if re.search(r"(?m)^\s*uv\s*=", config):
            out["venv"] = "uv"
        tool = tool_environment(prefix)
        if tool:
            out["tool"] = tool
        break
    return out


def _own_venv_lacks_torch() -> bool:
    """Whether rocm-doctor runs in a virtual environment of its own that cannot import torch (one made for it, as
    the README's PEP 668 path does): like a pipx one, it is not where the user's torch is. find_spec only looks for
    the package; nothing of torch is imported."""
    import importlib.util

    if sys.prefix == getattr(sys, "base_prefix", sys.prefix):
        return False
    try:
        return importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):
        return False


def _beside_tool(where: str, env: Mapping[str, str], own_prefix: Path) -> tuple[str, str]:
    """The python the user runs (py -3 on Windows, python3 or python on PATH) instead of the tool's own; `where`
    says what rocm-doctor's own environment is."""
    found = _users_python(env, own_prefix)
    if found:
        name, path = found
        return path, (f"{name} on PATH: rocm-doctor runs from {where}, which holds no torch; --python PATH "
                      "diagnoses another interpreter")
    return sys.executable, (f"the interpreter rocm-doctor runs in, in {where} (no other python3 or python on PATH); "
                            "--python PATH diagnoses the one that holds torch")


def _users_python(env: Mapping[str, str], own_prefix: Path) -> Optional[tuple[str, str]]:
    def own(path: str) -> bool:  # the tool environment's own python, by the folder it is in (not where it links)
        try:
            return Path(path).parent.resolve() in (own_prefix, own_prefix / "bin", own_prefix / "Scripts")
        except (OSError, RuntimeError, ValueError):
            return True

    if sys.platform == "win32" and shutil.which("py", path=env.get("PATH")):
        from rocm_doctor.engine import runner

        result = runner.run(["py", "-3", "-c", "import sys; print(sys.executable)"], timeout=15, env=env)
        path = result.stdout.strip() if result.returncode == 0 else ""
        if path and not own(path):
            return "py -3", path
    folders = [f for f in (env.get("PATH") or "").split(os.pathsep) if f]
    for name in ("python3", "python"):
        for folder in folders:  # every match in PATH order: the tool's own bin folder may come first
            path = shutil.which(name, path=folder)
            if path and not own(path):
                return name, path
    return None
