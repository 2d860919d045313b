"""Shared reading of the AMD facts for the amd_* checks (no checks here): the GPUs with their hardware gfx, the
override in effect per GPU, torch's arch list, the ROCm version, and env-var remediation in the user's shell."""

from __future__ import annotations

import re

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine import shells
from rocm_doctor.knowledge import wheels
from rocm_doctor.interpret.gpu_targets import (OVERRIDE, effective_gfx, integrated, override_for,  # noqa: F401 (shared)
                                             override_variables, real_gfx)

RC_FILES = {"bash": "~/.bashrc", "zsh": "~/.zshrc", "fish": "~/.config/fish/config.fish", "sh": "~/.profile"}
_TORCH_INDEX = re.compile(r"\+rocm(\d+\.\d+(?:\.\d+)?)")


def gpus(facts) -> list[dict]:
    """AMD GPUs of gpu.inventory (CPU agents and NPUs are already excluded)."""
    return [g for g in facts.get("gpu.inventory") or [] if isinstance(g, dict)]




def label(gpu: dict) -> str:
    name = gpu.get("name") or "AMD GPU"
    return f"GPU {gpu.get('index')} ({name})"








def torch_index(facts) -> str | None:
    """"2.7.1+rocm6.3" → "rocm6.3" (the download.pytorch.org index the wheel came from), else None."""
    match = _TORCH_INDEX.search(facts.get("torch.version") or "")
    return f"rocm{match.group(1)}" if match else None


def arch_list(facts) -> tuple[list[str] | None, str]:
    """torch's arch list and where it comes from: measured (get_arch_list) or the table for its wheel index."""
    measured = facts.get("torch.arch_list")
    if measured:
        return list(measured), "torch.cuda.get_arch_list()"
    if facts.get("torch.flavour") == "rocm" and torch_index(facts):
        table = wheels.index_archs(torch_index(facts))
        if table:
            return table, f"the {torch_index(facts)} wheel's targets (data/torch_wheels.json; torch could not report its own)"
    return None, ""


def covered(archs, gfx: str | None) -> bool:
    return bool(gfx) and wheels.covers(archs, gfx)


def rocm_version(facts) -> tuple[str | None, str]:
    """The installed ROCm point release when an install says it (.info/version), else HIP's, else torch's HIP."""
    for install in (facts.get("rocm.paths") or {}).get("installs") or []:
        if install.get("active") and install.get("version"):
            return install["version"].split("-")[0], f"{install['path']}/.info/version"
    hip = facts.get("hip.version") or {}
    if hip.get("text"):
        return hip["text"], hip.get("source") or "hipconfig"
    if facts.get("torch.hip"):
        return facts["torch.hip"], "torch.version.hip"
    return None, ""




# ---- remediation in the user's shell ------------------------------------------------------------------------------


def shell(facts) -> str:
    return shells.detect_shell(facts.env, facts.os)


def set_lines(facts, name: str, value: str) -> list[str]:
    """`export NAME=value` (this shell) and the line for the rc file, in the user's shell."""
    sh = shell(facts)
    step = S.set_env(name, value)
    line = shells.rc_code(step, sh)
    return [f"In this shell: `{line}`", f"To keep it, add the same line to {RC_FILES.get(sh, '~/.profile')}."]


def unset_lines(facts, name: str, rc_hits: list[dict] | None = None) -> list[str]:
    sh = shell(facts)
    lines = [f"In this shell: `{shells.rc_code(S.unset_env(name), sh)}`"]
    hits = [h for h in rc_hits or [] if h.get("variable") == name]
    if hits:
        lines += [f"Delete line {h['line_no']} of {h['file']}: `{h['line']}`, then open a new terminal." for h in hits]
    else:
        lines.append(f"Remove the line that sets it from {RC_FILES.get(sh, '~/.profile')} (or ~/.profile, "
                     "/etc/environment, a service or container definition), then open a new terminal.")
    return lines


def rc_evidence(facts, name: str) -> list[str]:
    return [f"{h['file']}:{h['line_no']}: {h['line']}" for h in facts.get("shell.rc_lines") or []
            if h.get("variable") == name]
