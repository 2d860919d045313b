"""The operator suite, as data. Loaded by _child.py inside the target interpreter: standard library and torch only.

Each case is a dict made by `case(category, name, dtype, build, ...)`. `build(ctx)` runs the operator on
`ctx.device` and returns what to compare with a float64 CPU reference:

  (out, ref)                         one output
  [(out, ref), ...]                  several outputs (forward and gradients)
  {"pairs": [...], "info": {...}}    with extra facts for the report
  {"error": x, "tol": t, "info": {}} an error figure computed by the case itself (RNG statistics)

Inputs come from `ctx.randn`/`ctx.rand`: float64 CPU tensors already rounded to the case's dtype (drawn in float32
when that dtype holds no more), so the device and the reference see exactly the same numbers; `ctx.dev(x)` moves
one to the device in the case's dtype.
`ctx.backward(out, grad)` back-propagates `grad` from `out` (use it rather than out.backward(grad): a gradient
tensor handed to torch makes it import sympy, seconds in a fresh process). `ctx.unavailable(reason)` ends a case as
unavailable (for instance a GPU-only feature on the CPU device).

Options: gpu_only (unavailable on the CPU device), profile (run under torch's profiler for library attribution),
tf32 (fp32 results may come from TF32 tensor cores on a GPU, so the fp32 tolerance is 5e-3), tol (override).

The table itself is split by category group into the files of GROUPS beside this one. Each is loaded by path and
takes `case` from this module as `_doctor_cases`, as extra case files do; CASES keeps the groups' order.
"""

import _doctor_childlib as childlib


def case(category, name, dtype, build, tol=None, gpu_only=False, profile=False, tf32=False, core=False, log=False):
    return {
        "category": category,
        "name": name,
        "dtype": dtype,
        "build": build,
        "tol": tol,
        "gpu_only": gpu_only,
        "profile": profile,
        "tf32": tf32,
        "core": core,  # part of the short core set used by the HSA_OVERRIDE_GFX_VERSION A/B runs
        "log": log,  # part of the set run again with the math libraries' logging on
    }


FLOATS = ("float32", "float16", "bfloat16")
GROUPS = ("_cases_basic.py", "_cases_nn.py", "_cases_data.py", "_cases_sdpa.py", "_cases_runtime.py")
_MODULES = [childlib.load_sibling(__file__, name) for name in GROUPS]
CASES = [entry for module in _MODULES for entry in module.CASES]


def dynamic_cases(torch, device_type, device_count):
    """Cases that depend on the machine (one per visible device), from the groups that have them."""
    return [entry for module in _MODULES if hasattr(module, "dynamic_cases")
            for entry in module.dynamic_cases(torch, device_type, device_count)]
