"""Which PyTorch wheel index to install from, and the exact pip command for the target interpreter."""

from __future__ import annotations

import shlex

from rocm_doctor.knowledge.store import load


def latest_rocm_index() -> str:
    table = load("torch_wheels.json")
    return table["index_base"] + table["releases"][-1]["rocm_index"]


def cuda_index() -> str:
    table = load("torch_wheels.json")
    return table["index_base"] + table["cuda_default_index"]


def pip_install_command(python: str, index_url: str, packages: str = "torch") -> str:
    quoted = f'"{python}"' if " " in python else shlex.quote(python)
    return f"{quoted} -m pip install --force-reinstall {packages} --index-url {index_url}"
