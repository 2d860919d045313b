"""The arithmetic behind the benchmark figures (docs/bench.md): FLOPs, bytes moved, rates and rooflines. Pure."""

from __future__ import annotations

import re
from typing import Optional

# PCIe generation by its GT/s: usable GB/s per lane and direction (after line encoding).
PCIE_GBS_PER_LANE = {2.5: 0.25, 5.0: 0.5, 8.0: 0.985, 16.0: 1.969, 32.0: 3.938, 64.0: 7.563}


def matmul_flops(m: float, n: float, k: float) -> float:
    return 2.0 * m * n * k


def tflops(flops: float, ms: float) -> float:
    return flops / (ms * 1e-3) / 1e12


def copy_bytes(nbytes: float) -> float:
    """A device copy reads every byte once and writes it once."""
    return 2.0 * nbytes


def gbs(nbytes: float, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def sdpa_flops(b: int, h: int, sq: int, skv: int, d: int, causal: bool) -> float:
    """QK^T and PV, 2 FLOP per multiply-add each; a causal square mask does about half the work."""
    return 4.0 * b * h * sq * skv * d * (0.5 if causal and sq == skv else 1.0)


def decode_bytes_per_token(weight_bytes: float, kv_bytes_per_position: float, context: float) -> float:
    """Batch-1 decode reads every weight once (tied lm_head included) plus the KV cache so far."""
    return weight_bytes + kv_bytes_per_position * context


def roofline_tokens_per_s(bandwidth_gbs: float, bytes_per_token: float) -> float:
    return bandwidth_gbs * 1e9 / bytes_per_token


def pcie_gbs(speed: Optional[str], width: Optional[str]) -> Optional[float]:
    """'32.0 GT/s PCIe', '16' -> 63.0 GB/s per direction."""
    try:
        gt = float(re.match(r"\s*([\d.]+)", speed or "").group(1))
        lanes = int(str(width).strip())
    except (AttributeError, ValueError):
        return None
    per_lane = PCIE_GBS_PER_LANE.get(gt)
    return round(per_lane * lanes, 2) if per_lane and lanes > 0 else None
