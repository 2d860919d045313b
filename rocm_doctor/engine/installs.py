"""An install into the diagnosed interpreter, the way its environment takes one: `uv pip install --python` where
uv made the environment (it has no pip), and never into the environment pipx or `uv tool` made for rocm-doctor:
torch does not belong there, so the step says where it does."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from rocm_doctor.engine import remedy as S


def install_into(target: Optional[Mapping[str, Any]], python: str, packages: Sequence[str],
                 index_url: Optional[str] = None, extra_args: Sequence[str] = (), note: str = "") -> S.Step:
    """The step that installs `packages` for the target (the fact python.target) whose interpreter is `python`."""
    target = target or {}
    tool = target.get("tool")
    if tool:
        where = f" from {index_url}" if index_url else ""
        return S.advice(f"{python} is the environment {tool} made for rocm-doctor itself, not where torch goes: install "
                        f"{' '.join(packages)}{where} into your project's environment (or make one with python3 -m "
                        "venv), then diagnose that interpreter with --python", note=note)
    step = S.pip_install(python, list(packages), index_url, extra_args=extra_args, note=note)
    if target.get("venv") == "uv":
        step.installer = "uv"
    return step
