"""What a fact is, in words a user reads: a skipped check says what it lacked, never a fact key."""

from __future__ import annotations

WORDS = {
    "bench.results": "the benchmark results",
    "collectives.results": "the collectives results",
    "gpu.inventory": "the list of GPUs",
    "gpu.kernels": "the GPU kernel results",
    "gpu.live": "the GPUs' live state",
    "gpu.pci": "the GPUs on the PCI bus",
    "kfd.nodes": "the KFD topology",
    "linux.kernel_cmdline": "the kernel command line",
    "linux.gpu_events": "the GPU failures in this boot's kernel log",
    "linux.kernel_log_access": "this boot's kernel log",
    "nvidia.driver": "the NVIDIA driver torch met",
    "online.package_index": "whether the package index is reachable",
    "platform.os": "the operating system",
    "python.target": "the interpreter to diagnose",
    "rocm.libraries": "the ROCm math libraries",
    "rocm.paths": "the ROCm install paths",
    "run.env": "the environment of the service or kernel that runs the model",
    "rocminfo.agents": "rocminfo's list of agents",
    "smi.devices": "the GPUs amd-smi or rocm-smi list",
    "torch.arch_list": "torch's list of GPU targets",
    "torch.available": "whether torch sees a GPU",
    "torch.devices": "the GPUs torch sees",
    "torch.flavour": "which build of torch this is (CPU, CUDA or ROCm)",
    "torch.installed": "whether torch is installed",
    "torch.probe": "the torch probe",
    "windows.cxx_headers": "where the C++ standard headers are",
    "windows.devshell": "the Visual Studio developer shell",
    "windows.dlls": "the DLLs torch loaded",
    "windows.driver": "the display driver",
    "windows.env.scopes": "the User and Machine environment",
    "windows.hip.hip_path": "HIP_PATH",
    "windows.hip.installs": "the HIP SDK installs",
    "windows.hipinfo": "hipInfo's output",
    "windows.path": "PATH",
    "windows.vs": "the Visual Studio installs",
}


def about(key: str) -> str:
    """The words for `key`; a key not listed reads as its parts ("shell rc lines")."""
    return WORDS.get(key) or " ".join(key.replace("_", " ").split("."))
