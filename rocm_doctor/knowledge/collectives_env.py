"""NCCL / RCCL environment: which variables matter to multi-GPU work, and which ones turn a transport off (pure).

Meanings from the NCCL user guide, "Environment Variables" (docs.nvidia.com/deeplearning/nccl/user-guide/docs/
env.html); RCCL reads the same NCCL_* variables (ROCm/rccl docs, "RCCL environment variables").
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from rocm_doctor.knowledge import env_catalog
from rocm_doctor.parsers.shell_secrets import secret_name

# besides every variable of data/env_catalog.json: the families of the collective libraries and their transports
RELEVANT_PREFIXES = ("NCCL_", "RCCL_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_", "TORCH_SYMM_MEM_", "HSA_", "HIP_",
                     "ROCR_", "GLOO_", "UCX_", "FI_", "LD_PRELOAD")
# set per process by launchers: they differ between nodes by design
PER_PROCESS = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK", "NODE_RANK",
               "MASTER_ADDR", "MASTER_PORT"}


def relevant_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables a node report carries; one named like a secret (HIP_API_KEY) only as set, since fleet
    reports are shared."""
    return {k: "<redacted>" if secret_name(k) else v for k, v in sorted(env.items())
            if (k.startswith(RELEVANT_PREFIXES) or env_catalog.lookup(k) is not None) and k not in PER_PROCESS}


def _off(value: str) -> bool:
    return value.strip().lower() in ("0", "false", "no", "off", "disable", "disabled")


def _on(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on", "enable", "enabled")


def _loc(value: str) -> bool:
    return value.strip().upper() in ("LOC", "0")


def _set(value: str) -> bool:
    return bool(value.strip())


def _shm_level(env: Mapping[str, str]) -> str:
    return "warn" if _on(env.get("NCCL_P2P_DISABLE", "0")) else "info"


# (variable, does its value turn something off or force it, level (or a function of the env), scope, effect)
_TRANSPORT_RULES: tuple[tuple[str, Callable[[str], bool], Any, str, str], ...] = (
    ("NCCL_P2P_DISABLE", _on, "warn", "intra-node",
     "disables the peer-to-peer transport (direct GPU-to-GPU over NVLink/xGMI or PCIe): traffic between GPUs "
     "of one node goes through host memory (SHM) instead"),
    ("NCCL_P2P_LEVEL", _loc, "warn", "intra-node", "LOC / 0 means never use P2P: the same as NCCL_P2P_DISABLE=1"),
    ("NCCL_SHM_DISABLE", _on, _shm_level, "intra-node",
     "disables the shared-memory transport, used between GPUs that cannot do P2P; without it such GPUs "
     "talk over the network transport (IB or sockets)"),
    ("NCCL_IB_DISABLE", _on, "info", "inter-node",
     "disables the InfiniBand/RoCE transport: across nodes NCCL falls back to TCP sockets (harmless on one "
     "node; far slower across nodes that have IB/RoCE)"),
    ("NCCL_NET_GDR_LEVEL", _loc, "info", "inter-node",
     "LOC / 0 disables GPUDirect RDMA between the NIC and the GPU: inter-node traffic is staged through "
     "host memory"),
    ("NCCL_ALGO", _set, "info", "all",
     "forces the algorithm list instead of NCCL's own tuning; a setting copied from another machine can lower "
     "bandwidth"),
    ("NCCL_PROTO", _set, "info", "all",
     "forces the protocol list instead of NCCL's own tuning; a setting copied from another machine can lower "
     "bandwidth"),
    ("NCCL_NVLS_ENABLE", _off, "info", "intra-node",
     "NVLink SHARP (NVLS) off: a deliberate, harmless setting on many machines (all-reduce uses ring/tree "
     "instead; busbw on 8x H200 is ~366 instead of ~473 GB/s per ml-engineering's figures)"),
    ("NCCL_CUMEM_ENABLE", _off, "info", "intra-node",
     "disables NCCL's cuMem-based buffers (a workaround for a driver or container that cannot use them)"),
    ("RCCL_MSCCL_ENABLE", _off, "info", "all", "turns off RCCL's MSCCL algorithms (RCCL then uses its ring/tree)"),
    ("HSA_ENABLE_SDMA", _off, "info", "intra-node",
     "ROCm copies use blit kernels instead of the SDMA engines; a workaround for SDMA hangs that "
     "changes copy bandwidth"),
)


def transport_settings(env: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each variable that disables or forces a NCCL/RCCL transport, algorithm or protocol.

    Every entry: name, value, level ("warn": slows or breaks multi-GPU work where it applies; "info": deliberate
    or only matters across nodes), scope ("intra-node" / "inter-node" / "all"), effect (one sentence).
    """
    out: list[dict[str, Any]] = []
    for name, applies, level, scope, effect in _TRANSPORT_RULES:
        value = env.get(name)
        if value is not None and applies(value):
            out.append({"name": name, "value": value, "level": level(env) if callable(level) else level,
                        "scope": scope, "effect": effect})
    return out
