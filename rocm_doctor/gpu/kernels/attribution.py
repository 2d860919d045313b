"""Which library ran a case: device kernel names (from torch.profiler) and aten op names mapped to a library.

Simple, ordered pattern rules: the first rule that matches a kernel name wins. The names are the ones the
libraries really emit, e.g. 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize...' (cuBLAS),
'Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_...' (rocBLAS/hipBLASLt Tensile), 'MIOpenBatchNormFwdTrainSpatial'
(MIOpen), 'flash_fwd_kernel<...>' (flash-attention), 'fmha_cutlassF_...' (efficient attention),
'void vector_fft<...>' (cuFFT). Unknown names stay unattributed rather than guessed.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Optional

# (library, vendor or None for both, pattern). Order matters: attention before CUTLASS, CK before Tensile.
KERNEL_RULES: list[tuple[str, Optional[str], str]] = [
    ("runtime copy/memset", None, r"^Memcpy |^Memset "),
    ("flash-attention", None, r"flash_fwd|flash_bwd|pytorch_flash::|flash::|flash_attn"),
    ("efficient-attention", "nvidia", r"fmha_cutlass|fmha|efficient_attention|AttentionKernel|attention_kernel"),
    ("cuDNN", "nvidia", r"cudnn|_fprop_|_dgrad_|_wgrad_|implicit_convolve|convolve_sgemm|winograd|Winograd|fft2d_r2c|"
                        r"fft2d_c2r|nchwToNhwc|nhwcToNchw|bn_fw_|bn_bw_|batchnorm_fwd|batchnorm_bwd|cudnn_generated"),
    ("CUTLASS", "nvidia", r"cutlass"),
    ("cuBLAS/cuBLASLt", "nvidia", r"xmma_gemm|nvjet|sgemm|hgemm|dgemm|gemmSN|gemmk1|gemv|_gemm_|cublas|"
                                  r"h\d+gemm|s\d+gemm|splitKreduce"),
    ("cuFFT", "nvidia", r"vector_fft|regular_fft|fft_|_fft|Radix\d|radix\d|cufft"),
    ("aotriton", "amd", r"aotriton|attn_fwd|attn_bwd|bwd_kernel_dk_dv|bwd_kernel_dq|bwd_preprocess"),
    ("CK", "amd", r"ck::|ck_tile|kernel_gemm_xdl|device_gemm|device_grouped_conv|gridwise_gemm|"
                  r"kernel_grouped_conv|composable_kernel|fmha_fwd|fmha_bwd"),
    ("MIOpen", "amd", r"miopen|naive_conv|igemm|ConvHip|conv_fwd|conv_bwd|conv_wrw|gridwise_convolution|Im2Col|"
                      r"SubSample|UpSample|Col2Im|winograd|Winograd|BatchNorm|batchnorm|transpose_NCHW|"
                      r"gridwise_generic_reduction|sp3AsmConv|asm_conv|conv1x1|MIOpenConv"),
    ("hipBLASLt", "amd", r"hipblaslt|hipBLASLt|_UserArgs|_SKFTR\d"),
    ("rocBLAS/Tensile", "amd", r"^Cijk_|^Cij_|Tensile|rocblas"),
    ("rocFFT", "amd", r"fft_fwd|fft_back|fft_inv|rocfft|fft_rtc|transpose_kernel|stockham|_sbcc|_sbrr|_sbcr|bluestein"),
    ("PyTorch native", None, r"at::native::|elementwise_kernel|reduce_kernel|vectorized_|unrolled_elementwise|"
                             r"distribution_elementwise|softmax_warp|cunn_|index_elementwise|indexSelect|"
                             r"scatter_gather|radixSort|bitonicSort|at_cuda_detail|DeviceScan|DeviceRadixSort|"
                             r"jiterator|CatArrayBatched|fill_kernel"),
]

# aten ops that say which backend served an operator (the CPU side of the trace).
OP_RULES: list[tuple[str, str]] = [
    (r"_scaled_dot_product_flash_attention_for_cpu", "flash-attention (CPU)"),
    (r"_scaled_dot_product_flash_attention", "flash-attention"),
    (r"_scaled_dot_product_efficient_attention|_efficient_attention_forward", "efficient-attention"),
    (r"_scaled_dot_product_cudnn_attention", "cuDNN attention"),
    (r"_scaled_dot_product_attention_math", "math (unfused)"),
    (r"miopen_", "MIOpen"),
    (r"cudnn_", "cuDNN"),
    (r"mkldnn_", "oneDNN"),
    (r"_slow_conv|thnn_conv", "native slow conv (fallback)"),
    (r"_fft_", "FFT"),
]

HELPERS = ("PyTorch native", "runtime copy/memset")  # listed after the math libraries

_COMPILED = [(lib, vendor, re.compile(pattern)) for lib, vendor, pattern in KERNEL_RULES]
_COMPILED_OPS = [(re.compile(pattern), label) for pattern, label in OP_RULES]


def library_of(kernel: str, vendor: Optional[str] = None) -> Optional[str]:
    """The library a device kernel name belongs to, or None. `vendor` (amd, nvidia) limits the rules tried."""
    for library, rule_vendor, pattern in _COMPILED:
        if vendor in ("amd", "nvidia") and rule_vendor not in (None, vendor):
            continue
        if pattern.search(kernel):
            return library
    return None


def backend_of_op(op: str) -> Optional[str]:
    for pattern, label in _COMPILED_OPS:
        if pattern.search(op):
            if label == "cuDNN" and "miopen" in op:
                return "MIOpen"
            return label
    return None


def attribute(kernels: Iterable[str], ops: Iterable[str] = (), vendor: Optional[str] = None) -> dict:
    """{"libraries": [...], "backends": [...], "kernels": [{"name", "library"}], "unattributed": n}."""
    rows = []
    libraries: Counter = Counter()
    for name in kernels:
        library = library_of(name, vendor)
        rows.append({"name": name, "library": library})
        if library:
            libraries[library] += 1
    backends = []
    for op in ops:
        label = backend_of_op(op)
        if label and label not in backends:
            backends.append(label)
    # Name the interesting library first: the math library, not the PyTorch native helpers around it.
    ordered = sorted(libraries, key=lambda lib: (lib in HELPERS, -libraries[lib], lib))
    return {
        "libraries": ordered,
        "backends": backends,
        "kernels": rows,
        "unattributed": sum(1 for r in rows if r["library"] is None),
    }


def short_label(attribution: Optional[dict]) -> str:
    """'rocBLAS/Tensile', 'cuDNN + PyTorch native', 'math (unfused)': one line for a table."""
    if not attribution:
        return ""
    parts = list(attribution.get("backends") or [])
    for lib in attribution.get("libraries") or []:
        if lib not in parts and lib != "runtime copy/memset":
            parts.append(lib)
    return " + ".join(parts[:3])
