"""The facts worth comparing between two machines or two runs, each named once with the fact keys it is read
from, so that a difference can be tied to the checks that need those facts (pure over the facts).

Three kinds: the named fields below (versions, drivers, GPUs); every other fact that some check `requires`,
compared leaf by leaf (so a fact a new check needs is compared without a change here); and the environment,
less the variables a new shell changes by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional

from rocm_doctor.facts.keys import (BENCH_RESULTS, COLLECTIVES_RESULTS, GPU_INVENTORY, GPU_KERNELS, GPU_LIVE, GPU_PCI,
                                    GPU_TARGETS, HIP_VERSION, LINUX_AMDGPU_MODULE, LINUX_KERNEL_CMDLINE,
                                    ONLINE_INDEX_KEY, PLATFORM_OS, PLATFORM_RELEASE, PYTHON_TARGET,
                                    PYTHON_TARGET_VERSION, ROCMINFO_STATUS, ROCM_PATHS_KEY, TORCH_ARCH_LIST,
                                    TORCH_AVAILABLE, TORCH_CUDA_VERSION, TORCH_DEVICES, TORCH_DEVICE_COUNT, TORCH_FILE,
                                    TORCH_FLAVOUR, TORCH_HIP, TORCH_INSTALLED, TORCH_VERSION)
from rocm_doctor.knowledge import env_catalog

ENV_PREFIX = "env."
ENV_SOURCE = "env:"  # the source of an environment field: the variable, read from the observations
# Set anew by every shell, terminal or login: a change says nothing about the machine.
SESSION_ENV = {"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "WINDOWID", "TERM_SESSION_ID", "SSH_CLIENT",
               "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK", "XDG_SESSION_ID", "INVOCATION_ID", "JOURNAL_STREAM",
               "MANAGERPID", "SYSTEMD_EXEC_PID", "DBUS_SESSION_BUS_ADDRESS", "GPG_AGENT_INFO", "PYTEST_CURRENT_TEST",
               "VSCODE_GIT_IPC_HANDLE", "VSCODE_IPC_HOOK_CLI", "KITTY_PID", "KITTY_WINDOW_ID", "TMUX_PANE", "STY"}
# Variables that change what the GPU stack loads or does (ROCm, CUDA and their libraries, torch, loaders): these
# families, and every variable of data/env_catalog.json.
GPU_ENV_PREFIXES = ("ROCM", "HIP", "HSA_", "HCC_", "AMD_", "GPU_", "ROCR_", "ROCBLAS_", "ROCFFT_", "HIPBLASLT_",
                    "TENSILE_", "MIOPEN_", "RCCL_", "NCCL_", "MIGRAPHX_", "CUDA", "NVIDIA_", "CUBLAS", "CUDNN", "NVCC",
                    "TORCH", "PYTORCH_", "TRITON_", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "LD_", "DYLD_", "PYTHON",
                    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "LLVM_", "DEVICE_LIB", "XLA_", "WSL")
GPU_ENV_NAMES = {"PATH", "LIBRARY_PATH", "CPATH", "PATHEXT"}
# Measurements and reachability differ on every run; their verdicts are compared as findings instead.
NOT_COMPARED = {BENCH_RESULTS, GPU_KERNELS, COLLECTIVES_RESULTS, ONLINE_INDEX_KEY}
VOLATILE_LEAVES = {"duration_s", "seconds", "import_seconds", "import_s", "elapsed_s", "argv", "self_pid"}
# Readings of the moment (use, memory, clocks, power): they matter when a failing check needs them, and are no
# change of the setup otherwise.
LIVE_FACTS = (GPU_LIVE,)
MAX_LEAVES = 64  # per fact: a huge fact is compared in its first leaves


@dataclass(frozen=True)
class Field:
    name: str
    group: str  # system, driver, rocm, torch, python, gpu, live, facts, environment
    sources: tuple[str, ...]  # fact keys (or env:NAME) the value is read from
    read: Optional[Callable[[Any], Any]] = None  # named fields only; the others are read by `summary`
    path: tuple = ()  # a leaf of a fact: the keys and indexes to it inside the fact's value


def _get(facts: Any, key: str) -> Any:
    try:
        return facts.get(key)
    except Exception:  # a half-built facts object on a node must not take the summary down
        return None


def _sub(facts: Any, key: str, sub: str) -> Any:
    value = _get(facts, key)
    return value.get(sub) if isinstance(value, dict) else None


def _gpus(facts: Any) -> Optional[list[str]]:
    devices = _get(facts, TORCH_DEVICES) or []
    return sorted({str(d.get("name")) for d in devices if isinstance(d, dict) and d.get("name")}) or None


def _amd_gpus(facts: Any) -> Optional[list[str]]:
    inventory = _get(facts, GPU_INVENTORY)
    if not isinstance(inventory, list):
        return None
    return [f"{g.get('name') or '?'} {g.get('gfx') or '?'}" + (f" at {g['bdf']}" if g.get("bdf") else "")
            for g in inventory if isinstance(g, dict)]


def _targets(facts: Any) -> Optional[list[str]]:
    targets = _get(facts, GPU_TARGETS)
    if not isinstance(targets, list):
        return None
    return [f"GPU {t.get('index')}: {t.get('real_gfx') or '?'} runs {t.get('effective_gfx') or '?'}"
            for t in targets if isinstance(t, dict)]


def _pci(facts: Any) -> Optional[list[str]]:
    devices = _get(facts, GPU_PCI)
    if not isinstance(devices, list):
        return None
    return [f"{d.get('slot')} {d.get('vendor')} {d.get('device_id')} ({d.get('driver') or 'no driver'})"
            for d in devices if isinstance(d, dict)]


def _rocm_installs(facts: Any) -> Optional[list[str]]:
    installs = _sub(facts, ROCM_PATHS_KEY, "installs")
    if not isinstance(installs, list):
        return None
    return [f"{i.get('path')}" + (f" -> {i['realpath']}" if i.get("realpath") not in (None, i.get("path")) else "")
            + (f" {i['version']}" if i.get("version") else "") for i in installs
            if isinstance(i, dict) and i.get("exists")] or None


def _hip(facts: Any) -> Optional[str]:
    return _sub(facts, HIP_VERSION, "text")


FIELDS: tuple[Field, ...] = (
    Field("os", "system", (PLATFORM_OS,), lambda f: _get(f, PLATFORM_OS)),
    Field("kernel", "system", (PLATFORM_RELEASE,), lambda f: _get(f, PLATFORM_RELEASE)),
    Field("kernel_cmdline", "driver", (LINUX_KERNEL_CMDLINE,), lambda f: _sub(f, LINUX_KERNEL_CMDLINE, "raw")),
    Field("driver_amdgpu", "driver", (LINUX_AMDGPU_MODULE,), lambda f: _sub(f, LINUX_AMDGPU_MODULE, "version")),
    Field("amdgpu_loaded", "driver", (LINUX_AMDGPU_MODULE,), lambda f: _sub(f, LINUX_AMDGPU_MODULE, "loaded")),
    Field("rocm", "rocm", (HIP_VERSION,), _hip),
    Field("rocm_installs", "rocm", (ROCM_PATHS_KEY,), _rocm_installs),
    Field("hsa_runtime", "rocm", (ROCMINFO_STATUS,), lambda f: _sub(f, ROCMINFO_STATUS, "runtime_version")),
    Field("rocminfo", "rocm", (ROCMINFO_STATUS,), lambda f: _sub(f, ROCMINFO_STATUS, "state")),
    Field("python", "python", (PYTHON_TARGET_VERSION,), lambda f: _get(f, PYTHON_TARGET_VERSION)),
    Field("python_target", "python", (PYTHON_TARGET,), lambda f: _sub(f, PYTHON_TARGET, "python")),
    Field("torch", "torch", (TORCH_VERSION, TORCH_INSTALLED), lambda f: _get(f, TORCH_VERSION)),
    Field("torch_build", "torch", (TORCH_FLAVOUR,), lambda f: _get(f, TORCH_FLAVOUR)),
    Field("torch_hip", "torch", (TORCH_HIP,), lambda f: _get(f, TORCH_HIP)),
    Field("torch_cuda", "torch", (TORCH_CUDA_VERSION,), lambda f: _get(f, TORCH_CUDA_VERSION)),
    Field("torch_arch_list", "torch", (TORCH_ARCH_LIST,), lambda f: _get(f, TORCH_ARCH_LIST)),
    Field("torch_available", "torch", (TORCH_AVAILABLE,), lambda f: _get(f, TORCH_AVAILABLE)),
    Field("torch_location", "torch", (TORCH_FILE,), lambda f: _get(f, TORCH_FILE)),
    Field("gpu_count", "gpu", (TORCH_DEVICE_COUNT,), lambda f: _get(f, TORCH_DEVICE_COUNT)),
    Field("gpus", "gpu", (TORCH_DEVICES,), _gpus),
    Field("amd_gpus", "gpu", (GPU_INVENTORY,), _amd_gpus),
    Field("gfx_targets", "gpu", (GPU_TARGETS,), _targets),
    Field("pci_gpus", "gpu", (GPU_PCI,), _pci),
)
BY_NAME = {f.name: f for f in FIELDS}
COVERED = {key for f in FIELDS for key in f.sources}


def values(facts: Any, names: Iterable[str]) -> dict[str, Any]:
    """The named fields' values, in the order asked (the node summary of a fleet report uses these)."""
    return {name: BY_NAME[name].read(facts) for name in names}


def summary(facts: Any, required: Iterable[str]) -> tuple[dict[str, Any], dict[str, Field]]:
    """(field -> value, field -> Field) for one run: the named fields, every other fact in `required` (the fact
    keys checks require) leaf by leaf, and the environment."""
    out = {f.name: f.read(facts) for f in FIELDS}
    meta = dict(BY_NAME)
    for key in sorted(set(required) - COVERED - NOT_COMPARED):
        value = _get(facts, key)
        if value is None:
            continue
        group = "live" if key.startswith(LIVE_FACTS) else "facts"
        for name, path, leaf in _leaves(value, key):
            out[name] = leaf
            meta[name] = Field(name, group, (key,), path=path)
    observations = getattr(facts, "observations", None)
    for name, value in environment(getattr(observations, "env", None) or {}).items():
        out[ENV_PREFIX + name] = value
        meta[ENV_PREFIX + name] = Field(ENV_PREFIX + name, "environment", (ENV_SOURCE + name,))
    return out, meta


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables compared: all but those a new shell or terminal sets by itself."""
    return {k: v for k, v in sorted(env.items()) if k not in SESSION_ENV and not k.startswith("BASH_FUNC_")}


def gpu_env(name: str) -> bool:
    upper = name.upper()
    return upper in GPU_ENV_NAMES or upper.startswith(GPU_ENV_PREFIXES) or env_catalog.lookup(upper) is not None


MISSING = object()


def at(value: Any, path: tuple) -> Any:
    """The item at `path` inside a fact's value, or MISSING."""
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return MISSING
    return value


def leaf_name(key: str, path: tuple) -> str:
    return key + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)


def _leaves(value: Any, name: str) -> list[tuple[str, tuple, Any]]:
    """(name, path, scalar) triples: dicts by key, lists of scalars as one joined value, other lists by index;
    an empty list has none."""
    found: list[tuple[str, tuple, Any]] = []

    def walk(item: Any, path: tuple) -> None:
        if len(found) >= MAX_LEAVES:
            return
        if isinstance(item, dict):
            for key, sub in item.items():
                if str(key) not in VOLATILE_LEAVES:
                    walk(sub, path + (key,))
        elif isinstance(item, list) and any(isinstance(i, (dict, list)) for i in item):
            for index, sub in enumerate(item):
                walk(sub, path + (index,))
        elif isinstance(item, list):
            if item:
                found.append((leaf_name(name, path), path, ", ".join(map(str, item))))
        else:
            found.append((leaf_name(name, path), path, item))

    walk(value, ())
    return found
