"""Shared reading of the AMD facts for the amd_* checks (no checks here): the GPUs, and per GPU its entry of the
fact `gpu.targets` (its hardware gfx, the override in effect, the gfx it runs: computed once by
interpret/gpu_targets.py, never here), torch's arch list, the ROCm version, and remedies several checks share."""

from __future__ import annotations

import re

from rocm_doctor.engine import remedy as S
from rocm_doctor.facts.keys import (GPU_INVENTORY, GPU_TARGETS, HIP_VERSION, LOG_MACHINE, PLATFORM_OS_RELEASE,
                                    ROCM_PATHS_KEY, SHELL_RC_LINES, TORCH_ARCH_LIST, TORCH_FLAVOUR, TORCH_HIP,
                                    TORCH_VERSION)
from rocm_doctor.knowledge import wheels
from rocm_doctor.parsers import hsa_override

_TORCH_INDEX = re.compile(r"\+rocm(\d+\.\d+(?:\.\d+)?)")
OVERRIDE = hsa_override.VARIABLE


def gpus(facts) -> list[dict]:
    """AMD GPUs of gpu.inventory (CPU agents and NPUs are already excluded)."""
    return [g for g in facts.get(GPU_INVENTORY) or [] if isinstance(g, dict)]




def label(gpu: dict) -> str:
    name = gpu.get("name") or "AMD GPU"
    return f"GPU {gpu.get('index')} ({name})"


def target(facts, gpu: dict) -> dict:
    """This GPU's entry of gpu.targets ({} when the fact is missing, as it is with no inventory)."""
    return next((t for t in facts.get(GPU_TARGETS) or [] if isinstance(t, dict) and t.get("index") == gpu.get("index")), {})


def _judged(facts, gpu: dict) -> dict:
    """The entry, read from the override variables of the judged environment: reading them here tells a finding
    about a service's or kernel's environment that it judged that one (engine/run_env.py)."""
    for variable in hsa_override.names(gpu.get("node")):
        facts.env.get(variable)
    return target(facts, gpu)


def real_gfx(facts, gpu: dict) -> str | None:
    return _judged(facts, gpu).get("real_gfx")


def effective_gfx(facts, gpu: dict) -> str | None:
    return _judged(facts, gpu).get("effective_gfx")


def override_for(facts, gpu: dict) -> tuple[str, str] | None:
    """(variable, value) of the override in effect for this GPU."""
    found = _judged(facts, gpu).get("override")
    return (found["variable"], found["value"]) if found else None


def recommended_override(facts, gpu: dict) -> str | None:
    """The override of this GPU's family, as gpu.targets computed it (None where its gfx is unknown or has none)."""
    return _judged(facts, gpu).get("recommended_override")


def integrated(facts, gpu: dict) -> bool:
    return bool(target(facts, gpu).get("integrated"))


def torch_index(facts) -> str | None:
    """"2.7.1+rocm6.3" → "rocm6.3" (the download.pytorch.org index the wheel came from), else None."""
    return index_of(facts.get(TORCH_VERSION))


def index_of(torch_version: str | None) -> str | None:
    match = _TORCH_INDEX.search(torch_version or "")
    return f"rocm{match.group(1)}" if match else None


def arch_list(facts) -> tuple[list[str] | None, str]:
    """torch's arch list and where it comes from: measured (get_arch_list) or the table for its wheel index."""
    measured = facts.get(TORCH_ARCH_LIST)
    if measured:
        return list(measured), "torch.cuda.get_arch_list()"
    if facts.get(TORCH_FLAVOUR) == "rocm" and torch_index(facts):
        table = wheels.index_archs(torch_index(facts))
        if table:
            return table, f"the {torch_index(facts)} wheel's targets (data/torch_wheels.json; torch could not report its own)"
    return None, ""


def covered(archs, gfx: str | None) -> bool:
    return bool(gfx) and wheels.covers(archs, gfx)


def rocm_version(facts) -> tuple[str | None, str]:
    """The installed ROCm point release when an install says it (.info/version), else HIP's, else torch's HIP, else
    what a log given with --log says (a library path's /opt/rocm-X, a HIP version line)."""
    for install in (facts.get(ROCM_PATHS_KEY) or {}).get("installs") or []:
        if install.get("active") and install.get("version"):
            return install["version"].split("-")[0], f"{install['path']}/.info/version"
    hip = facts.get(HIP_VERSION) or {}
    if hip.get("text"):
        return hip["text"], hip.get("source") or "hipconfig"
    if facts.get(TORCH_HIP):
        return facts[TORCH_HIP], "torch.version.hip"
    log = facts.get(LOG_MACHINE) or {}  # a log replayed without its machine: the release its paths name
    for key in ("rocm", "hip"):
        if log.get(key):
            return log[key][0]["version"], f"the log {log.get('path')}: {log[key][0]['line'][:120]}"
    return None, ""




# ---- shared remedies ----------------------------------------------------------------------------------------------

_GRUBBY = {"fedora", "rhel", "centos"}  # with ID_LIKE this covers Rocky, Alma, Oracle Linux
_UPDATE_GRUB = {"debian", "ubuntu"}


def kernel_parameter_steps(facts, params: str, note: str) -> tuple[list, list]:
    """(steps, alternatives) that add kernel parameters for the next boot: grubby on Fedora/RHEL, else
    /etc/default/grub and update-grub (Debian, Ubuntu); grubby is the alternative when the distribution is unknown."""
    release = facts.get(PLATFORM_OS_RELEASE) or {}
    family = {release.get("ID", "")} | set(str(release.get("ID_LIKE", "")).split())
    grubby = [S.run_command(["sudo", "grubby", "--update-kernel=ALL", f"--args={params}"],
                            description=f"add {params} to the kernel command line of every installed kernel, then "
                            "reboot", needs_admin=True, then=S.AFTER_REBOOT, note=note)]
    grub = [S.run_command(["sudo", "sed", "-i", f's/^GRUB_CMDLINE_LINUX_DEFAULT="/&{params} /', "/etc/default/grub"],
                          description=f"add {params} to the kernel command line (/etc/default/grub)",
                          needs_admin=True, note=note),
            S.run_command(["sudo", "update-grub"], description="regenerate the GRUB configuration, then reboot",
                          needs_admin=True, then=S.AFTER_REBOOT, note="the kernel parameters apply after a reboot")]
    if family & _GRUBBY:
        return grubby, []
    if family & _UPDATE_GRUB:
        return grub, []
    return grub, [S.alternative("Fedora, RHEL and their relatives: add them with grubby", *grubby,
                                why_not_first="the distribution is unknown here; /etc/default/grub and update-grub "
                                "are Debian's and Ubuntu's way")]


def rc_evidence(facts, name: str) -> list[str]:
    return [f"{h['file']}:{h['line_no']}: {h['line']}" for h in facts.get(SHELL_RC_LINES) or []
            if h.get("variable") == name]
