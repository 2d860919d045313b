"""Per AMD GPU, the one reading of its targets that every check, stage and fix uses: its real (hardware) gfx,
the override in effect for it (HSA_OVERRIDE_GFX_VERSION_<node> before HSA_OVERRIDE_GFX_VERSION), the gfx whose
code the runtime then loads, and the override recommended for it. Fact: `gpu.targets`."""

from __future__ import annotations

from typing import Optional

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import GPU_INVENTORY, GPU_TARGETS
from rocm_doctor.facts.observations import Observations
from rocm_doctor.knowledge import catalog, overrides
from rocm_doctor.parsers import gfx as gfxlib
from rocm_doctor.parsers import hsa_override

REQUIRES = (GPU_INVENTORY,)
OVERRIDE = hsa_override.VARIABLE
HARDWARE_SOURCES = ("kfd", "amd-smi", "rocm-smi")


def override_for(env: dict, gpu: dict) -> Optional[tuple[str, str]]:
    """(variable, value) of the override that applies to this GPU: HSA_OVERRIDE_GFX_VERSION_<node> first. The one
    lookup: gpu_inventory reads it too."""
    for variable in hsa_override.names(gpu.get("node")):
        if env.get(variable, "").strip():
            return variable, env[variable].strip()
    return None


def real_gfx(gpu: dict, *envs: dict) -> Optional[str]:
    """The GPU's hardware gfx: KFD or SMI first (an override does not change them); a runtime source (rocminfo,
    torch) only when no override is set for it in any of `envs` (the judged environment and the shell's: the tools
    may have run in either); else the target of its PCI device id; None when unknown."""
    sources = gpu.get("sources") or {}
    for source in HARDWARE_SOURCES:
        if sources.get(source):
            return sources[source]
    if all(override_for(env, gpu) is None for env in envs) and gpu.get("gfx"):
        return gpu["gfx"]
    return catalog.gfx_for_pci_id(gpu.get("device_id"))


def effective_gfx(gpu: dict, env: dict, real: Optional[str]) -> Optional[str]:
    """The gfx whose code objects the runtime loads: the override's target when one is set and valid."""
    found = override_for(env, gpu)
    if found and overrides.target_of(found[1]):
        return overrides.target_of(found[1])
    return real


def integrated(gpu: dict) -> bool:
    return gpu.get("igpu") is True or (gpu.get("igpu") is None and gpu.get("gfx") in gfxlib.INTEGRATED_TARGETS)


def interpret(observations: Observations, facts: Facts) -> None:
    inventory = facts.get(GPU_INVENTORY)
    if not isinstance(inventory, list):
        facts.set_missing(GPU_TARGETS, "no AMD GPU inventory")
        return
    env = facts.env
    targets = []
    for gpu in (g for g in inventory if isinstance(g, dict)):
        found = override_for(env, gpu)
        gfx = real_gfx(gpu, env, facts.shell_env)
        targets.append({
            "index": gpu.get("index"), "node": gpu.get("node"), "name": gpu.get("name"), "integrated": integrated(gpu),
            "real_gfx": gfx, "override": {"variable": found[0], "value": found[1]} if found else None,
            "effective_gfx": effective_gfx(gpu, env, gfx), "recommended_override": overrides.recommended(gfx) if gfx else None,
        })
    facts.set(GPU_TARGETS, targets)
