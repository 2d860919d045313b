"""The verdicts a benchmark line can have (analysis.py says what each means) and the sourced thresholds behind
them. Pure data and small functions. The stage reads them while it runs (which speed switches to re-run without);
the checks that turn lines into findings, and how bad each verdict is, are checks/bench.py."""

from __future__ import annotations

import re
from typing import Any, Optional

GOOD, LOW, VERY_LOW, UNKNOWN, INFO, FAILED = "good", "low", "very low", "unknown", "info", "failed"

# Fractions of peak reached by well-configured systems; docs/bench.md gives the figures behind each.
THRESHOLDS: dict[str, dict[str, Any]] = {
    "matmul": {"good": 0.60, "low": 0.30,
               "source": "mamf-finder table (ml-engineering): H100/H200 80%, A100 87%, MI355X 68%, MI325X 60% of dense peak"},
    "bandwidth": {"good": 0.75, "low": 0.50,
                  "source": "H200 read 3.89/4.8 TB/s (81%), MI300X read 4.2/5.3 (79%) and scale 4.0 (75%), RX 6900 XT 456/512 (89%) (RRZE gpu-benches)"},
    "host_link": {"good": 0.70, "low": 0.40,
                  "source": "nvbandwidth on H200 PCIe5 x16: 55.4 of 63 GB/s (88%); TransferBench MI300X pass mark 45 GB/s (~71% of 63)"},
    "decode_roofline": {"good": 0.50, "low": 0.20,
                        "source": "llama.cpp tg on RX 7900 XTX ~54% of the spec-bandwidth roofline (perf-anchors sec. 6)"},
}
# Where the generic matmul fraction is wrong for an architecture.
MATMUL_OVERRIDES = [
    {"gfx": r"^gfx94", "dtypes": ("bf16", "fp16"), "good": 0.45, "low": 0.25,
     "source": "MI300X bf16 MAMF 668 of 1307 TFLOPS (51%) with TunableOp (ml-engineering)"},
    {"gfx": r"^gfx11", "dtypes": ("fp32",), "good": 0.35, "low": 0.18,
     "source": "RDNA3 fp32 peak counts dual issue that GEMMs do not reach: RX 7900 XTX 23-27 of 61 TFLOPS (rocBLAS #1380)"},
]
# Launch overhead per tiny op, microseconds: (good up to, low up to); above is very low.
LAUNCH_LIMITS = {
    "back_to_back": (15.0, 25.0, "PyTorch eager on a healthy H200 measured 6.7-10.4 us/op over six runs on 2026-12-01 "
                                 "(docs/measurements.md); a host that busy or slow doubles it"),
    "sync_each": (30.0, 100.0, "launch + sync round trip: A100 17 us, ROCm R9700 18.5 us, MI325X 16.9 us (perf-anchors sec. 4)"),
    "graph": (5.0, 10.0, "graph replay ~1.4 us/kernel on H200, 2-3 us on ROCm (perf-anchors sec. 4)"),
}
NO_BF16_MATRIX = r"^gfx(8|90[0-6]|10[13])"  # Vega/GCN before gfx908, RDNA1/RDNA2
# An explanation with no cause to name says so; the observed state is added to it (evidence.py).
NOT_EXPLAINED = "not explained by anything observed"


def verdict(fraction: Optional[float], good: float, low: float) -> str:
    if fraction is None:
        return UNKNOWN
    if fraction >= good:
        return GOOD
    if fraction >= low:
        return LOW
    return VERY_LOW


def matmul_thresholds(gfx: str, dtype: str) -> dict[str, Any]:
    for rule in MATMUL_OVERRIDES:
        if re.match(rule["gfx"], gfx or "") and dtype in rule["dtypes"]:
            return rule
    return THRESHOLDS["matmul"]
