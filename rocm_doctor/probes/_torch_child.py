"""Runs inside the *target* interpreter to describe its torch; prints one JSON object per line, per stage.

Stand-alone on purpose (standard library and torch only): the target environment need not have rocm-doctor
installed. Each stage is printed and flushed before the next starts, so when torch crashes or hangs the parent
knows how far it got.
"""

import importlib.util
import os
import sys
import time
import traceback
import warnings


def _load_childlib():
    """The shared child library, by path: the target interpreter need not have rocm-doctor installed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_childlib.py")
    spec = importlib.util.spec_from_file_location("_doctor_childlib", os.path.normpath(path))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


childlib = _load_childlib()
childlib.leave_script_folder(__file__)
emit = childlib.Emitter("stage")
error_text = childlib.error_text


def loaded_libraries():
    """Shared libraries mapped into this process: /proc/self/maps on Linux, the module list on Windows."""
    if sys.platform.startswith("linux"):
        paths = []
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
                for line in maps:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and ".so" in parts[5]:
                        path = parts[5].strip()
                        if path not in paths:
                            paths.append(path)
        except OSError as exc:
            return {"error": error_text(exc)}
        return {"paths": paths}
    if sys.platform == "win32":
        return windows_modules()
    return {"error": "not supported on " + sys.platform}


def windows_modules():
    import ctypes
    from ctypes import wintypes

    psapi = ctypes.WinDLL("psapi")
    kernel32 = ctypes.WinDLL("kernel32")
    process = kernel32.GetCurrentProcess()
    handles = (wintypes.HMODULE * 4096)()
    needed = wintypes.DWORD()
    if not psapi.EnumProcessModules(process, handles, ctypes.sizeof(handles), ctypes.byref(needed)):
        return {"error": "EnumProcessModules failed"}
    paths = []
    buffer = ctypes.create_unicode_buffer(32768)
    for handle in handles[: needed.value // ctypes.sizeof(wintypes.HMODULE)]:
        if kernel32.GetModuleFileNameW(handle, buffer, len(buffer)):
            paths.append(buffer.value)
    return {"paths": paths}


def bytecode_state(torch):
    """How many of torch's imported source modules have compiled bytecode on disk once the import is done. Python
    writes it on first import unless told not to (PYTHONDONTWRITEBYTECODE, -B) or the folder is not writable;
    without it every new process compiles torch again."""
    modules = cached = 0
    for name, module in list(sys.modules.items()):
        if name != "torch" and not name.startswith("torch."):
            continue
        try:  # a module object that answers oddly (a proxy, no cache tag) is not counted, and never ends the probe
            spec = getattr(module, "__spec__", None)
            if not str(getattr(spec, "origin", "")).endswith(".py"):
                continue
            pyc = getattr(spec, "cached", None)
        except Exception:
            continue
        modules += 1
        cached += bool(pyc) and os.path.exists(pyc)
    folder = os.path.dirname(getattr(torch, "__file__", None) or "")
    return {"modules": modules, "cached": cached, "dont_write_bytecode": bool(sys.dont_write_bytecode),
            "variable": os.environ.get("PYTHONDONTWRITEBYTECODE"), "pycache_prefix": getattr(sys, "pycache_prefix", None),
            "folder": folder, "folder_writable": bool(folder) and os.access(folder, os.W_OK)}


def describe_device(torch, index):
    props = torch.cuda.get_device_properties(index)
    info = {"index": index}
    for name in (
        "name",
        "gcnArchName",
        "total_memory",
        "major",
        "minor",
        "multi_processor_count",
        "is_integrated",
        "L2_cache_size",
        "uuid",
        "pci_bus_id",
        "pci_device_id",
        "pci_domain_id",
        "warp_size",
    ):
        value = getattr(props, name, None)
        if value is not None:
            info[name] = str(value) if name == "uuid" else value
    return info


def cpu_name():
    """The CPU's model name as the OS gives it (the first processor's), or None."""
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
                for line in info:
                    key, _, value = line.partition(":")
                    if key.strip() in ("model name", "Model", "Processor") and value.strip():
                        return value.strip()
        except OSError:
            return None
        return None
    import platform

    return platform.processor() or None


def numpy_state(warned):
    """numpy as torch met it: its version (from the loaded module, else the installed metadata), whether `import
    torch` loaded it, and torch's own "Failed to initialize NumPy: ..." warning when it could not use it."""
    module = sys.modules.get("numpy")
    version = getattr(module, "__version__", None)
    if version is None:
        try:
            from importlib import metadata

            version = metadata.version("numpy")
        except Exception:  # not installed, or metadata that cannot be read
            version = None
    failed = next((w for w in warned if w.startswith("Failed to initialize NumPy")), None)
    return {"version": version, "loaded": module is not None, "torch_warning": failed}


def main():
    emit(
        "start",
        python=sys.version.split()[0],
        executable=sys.executable,
        prefix=sys.prefix,
        base_prefix=getattr(sys, "base_prefix", sys.prefix),
        platform=sys.platform,
        cpu=cpu_name(),
        cpus=os.cpu_count(),
    )
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as records:  # what `import torch` warns, recorded for the parent
        try:
            import torch
        except ImportError as exc:
            emit.finish("import", ok=False, missing=True, error=error_text(exc))
            return
        except BaseException as exc:  # torch's import can raise anything, including SystemExit
            emit.finish("import", ok=False, missing=False, error=error_text(exc),
                        traceback=traceback.format_exc(limit=8))
            return
    warned = [str(r.message) for r in records]
    for record in records:  # still on standard error as Python shows it, where the known-message matcher reads it
        warnings.showwarning(record.message, record.category, record.filename, record.lineno)
    version = getattr(torch, "version", None)
    emit(
        "import",
        ok=True,
        seconds=round(time.monotonic() - started, 3),
        version=getattr(torch, "__version__", None),
        file=getattr(torch, "__file__", None),
        cuda=getattr(version, "cuda", None),
        hip=getattr(version, "hip", None),
        git_version=getattr(version, "git_version", None),
        debug=getattr(version, "debug", None),
        bytecode=bytecode_state(torch),
        warnings=warned,
        numpy=numpy_state(warned),
    )

    build = {}
    try:
        build["config"] = torch.__config__.show()
    except Exception as exc:
        build["config_error"] = error_text(exc)
    try:
        build["cudnn_version"] = torch.backends.cudnn.version()
    except Exception as exc:
        build["cudnn_error"] = error_text(exc)
    try:
        build["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    except Exception as exc:  # before torch 2.1
        build["cpu_capability_error"] = error_text(exc)
    emit("build", **build)

    caught = []
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        try:
            available = bool(torch.cuda.is_available())
            error = None
        except Exception as exc:
            available, error = False, error_text(exc)
        caught = [str(r.message) for r in records]
    try:
        threads = torch.get_num_threads()
    except Exception:
        threads = None
    emit("available", available=available, error=error, warnings=caught, threads=threads)

    try:
        count = torch.cuda.device_count()
        emit("count", device_count=count)
    except Exception as exc:
        count = 0
        emit("count", device_count=None, error=error_text(exc))

    if available:
        try:
            emit("arch_list", arch_list=list(torch.cuda.get_arch_list()))
        except Exception as exc:
            emit("arch_list", arch_list=None, error=error_text(exc))
        for index in range(count):
            try:
                emit("device", **describe_device(torch, index))
            except Exception as exc:
                emit("device", index=index, error=error_text(exc))

    emit("libraries", **loaded_libraries())
    emit("done", seconds=round(time.monotonic() - started, 3))


if __name__ == "__main__":
    main()
