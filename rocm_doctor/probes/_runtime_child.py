"""Runs inside the *target* interpreter: asks the GPU driver and runtimes themselves, through ctypes, and records
the process's limits and its share of the machine. Prints one JSON object per line.

torch often says only "no GPU". The CUDA driver (cuInit), the CUDA runtime torch ships (cudaGetDeviceCount), the
HIP runtime (hipInit) and ROCr (hsa_init) each return a status code that names the reason. Each call is announced
before it is made, so when one hangs or crashes the parent knows which. Standard library only; torch is located
without being imported, so its bundled runtimes are the ones asked.
"""

import ctypes
import glob
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_doctor_childlib", os.path.join(_here, os.pardir, "_childlib.py"))
childlib = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(childlib)
childlib.leave_script_folder(__file__)
emit = childlib.Emitter("step")
limits_reader = childlib.load_sibling(__file__, "limits_reader.py")

HSA_AGENT_INFO_NAME, HSA_AGENT_INFO_DEVICE, HSA_DEVICE_TYPE_GPU = 0, 17, 1


def torch_folders():
    """torch's own library folder and the NVIDIA wheel folders beside it, without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except Exception:
        return []
    if spec is None or not spec.origin:
        return []
    package = os.path.dirname(spec.origin)
    site = os.path.dirname(package)
    return [os.path.join(package, "lib")] + sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))


def candidates(patterns, fallbacks):
    """Library files matching `patterns` in torch's folders first, then the system names in `fallbacks`."""
    found = []
    for folder in torch_folders():
        for pattern in patterns:
            found += sorted(glob.glob(os.path.join(folder, pattern)))
    return found + list(fallbacks)


def load(api, names):
    """The first library of `names` that loads, recorded with its path; or None, with every failure recorded."""
    errors = []
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            errors.append(f"{name}: {exc}")
            continue
        emit("library", api=api, loaded=True, path=name)
        return lib
    emit("library", api=api, loaded=False, tried=errors[-6:])
    return None


def returned_strings(name_fn, text_fn):
    """The status namer of an API whose name and text functions return C strings (cudaGetErrorName, hipGetErrorName)."""
    name_fn.restype = text_fn.restype = ctypes.c_char_p
    return lambda code: (c_text(name_fn(code)), c_text(text_fn(code)))


def ask(api, lib, call, named, *args, out=None):
    """Announce `call`, make it (with `out` by reference last, when given) and record its status; the status."""
    emit("calling", api=api, call=call)
    code = getattr(lib, call)(*args, *([ctypes.byref(out)] if out is not None else []))
    extra = {"value": out.value} if out is not None else {}
    emit("returned", api=api, call=call, code=int(code), **dict(zip(("name", "text"), named(code))), **extra)
    return code


def c_text(pointer):
    return pointer.decode("utf-8", "replace") if pointer else None


def cuda_driver():
    lib = load("cuda-driver", ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so"])
    if lib is None:
        return

    def named(code):
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        lib.cuGetErrorName(code, ctypes.byref(name))
        lib.cuGetErrorString(code, ctypes.byref(text))
        return c_text(name.value), c_text(text.value)

    ask("cuda-driver", lib, "cuDriverGetVersion", named, out=ctypes.c_int(0))
    if ask("cuda-driver", lib, "cuInit", named, 0) == 0:
        ask("cuda-driver", lib, "cuDeviceGetCount", named, out=ctypes.c_int(0))


def cuda_runtime():
    lib = load("cuda-runtime", candidates(["libcudart.so*", "cudart64_*.dll"], []))
    if lib is None:
        return
    named = returned_strings(lib.cudaGetErrorName, lib.cudaGetErrorString)
    ask("cuda-runtime", lib, "cudaRuntimeGetVersion", named, out=ctypes.c_int(0))
    ask("cuda-runtime", lib, "cudaGetDeviceCount", named, out=ctypes.c_int(0))


def rocm_folders():
    root = os.environ.get("ROCM_PATH") or "/opt/rocm"
    return list(dict.fromkeys([os.path.join(root, "lib"), "/opt/rocm/lib"]))


def hsa():
    fallback = [os.path.join(f, "libhsa-runtime64.so.1") for f in rocm_folders()] + ["libhsa-runtime64.so.1"]
    lib = load("hsa", candidates(["libhsa-runtime64.so*"], fallback))
    if lib is None:
        return

    def named(code):
        text = ctypes.c_char_p()
        lib.hsa_status_string(code, ctypes.byref(text))
        return None, c_text(text.value)

    if ask("hsa", lib, "hsa_init", named) != 0:
        return
    agents = []

    class Agent(ctypes.Structure):
        _fields_ = [("handle", ctypes.c_uint64)]

    @ctypes.CFUNCTYPE(ctypes.c_int, Agent, ctypes.c_void_p)
    def each(agent, _data):
        kind, name = ctypes.c_uint32(0), ctypes.create_string_buffer(64)
        lib.hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, ctypes.byref(kind))
        lib.hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name)
        agents.append({"name": c_text(name.value), "gpu": kind.value == HSA_DEVICE_TYPE_GPU})
        return 0

    ask("hsa", lib, "hsa_iterate_agents", named, each, None)
    emit("agents", api="hsa", agents=agents)
    lib.hsa_shut_down()


def hip():
    names = ["amdhip64.dll"] if sys.platform == "win32" else (
        [os.path.join(f, "libamdhip64.so") for f in rocm_folders()] + ["libamdhip64.so"])
    lib = load("hip", candidates(["libamdhip64.so*", "amdhip64*.dll"], names))
    if lib is None:
        return
    named = returned_strings(lib.hipGetErrorName, lib.hipGetErrorString)
    ask("hip", lib, "hipDriverGetVersion", named, out=ctypes.c_int(0))
    ask("hip", lib, "hipInit", named, 0)
    ask("hip", lib, "hipGetDeviceCount", named, out=ctypes.c_int(0))


def limits():
    emit("limits", **limits_reader.read_limits())


def main():
    limits()
    for ask in (cuda_driver, cuda_runtime, hsa, hip):
        try:
            ask()
        except Exception as exc:  # a symbol missing from an old library, a bad signature: recorded, never fatal
            emit("error", api=ask.__name__.replace("_", "-"), error=childlib.error_text(exc))
    emit("done")
    childlib.exit_now()


if __name__ == "__main__":
    main()
