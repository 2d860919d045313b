"""What each benchmark preset measures, and the time budget of each section.

The sizes are payload parameters of the child, so tests run the same code with tiny sizes on the CPU device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MIB = 1 << 20
GIB = 1 << 30
PRESETS = ("full", "quick", "tiny")
SECTION_ORDER = ("matmul", "memory", "launch", "sdpa", "compare", "cnn", "sweep", "conv", "decoder", "reference")
TITLES = {
    "matmul": "Matmul throughput",
    "memory": "Memory bandwidth",
    "launch": "Launch overhead",
    "sdpa": "Scaled dot-product attention",
    "compare": "CPU vs GPU",
    "cnn": "Small CNN training step (SimpleCNN)",
    "sweep": "Small CNN: batch sweep, GPU against CPU",
    "conv": "Convolution (forward + backward)",
    "decoder": "LLM-shaped decoder (Qwen3-0.6B shapes)",
    "reference": "Plain reference (do_bench)",
    "hang": "Hang (test aid)",
}
# The sections whose GPU title says what a CPU-device run does not measure.
CPU_TITLES = {"compare": "CPU figures (what the GPU is compared with)", "sweep": "Small CNN: batch sweep on the CPU"}


def title(section: str, on_cpu: bool = False) -> str:
    return (on_cpu and CPU_TITLES.get(section)) or TITLES.get(section, section)


@dataclass
class Section:
    name: str
    timeout_s: float
    params: dict[str, Any] = field(default_factory=dict)
    kind: str = ""

    def to_payload(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind or self.name, "timeout_s": self.timeout_s, "params": self.params}


def _sdpa_shapes(seq: int, heads: int = 16, dim: int = 128) -> list[dict[str, Any]]:
    return [
        {"name": "prefill", "b": 1, "h": heads, "sq": seq, "skv": seq, "d": dim, "causal": True},
        {"name": "decode", "b": 1, "h": heads, "sq": 1, "skv": seq, "d": dim, "causal": False},
    ]


TINY_DECODER = {"hidden": 64, "layers": 2, "heads": 4, "kv_heads": 2, "head_dim": 16, "intermediate": 128,
                "vocab": 512}


SWEEP_BATCHES = [16, 32, 64, 128, 256, 512, 1024]
# The full preset decodes in chunks of 8 tokens and stops once the chunks' per-token times agree to within this
# relative spread (standard error of their mean), 64 tokens at most: each new context length's first pass is
# about as costly as the last, so fewer tokens give the same figure (docs/measurements.md).
DECODE_SPREAD = 0.02
# The full preset's cudnn.benchmark pass starts no configuration after this many seconds: on a host's first run
# cuDNN's search took 37-44 s for the 30 (kernels the driver had not compiled before), 11 s on a later run, so a
# first run measures some of each shape and says which it left out (docs/measurements.md).
BENCHMARK_SEARCH_S = 15.0
QUICK_CONV = [
    {"name": "SimpleCNN conv2", "n": 64, "c": 16, "k": 32, "h": 16, "w": 16, "r": 3, "pad": 1},
    {"name": "3x3", "n": 32, "c": 64, "k": 64, "h": 128, "w": 128, "r": 3, "pad": 1},
]
TINY_CONV = [
    {"name": "3x3", "n": 2, "c": 4, "k": 4, "h": 8, "w": 8, "r": 3, "pad": 1},
    {"name": "depthwise", "n": 2, "c": 4, "k": 4, "h": 8, "w": 8, "r": 3, "pad": 1, "groups": 4},
]


# The CPU device (`bench --device cpu`): sizes a 2-core machine measures in about 20 s whatever the preset, with
# time limits far above what they take, so a slow CPU still finishes them. GPU-only passes and formats are left out.
CPU_SIZES = {
    "matmul": (60, {"dtypes": ["fp32", "bf16"], "shapes": [[1024, 1024, 1024]], "rotate_bytes": 32 * MIB,
                    "rep_ms": 100, "warmup_ms": 10, "max_iters": 10}),
    "memory": (60, {"copy_bytes": 64 * MIB, "host_bytes": 16 * MIB, "host_reps": 2, "rep_ms": 40}),
    "launch": (60, {"iters": 500, "graph_ops": 10, "graph_replays": 2}),
    "sdpa": (60, {"dtypes": ["fp32"], "shapes": _sdpa_shapes(256, 8, 64), "backends": ["FLASH_ATTENTION", "MATH"],
                  "rep_ms": 20, "max_iters": 10}),
    "cnn": (60, {"batch": 8, "steps": 2, "profile_steps": 1, "launch_iters": 100, "optimizer_profile_calls": 0,
                 "variants": []}),
    "compare": (60, {"matmul_n_gpu": 512, "matmul_n_cpu": 1024, "cnn_steps_gpu": 2, "cnn_steps_cpu": 3,
                     "cnn_warmup": 1, "batch": 16, "rep_ms": 40, "cpu_read_bytes": 64 * MIB}),
    "sweep": (60, {"batches": [16, 64], "budget_s": 10, "gpu_steps": 2, "cpu_steps": 1, "profile_steps": 0}),
    "conv": (60, {"budget_s": 40, "passes": ["default"], "shapes": TINY_CONV[:1], "dtypes": ["fp32"],
                  "layouts": ["nchw"], "rep_ms": 5, "max_iters": 5, "profile": False}),
    "decoder": (90, {"config": {"layers": 4, "vocab": 32768},  # Qwen3-0.6B's layer shapes, fewer of them
                     "prefill_tokens": 16, "decode_tokens": 4, "prefill_reps": 1, "profile_steps": 1, "dtype": "fp32",
                     "cpu": {"prefill_tokens": 16, "decode_tokens": 4, "dtype": "fp32", "profile_steps": 1}}),
    "reference": (60, {"mm_n": 1024, "copy_bytes": 64 * MIB}),
}


def build(preset: str = "full", sections: tuple[str, ...] = (), device: str = "cuda") -> list[Section]:
    """The sections of a preset, in run order; `sections` keeps only those named. On the CPU device every preset but
    tiny takes the CPU's sizes."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r} (choose from {', '.join(PRESETS)})")
    if preset == "full":
        plan = [
            Section("matmul", 90, {"dtypes": ["fp32", "tf32", "fp16", "bf16"],
                                   "shapes": [[4096, 4096, 4096], [8192, 8192, 8192], [16384, 4096, 2048]],
                                   "rotate_bytes": 512 * MIB, "rep_ms": 100, "warmup_ms": 25}),
            Section("memory", 60, {"copy_bytes": GIB, "host_bytes": 256 * MIB, "host_reps": 10, "rep_ms": 100}),
            Section("launch", 30, {"iters": 4000, "graph_ops": 200, "graph_replays": 20}),
            Section("sdpa", 60, {"dtypes": ["fp16", "bf16"], "shapes": _sdpa_shapes(2048), "rep_ms": 50}),
            Section("conv", 180, {"budget_s": 160, "rep_ms": 20, "max_iters": 50, "in_process": True,
                                  "benchmark_budget_s": BENCHMARK_SEARCH_S}),
            Section("cnn", 90, {"batch": 64, "steps": 50, "profile_steps": 5, "launch_iters": 1000}),
            Section("compare", 90, {"matmul_n_gpu": 4096, "matmul_n_cpu": 4096, "cnn_steps_gpu": 100,
                                    "cnn_steps_cpu": 30, "cnn_warmup": 5, "batch": 64, "cpu_read_bytes": 512 * MIB}),
            Section("sweep", 90, {"batches": SWEEP_BATCHES, "budget_s": 50, "gpu_steps": 20, "cpu_steps": 3,
                                  "profile_steps": 2}),
            Section("decoder", 150, {"prefill_tokens": 512, "decode_tokens": 64, "decode_chunk": 8,
                                     "decode_spread": DECODE_SPREAD, "prefill_reps": 3, "profile_steps": 8,
                                     "dtype": "bf16",
                                     "cpu": {"prefill_tokens": 64, "decode_tokens": 8, "dtype": "fp32"}}),
            Section("reference", 60, {"mm_n": 8192, "copy_bytes": GIB}),
        ]
    elif preset == "quick":
        plan = [
            Section("matmul", 45, {"dtypes": ["fp32", "tf32", "fp16", "bf16"], "shapes": [[4096, 4096, 4096]],
                                   "rotate_bytes": 512 * MIB, "rep_ms": 40, "warmup_ms": 10, "max_iters": 50}),
            Section("memory", 40, {"copy_bytes": 512 * MIB, "host_bytes": 64 * MIB, "host_reps": 5, "rep_ms": 40}),
            Section("launch", 20, {"iters": 1000, "graph_ops": 100, "graph_replays": 10}),
            Section("sdpa", 40, {"dtypes": ["bf16"], "shapes": _sdpa_shapes(2048), "rep_ms": 20, "max_iters": 50}),
            Section("conv", 90, {"budget_s": 80, "passes": ["default"], "shapes": QUICK_CONV, "in_process": True,
                                 "dtypes": ["fp32", "fp16"], "rep_ms": 10, "max_iters": 20}),
            Section("cnn", 60, {"batch": 64, "steps": 20, "profile_steps": 3, "launch_iters": 500,
                                "optimizer_profile_calls": 0, "variants": ["fused_adam", "cuda_graph"]}),
            Section("compare", 60, {"matmul_n_gpu": 4096, "matmul_n_cpu": 1024, "cnn_steps_gpu": 30,
                                    "cnn_steps_cpu": 5, "cnn_warmup": 3, "batch": 64, "rep_ms": 40,
                                    "cpu_read_bytes": 256 * MIB}),
            Section("sweep", 60, {"batches": [64, 256, 1024], "budget_s": 30, "gpu_steps": 10, "cpu_steps": 2,
                                  "profile_steps": 1}),
            Section("decoder", 120, {"prefill_tokens": 128, "decode_tokens": 8, "prefill_reps": 1,
                                     "profile_steps": 2, "dtype": "bf16",
                                     "cpu": {"prefill_tokens": 16, "decode_tokens": 2, "dtype": "fp32"}}),
            Section("reference", 40, {"mm_n": 4096, "copy_bytes": 512 * MIB}),
        ]
    else:  # tiny: exercises every code path in seconds on a CPU
        plan = [
            Section("matmul", 60, {"dtypes": ["fp32", "tf32", "bf16"], "shapes": [[64, 64, 64], [96, 32, 64]],
                                   "rotate_bytes": 1 * MIB, "rep_ms": 5, "warmup_ms": 1, "max_iters": 10}),
            Section("memory", 60, {"copy_bytes": 4 * MIB, "host_bytes": MIB, "host_reps": 2, "rep_ms": 5}),
            Section("launch", 60, {"iters": 200, "graph_ops": 10, "graph_replays": 2}),
            Section("sdpa", 60, {"dtypes": ["bf16"], "shapes": _sdpa_shapes(64, 2, 16),
                                 "backends": ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"], "rep_ms": 5,
                                 "max_iters": 10}),
            Section("cnn", 60, {"batch": 4, "steps": 2, "profile_steps": 1, "launch_iters": 50,
                                "optimizer_profile_calls": 1}),
            Section("compare", 60, {"matmul_n_gpu": 64, "matmul_n_cpu": 64, "cnn_steps_gpu": 2, "cnn_steps_cpu": 2,
                                    "cnn_warmup": 1, "batch": 4, "rep_ms": 5, "cpu_read_bytes": 4 * MIB}),
            Section("sweep", 60, {"batches": [2, 4, 8], "budget_s": 30, "gpu_steps": 2, "cpu_steps": 1,
                                  "profile_steps": 1}),
            Section("conv", 120, {"budget_s": 110, "shapes": TINY_CONV, "dtypes": ["fp32", "bf16"], "rep_ms": 2,
                                  "max_iters": 3, "miopen": True, "log_shape": "3x3", "log_dtypes": ["fp32"]}),
            Section("decoder", 90, {"config": TINY_DECODER, "prefill_tokens": 16, "decode_tokens": 4,
                                    "decode_chunk": 2, "prefill_reps": 1, "profile_steps": 2, "dtype": "bf16",
                                    "cpu": {"prefill_tokens": 8, "decode_tokens": 2, "decode_chunk": 1,
                                            "dtype": "fp32", "profile_steps": 2}}),
            Section("reference", 60, {"mm_n": 64, "copy_bytes": 4 * MIB}),
        ]
    if device == "cpu" and preset != "tiny":
        plan = [Section(s.name, *CPU_SIZES[s.name], kind=s.kind) if s.name in CPU_SIZES else s for s in plan]
    if sections:
        unknown = [s for s in sections if s not in SECTION_ORDER]
        if unknown:
            raise ValueError(f"unknown section(s): {', '.join(unknown)} (choose from {', '.join(SECTION_ORDER)})")
        plan = [s for s in plan if s.name in sections]
    return plan
