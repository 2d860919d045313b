"""The versions block a support ticket starts with (what torch.utils.collect_env prints): torch and its GPU
runtime, the driver, the GPUs, CPU, OS, glibc, gcc, numpy and Python, each read from the facts the probes already
recorded, and each saying why when it is absent: the reason alone, since "not found" is wrong for what nothing
looked for. A pure function of the facts' plain values, so a live run, a snapshot and a report bundle show the
same block."""

from __future__ import annotations

from typing import Any, Mapping

from rocm_doctor.facts.keys import (GPU_INVENTORY, GPU_PCI, HIP_VERSION, LINUX_AMDGPU_DRIVER, NVIDIA_DRIVER, OS_GLIBC,
                                    OS_RELEASE_FACT, PLATFORM_MACHINE, PLATFORM_RELEASE, PLATFORM_SYSTEM, PYTHON_TARGET,
                                    PYTHON_TARGET_VERSION, TORCH_CUDA_VERSION, TORCH_DEVICES, TORCH_FLAVOUR, TORCH_HIP,
                                    TORCH_HOST, TORCH_IMPORT_ERROR, TORCH_INSTALLED, TORCH_NUMPY, TORCH_VERSION,
                                    WINDOWS_DRIVER)

NOT_RECORDED = "not recorded (a run from before rocm-doctor recorded it)"
FLAVOURS = {"rocm": "ROCm build", "cuda": "CUDA build", "cpu": "CPU build"}


def build(values: Mapping[str, Any], missing: Mapping[str, str]) -> list[dict[str, Any]]:
    """[{name, value, found}] in collect_env's order: what was seen, or why nothing was."""
    rows = [("torch", _torch(values, missing)), ("GPU driver", _driver(values)), ("ROCm (HIP)", _hip(values, missing)),
            ("GPUs", _gpus(values)), ("CPU", _cpu(values)), ("OS", _os(values)), ("glibc", _glibc(values, missing)),
            ("gcc", _gcc(values)), ("numpy", _numpy(values, missing)), ("Python", _python(values))]
    return [{"name": name, "value": value, "found": found} for name, (found, value) in rows]


def summary(versions: list[dict[str, Any]], names: tuple[str, ...]) -> str:
    """The found values of `names`, joined, each up to its first " at " or ", " past the name (a path, the kernel
    after the distribution): what an area's one line says it found."""
    shown = {v.get("name"): v for v in versions if isinstance(v, dict)}
    return "; ".join(_short(n, str(shown[n]["value"])) for n in names if shown.get(n, {}).get("found"))


def _short(name: str, value: str) -> str:
    cut = {"Python": " at ", "OS": ", ", "CPU": "; "}.get(name)
    return value.split(cut)[0] if cut else value


def _torch(values, missing) -> tuple[bool, str]:
    version = values.get(TORCH_VERSION)
    if version:
        flavour = values.get(TORCH_FLAVOUR)
        runtime = (f", HIP {values[TORCH_HIP]}" if values.get(TORCH_HIP) else
                   f", CUDA {values[TORCH_CUDA_VERSION]}" if values.get(TORCH_CUDA_VERSION) else "")
        return True, f"torch {version}, {FLAVOURS.get(flavour, str(flavour))}{runtime}"
    python = (values.get(PYTHON_TARGET) or {}).get("python") or "the target interpreter"
    if values.get(TORCH_INSTALLED) is False:
        return False, f"not installed in {python}"
    if values.get(TORCH_IMPORT_ERROR):
        return False, f"could not be imported: {values[TORCH_IMPORT_ERROR]}"
    return False, f"{missing.get(TORCH_INSTALLED) or 'the torch probe did not run'}"


def _driver(values) -> tuple[bool, str]:
    nvidia = values.get(NVIDIA_DRIVER) or {}
    if nvidia.get("version"):
        cuda = f", supports CUDA {nvidia['cuda']}" if nvidia.get("cuda") else ""
        return True, f"NVIDIA {nvidia['version']}{cuda}"
    amd = values.get(LINUX_AMDGPU_DRIVER) or {}
    if amd.get("loaded"):
        version = amd.get("package_version") or amd.get("module_version")
        return True, f"amdgpu {version}" if version else f"amdgpu, the kernel's own ({amd.get('kernel')})"
    windows = values.get(WINDOWS_DRIVER) or {}
    adapters = [a for a in windows.get("adapters") or [] if isinstance(a, dict) and a.get("driver_version")]
    if adapters:
        adrenalin = f" (Adrenalin {windows['adrenalin']})" if windows.get("adrenalin") else ""
        return True, f"{adapters[0].get('description') or 'display driver'} {adapters[0]['driver_version']}{adrenalin}"
    return False, "torch loaded no NVIDIA driver and the amdgpu module is not loaded"


def _hip(values, missing) -> tuple[bool, str]:
    hip = values.get(HIP_VERSION) or {}
    if hip.get("text"):
        return True, f"HIP {hip['text']} ({hip.get('source') or 'hipconfig'})"
    return False, f"{missing.get(HIP_VERSION) or 'not asked on this platform'}"


def _gpus(values) -> tuple[bool, str]:
    names = [f"{g.get('name') or 'AMD GPU'} ({g['gfx']})" if g.get("gfx") else str(g.get("name") or "AMD GPU")
             for g in values.get(GPU_INVENTORY) or [] if isinstance(g, dict)]
    if not names:
        names = [str(d.get("name")) for d in values.get(TORCH_DEVICES) or [] if isinstance(d, dict) and d.get("name")]
    if names:
        counts = {name: names.count(name) for name in names}  # in order; the same card twice reads "2 x name"
        return True, ", ".join(f"{n} x {name}" if n > 1 else name for name, n in counts.items())
    if values.get(GPU_PCI) == []:
        return False, "none: no AMD or NVIDIA GPU on the PCI bus"
    return False, "none seen by the GPU tools or torch"


def _cpu(values) -> tuple[bool, str]:
    host = values.get(TORCH_HOST) or {}
    if not host.get("cpu"):
        return False, NOT_RECORDED if TORCH_HOST in values else "the torch probe did not run"
    count = f", {host['cpus']} CPUs" if host.get("cpus") else ""
    uses = f"; torch uses {host['cpu_capability']}" if host.get("cpu_capability") else ""
    return True, f"{host['cpu']}{count}{uses}"


def _os(values) -> tuple[bool, str]:
    release = values.get(OS_RELEASE_FACT) or {}
    kernel = " ".join(str(values.get(k)) for k in (PLATFORM_SYSTEM, PLATFORM_RELEASE, PLATFORM_MACHINE)
                      if values.get(k))
    name = release.get("pretty_name") or release.get("name")
    if name:
        return True, f"{name}, {kernel}" if kernel else str(name)
    return bool(kernel), kernel or "the platform was not recorded"


def _glibc(values, missing) -> tuple[bool, str]:
    glibc = values.get(OS_GLIBC) or {}
    if glibc.get("version"):
        return True, f"{glibc.get('libc') or 'glibc'} {glibc['version']}"
    return False, f"{missing.get(OS_GLIBC) or 'not asked on this platform'}"


def _gcc(values) -> tuple[bool, str]:
    host = values.get(TORCH_HOST) or {}
    built = f" (torch was built with {host['built_with']})" if host.get("built_with") else ""
    if host.get("gcc"):
        return True, f"{host['gcc']}{built}"
    return False, f"{host.get('gcc_error') or 'the torch probe did not run'}{built}"


def _numpy(values, missing) -> tuple[bool, str]:
    state = values.get(TORCH_NUMPY)
    if not isinstance(state, dict):
        return False, f"{missing.get(TORCH_NUMPY) or 'the torch probe did not run'}"
    said = str(state.get("torch_warning") or "").split(" (Triggered internally")[0]
    version = state.get("version")
    if said:
        what = f"numpy {version}" if version else "not installed"
        return bool(version), f"{what}; torch cannot use it: {said} (see torch-numpy-unusable)"
    return bool(version), f"numpy {version}" if version else "not installed"


def _python(values) -> tuple[bool, str]:
    version = values.get(PYTHON_TARGET_VERSION)
    python = (values.get(PYTHON_TARGET) or {}).get("python")
    if version:
        return True, f"Python {version}" + (f" at {python}" if python else "")
    return False, f"the torch probe did not start {python or 'the target interpreter'}"
