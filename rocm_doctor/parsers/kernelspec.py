"""Jupyter kernelspecs: `jupyter kernelspec list --json` and a kernel.json. argv[0] is the program Jupyter starts
for the kernel (for ipykernel, the interpreter that imports torch); `env` is added to the Jupyter server's own
environment, `$VAR` / `${VAR}` in its values filled in from that environment (jupyter_client 7 and newer)."""

from __future__ import annotations

import json
import re
import string
from typing import Mapping, Optional

_PYTHON = re.compile(r"^python(\d+(\.\d+)*)?[tw]?(\.exe)?$", re.IGNORECASE)


def _loads(text: str, what: str) -> tuple[Optional[object], Optional[str]]:
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"{what} is not valid JSON ({exc})"


def kernel_json(text: str) -> tuple[Optional[dict], Optional[str]]:
    """(spec, problem): a spec has argv (a non-empty list of strings), env (names to strings), display_name."""
    raw, problem = _loads(text or "", "kernel.json")
    if problem:
        return None, problem
    return validated(raw)


def validated(raw: object) -> tuple[Optional[dict], Optional[str]]:
    if not isinstance(raw, dict):
        return None, "kernel.json does not hold a JSON object"
    argv = raw.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None, "kernel.json has no argv list of strings: Jupyter cannot start this kernel"
    env = raw.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return None, "kernel.json's env is not an object of strings"
    return {"argv": list(argv), "env": dict(env), "display_name": str(raw.get("display_name") or ""),
            "language": str(raw.get("language") or "")}, None


def kernelspec_list(text: str) -> tuple[dict[str, dict], Optional[str]]:
    """`jupyter kernelspec list --json`: name -> {resource_dir, spec} (spec None with `problem` when invalid)."""
    raw, problem = _loads(text or "", "jupyter kernelspec list --json output")
    if problem:
        return {}, problem
    specs = raw.get("kernelspecs") if isinstance(raw, dict) else None
    if not isinstance(specs, dict):
        return {}, "jupyter kernelspec list --json printed no kernelspecs object"
    out = {}
    for name, entry in specs.items():
        entry = entry if isinstance(entry, dict) else {}
        spec, why = validated(entry.get("spec"))
        out[str(name).lower()] = {"resource_dir": str(entry.get("resource_dir") or ""), "spec": spec, "problem": why}
    return out, None


def is_python(program: str) -> bool:
    """Whether a path names a Python interpreter by its file name (python, python3, python3.12, python.exe)."""
    name = re.split(r"[\\/]", program or "")[-1]
    return bool(_PYTHON.match(name))


def kernel_environment(base: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """The kernel's environment as jupyter_client builds it: the server's, PYTHONEXECUTABLE removed, plus the
    spec's env with `$VAR` filled in from the server's."""
    out = {k: v for k, v in base.items() if k != "PYTHONEXECUTABLE"}
    out.update({k: string.Template(v).safe_substitute(out) for k, v in env.items()})
    return out
