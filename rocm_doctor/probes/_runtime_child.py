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
    """The first library of `names` that loads, and its path; every failure is recorded."""
    errors = []
    for name in names:
        try:
            return ctypes.CDLL(name), name
        except OSError as exc:
            errors.append(f"{name}: {exc}")
    emit("library", api=api, loaded=False, tried=errors[-6:])
    return None, None


def announce(api, call):
    emit("calling", api=api, call=call)


def result(api, call, code, name=None, text=None, **values):
    emit("returned", api=api, call=call, code=int(code), name=name, text=text, **values)


def c_text(pointer):
    return pointer.decode("utf-8", "replace") if pointer else None


def cuda_driver():
    lib, path = load("cuda-driver", ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so"])
    if lib is None:
        return
    emit("library", api="cuda-driver", loaded=True, path=path)

    def named(code):
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        lib.cuGetErrorName(code, ctypes.byref(name))
        lib.cuGetErrorString(code, ctypes.byref(text))
        return c_text(name.value), c_text(text.value)

    value = ctypes.c_int(0)
    announce("cuda-driver", "cuDriverGetVersion")
    code = lib.cuDriverGetVersion(ctypes.byref(value))
    result("cuda-driver", "cuDriverGetVersion", code, *named(code), value=value.value)
    announce("cuda-driver", "cuInit")
    code = lib.cuInit(0)
    result("cuda-driver", "cuInit", code, *named(code))
    if code == 0:
        announce("cuda-driver", "cuDeviceGetCount")
        code = lib.cuDeviceGetCount(ctypes.byref(value))
        result("cuda-driver", "cuDeviceGetCount", code, *named(code), value=value.value)


def cuda_runtime():
    lib, path = load("cuda-runtime", candidates(["libcudart.so*", "cudart64_*.dll"], []))
    if lib is None:
        return
    emit("library", api="cuda-runtime", loaded=True, path=path)
    lib.cudaGetErrorName.restype = lib.cudaGetErrorString.restype = ctypes.c_char_p
    value = ctypes.c_int(0)
    announce("cuda-runtime", "cudaRuntimeGetVersion")
    code = lib.cudaRuntimeGetVersion(ctypes.byref(value))
    result("cuda-runtime", "cudaRuntimeGetVersion", code, value=value.value)
    announce("cuda-runtime", "cudaGetDeviceCount")
    code = lib.cudaGetDeviceCount(ctypes.byref(value))
    result("cuda-runtime", "cudaGetDeviceCount", code, c_text(lib.cudaGetErrorName(code)),
           c_text(lib.cudaGetErrorString(code)), value=value.value)


def rocm_folders():
    root = os.environ.get("ROCM_PATH") or "/opt/rocm"
    return list(dict.fromkeys([os.path.join(root, "lib"), "/opt/rocm/lib"]))


def hsa():
    fallback = [os.path.join(f, "libhsa-runtime64.so.1") for f in rocm_folders()] + ["libhsa-runtime64.so.1"]
    lib, path = load("hsa", candidates(["libhsa-runtime64.so*"], fallback))
    if lib is None:
        return
    emit("library", api="hsa", loaded=True, path=path)

    def named(code):
        text = ctypes.c_char_p()
        lib.hsa_status_string(code, ctypes.byref(text))
        return None, c_text(text.value)

    announce("hsa", "hsa_init")
    code = lib.hsa_init()
    result("hsa", "hsa_init", code, *named(code))
    if code != 0:
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

    announce("hsa", "hsa_iterate_agents")
    code = lib.hsa_iterate_agents(each, None)
    result("hsa", "hsa_iterate_agents", code, *named(code), agents=agents)
    lib.hsa_shut_down()


def hip():
    names = ["amdhip64.dll"] if sys.platform == "win32" else (
        [os.path.join(f, "libamdhip64.so") for f in rocm_folders()] + ["libamdhip64.so"])
    lib, path = load("hip", candidates(["libamdhip64.so*", "amdhip64*.dll"], names))
    if lib is None:
        return
    emit("library", api="hip", loaded=True, path=path)
    lib.hipGetErrorName.restype = lib.hipGetErrorString.restype = ctypes.c_char_p

    def named(code):
        return c_text(lib.hipGetErrorName(code)), c_text(lib.hipGetErrorString(code))

    value = ctypes.c_int(0)
    announce("hip", "hipDriverGetVersion")
    code = lib.hipDriverGetVersion(ctypes.byref(value))
    result("hip", "hipDriverGetVersion", code, *named(code), value=value.value)
    announce("hip", "hipInit")
    code = lib.hipInit(0)
    result("hip", "hipInit", code, *named(code))
    announce("hip", "hipGetDeviceCount")
    code = lib.hipGetDeviceCount(ctypes.byref(value))
    result("hip", "hipGetDeviceCount", code, *named(code), value=value.value)


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
