"""The symptom groups that causes explain, named once: the findings a broken driver, runtime, environment or GPU
state shows up as. A check's `explains` names these groups (check ids and fnmatch patterns, rocm_doctor/engine/
relations.py) instead of spelling its own copy."""

# torch cannot use the GPU, or its probe died on the way; the GPU runtime itself refuses to start.
TORCH_SEES_NO_GPU = ("torch-cuda-unavailable", "torch-probe-crashed", "gpu-runtime-refuses")
# Everything that needs a working GPU under torch: the kernels, the override A/B, SDPA's fast paths, the bench and
# the collectives.
GPU_WORK = ("gpu-kernel*", "hsa-override-kernels-fail", "sdpa-math-fallback", "bench-*", "collective-*")
# The same on NVIDIA, where there is no override A/B.
NVIDIA_GPU_WORK = ("torch-cuda-unavailable", "gpu-kernel*", "sdpa-math-fallback", "bench-*", "collective-*")
# A GPU that torch cannot use at all: nothing runs on it.
GPU_UNUSABLE = ("torch-cuda-unavailable", "gpu-kernel*", "bench-*", "collective-*")
# The AMD kernel driver not loaded or not reachable from here.
DRIVER_SYMPTOMS = ("rocm-kernel-driver", "rocm-device-access", *TORCH_SEES_NO_GPU, *GPU_WORK)
# A ROCm user space that is incomplete or of two releases.
RUNTIME_SYMPTOMS = (*TORCH_SEES_NO_GPU, "hip-runtime-mismatch", "rocm-runtime-sees-no-gpu", "gpu-kernel*", "bench-*",
                    "collective-*")
# What a GPU that hung, crashed or reset takes down with it.
KERNEL_FAILURES = ("gpu-kernel-hang", "gpu-kernel-crash", "gpu-kernels-failed", "bench-section-failed", "collective-*")
# What the environment a service or kernel runs in decides: the override, the gfx torch loads, and all GPU work.
RUN_ENV_SYMPTOMS = ("hsa-override-gfx-version", "gfx-not-in-torch-arch-list", "rocblas-library-coverage",
                    "igpu-enumerated-first", *TORCH_SEES_NO_GPU, "gpu-kernel*", "hsa-override-kernels-fail",
                    "sdpa-math-fallback", "bench-*")
# torch not seeing the GPU, and everything that needs it to.
TORCH_GPU_WORK = ("torch-cuda-unavailable", *GPU_WORK)
