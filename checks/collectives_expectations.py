"""What the interconnect should reach, from published measurements only (pure data + matching).

Every figure names its source (see docs/distributed.md). Where no
source gives a figure for the GPU and GPU count at hand, there is no expectation: the check shows raw figures.

- All-reduce bus bandwidth (busbw), large payloads:
  - 8x H200 (NVLink 4 through NVSwitch), nccl-tests all_reduce_perf, 8 GiB payload, torch 2.9.1+cu130 /
    NCCL 2.27.7 era: with NVLS off (ring) 363.3 (4 GPUs), 364.4 (5), 365.1 (6), 365.7 (7), 365.6 (8) GB/s; with
    NVLS 414.2 (5), 435.6 (6), 460.0 (7), 473.1 (8) GB/s. Source: stas00/ml-engineering network/README.md.
  - 8x MI300X, all_reduce_bench.py, 4 GiB payload: 312.9 GB/s with 8 GPUs, 47.7 GB/s with 2 GPUs.
    Source: stas00/ml-engineering network/README.md.
- Peer copy (one GPU to another, copy engine):
  - H200 pair over NVLink 4, nvbandwidth memcpy CE: 396.40 GB/s unidirectional (88% of 450).
    Source: stas00/ml-engineering network/README.md.
  - MI300X: TransferBench health check passes a per-XGMI-link rate of 45 GB/s.
    Source: ROCm/TransferBench RunHealthCheck (perf-anchors §0).
No source in hand gives an all-reduce figure for 2 or 3 NVLink-4 GPUs, nor for PCIe-only GPUs: no expectation.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

ML_ENG = "stas00/ml-engineering network/README.md (8x H200, nccl-tests all_reduce_perf, 8 GiB payload)"
ML_ENG_MI300X = "stas00/ml-engineering network/README.md (8x MI300X, all_reduce_bench.py, 4 GiB payload)"

NVLINK4_NAMES = ("H100", "H200")
NVLINK4_EXCLUDE = ("PCIE", "NVL", "GH200")  # PCIe cards (H100 PCIe, H100/H200 NVL: bridges at most); GH200: 1 per node

ALLREDUCE_RING = {4: 363.3, 5: 364.4, 6: 365.1, 7: 365.7, 8: 365.6}
ALLREDUCE_NVLS = {5: 414.2, 6: 435.6, 7: 460.0, 8: 473.1}
MI300X_ALLREDUCE = {2: 47.7, 8: 312.9}

PEER_COPY = (
    {"family": "nvlink4", "gbs": 396.40, "source": "stas00/ml-engineering network/README.md (nvbandwidth, 8x H200, "
                                                     "device-to-device memcpy CE, unidirectional)"},
    {"family": "mi300x", "gbs": 45.0, "source": "ROCm/TransferBench RunHealthCheck (per-XGMI-link criterion)"},
)


def family(names: Iterable[Optional[str]]) -> Optional[str]:
    """The interconnect family every listed GPU belongs to: nvlink4 (H100/H200 SXM), mi300x, else None."""
    found = set()
    for name in names:
        upper = str(name or "").upper()
        if any(n in upper for n in NVLINK4_NAMES) and not any(x in upper for x in NVLINK4_EXCLUDE):
            found.add("nvlink4")
        elif "MI300X" in upper:
            found.add("mi300x")
        else:
            found.add(None)
    return found.pop() if len(found) == 1 else None


def allreduce_expectation(names: Sequence[Optional[str]], world_size: int, nvls_enabled: bool,
                          scope: str = "local") -> Optional[dict[str, Any]]:
    """The published all-reduce busbw for these GPUs and this GPU count, or None when no source gives one."""
    if scope != "local":
        return None  # the published figures are for one node
    fam = family(names)
    n = int(world_size)
    if fam == "nvlink4":
        if nvls_enabled and n in ALLREDUCE_NVLS:
            return {"busbw_gbs": ALLREDUCE_NVLS[n], "family": fam, "world_size": n, "algo": "NVLS",
                    "source": ML_ENG, "match": f"{n}x H100/H200 SXM (NVLink 4), NVLS on; measured on H200"}
        if n in ALLREDUCE_RING:
            return {"busbw_gbs": ALLREDUCE_RING[n], "family": fam, "world_size": n, "algo": "Ring",
                    "source": ML_ENG, "match": f"{n}x H100/H200 SXM (NVLink 4), NVLS off; measured on H200"}
        return None
    if fam == "mi300x" and n in MI300X_ALLREDUCE:
        return {"busbw_gbs": MI300X_ALLREDUCE[n], "family": fam, "world_size": n, "algo": None,
                "source": ML_ENG_MI300X, "match": f"{n}x MI300X"}
    return None


def peer_copy_expectation(names: Sequence[Optional[str]]) -> Optional[dict[str, Any]]:
    fam = family(names)
    for row in PEER_COPY:
        if row["family"] == fam:
            return dict(row)
    return None


def nvls_enabled(env: dict) -> bool:
    return str(env.get("NCCL_NVLS_ENABLE", "")).strip() not in ("0", "false", "False")
