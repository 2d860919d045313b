"""What a fact is, in words a user reads: a skipped check says what it lacked, never a fact key."""

from __future__ import annotations
from rocm_doctor.facts.keys import (BENCH_RESULTS, COLLECTIVES_RESULTS, GPU_INVENTORY, GPU_KERNELS, GPU_LIVE, GPU_PCI,
                                    KFD_NODES, LINUX_GPU_EVENTS, LINUX_KERNEL_CMDLINE, LINUX_KERNEL_LOG_ACCESS,
                                    NVIDIA_DRIVER, ONLINE_INDEX_KEY, PLATFORM_OS, PYTHON_TARGET, ROCMINFO_AGENTS,
                                    ROCM_LIBRARIES, ROCM_PATHS_KEY, RUN_ENV, SMI_DEVICES, TORCH_ARCH_LIST,
                                    TORCH_AVAILABLE, TORCH_DEVICES, TORCH_FLAVOUR, TORCH_INSTALLED, TORCH_PROBE,
                                    WINDOWS_CXX_HEADERS, WINDOWS_DEVSHELL, WINDOWS_DLLS, WINDOWS_DRIVER,
                                    WINDOWS_ENV_SCOPES, WINDOWS_HIPINFO, WINDOWS_HIP_HIP_PATH, WINDOWS_HIP_INSTALLS,
                                    WINDOWS_PATH, WINDOWS_VS)

WORDS = {
    BENCH_RESULTS: "the benchmark results",
    COLLECTIVES_RESULTS: "the collectives results",
    GPU_INVENTORY: "the list of GPUs",
    GPU_KERNELS: "the GPU kernel results",
    GPU_LIVE: "the GPUs' live state",
    GPU_PCI: "the GPUs on the PCI bus",
    KFD_NODES: "the KFD topology",
    LINUX_KERNEL_CMDLINE: "the kernel command line",
    LINUX_GPU_EVENTS: "the GPU failures in this boot's kernel log",
    LINUX_KERNEL_LOG_ACCESS: "this boot's kernel log",
    NVIDIA_DRIVER: "the NVIDIA driver torch met",
    ONLINE_INDEX_KEY: "whether the package index is reachable",
    PLATFORM_OS: "the operating system",
    PYTHON_TARGET: "the interpreter to diagnose",
    ROCM_LIBRARIES: "the ROCm math libraries",
    ROCM_PATHS_KEY: "the ROCm install paths",
    RUN_ENV: "the environment of the service or kernel that runs the model",
    ROCMINFO_AGENTS: "rocminfo's list of agents",
    SMI_DEVICES: "the GPUs amd-smi or rocm-smi list",
    TORCH_ARCH_LIST: "torch's list of GPU targets",
    TORCH_AVAILABLE: "whether torch sees a GPU",
    TORCH_DEVICES: "the GPUs torch sees",
    TORCH_FLAVOUR: "which build of torch this is (CPU, CUDA or ROCm)",
    TORCH_INSTALLED: "whether torch is installed",
    TORCH_PROBE: "the torch probe",
    WINDOWS_CXX_HEADERS: "where the C++ standard headers are",
    WINDOWS_DEVSHELL: "the Visual Studio developer shell",
    WINDOWS_DLLS: "the DLLs torch loaded",
    WINDOWS_DRIVER: "the display driver",
    WINDOWS_ENV_SCOPES: "the User and Machine environment",
    WINDOWS_HIP_HIP_PATH: "HIP_PATH",
    WINDOWS_HIP_INSTALLS: "the HIP SDK installs",
    WINDOWS_HIPINFO: "hipInfo's output",
    WINDOWS_PATH: "PATH",
    WINDOWS_VS: "the Visual Studio installs",
}


def about(key: str) -> str:
    """The words for `key`; a key not listed reads as its parts ("shell rc lines")."""
    return WORDS.get(key) or " ".join(key.replace("_", " ").split("."))
