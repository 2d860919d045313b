"""The kernel libraries rocBLAS, hipBLASLt and MIOpen load per gfx: lists their folders in torch's own lib folder
and in each ROCm install, so a check can see whether files for this GPU's gfx are there.

torch cannot be imported here (the doctor never imports it), and the torch probe runs at the same time, so torch's
folder is found the way the target interpreter would: <prefix>/lib*/python3*/site-packages/torch/lib (the prefix is
the folder above the interpreter's bin/), plus the user site (~/.local/lib/python3*/site-packages).
"""

from __future__ import annotations

import glob
import os

from rocm_doctor.facts.keys import OPT_DIR, ROCM_LIBS_KEY as KEY
from rocm_doctor.probes._base import Recorder
from rocm_doctor.probes.rocm_paths import roots

PLATFORMS = ("linux", "wsl")
LIBRARY_DIRS = ("rocblas/library", "hipblaslt/library")
ROCM_DIRS = (("lib/rocblas/library", "rocblas"), ("lib/hipblaslt/library", "hipblaslt"), ("share/miopen/db", "miopen"))


def torch_lib_dirs(python: str, env) -> list[str]:
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    patterns = [os.path.join(prefix, lib, "python3*", "site-packages", "torch", "lib") for lib in ("lib", "lib64")]
    if env.get("HOME"):
        patterns.append(os.path.join(env["HOME"], ".local", "lib", "python3*", "site-packages", "torch", "lib"))
    return sorted({path for pattern in patterns for path in glob.glob(pattern)})


def folders(python: str, env, opt_entries: list[str]) -> list[dict]:
    """[{"path", "library", "owner"}]: the folders to list, torch's first."""
    out = []
    for lib in torch_lib_dirs(python, env):
        out += [{"path": f"{lib}/{sub}", "library": sub.split("/")[0], "owner": "torch"} for sub in LIBRARY_DIRS]
    for root in roots(env, opt_entries):
        out += [{"path": f"{root}/{sub}", "library": library, "owner": root} for sub, library in ROCM_DIRS]
    return out


def collect(recorder: Recorder) -> None:
    opt = recorder.list_dir(OPT_DIR)
    listed = folders(recorder.context.python, recorder.context.env, opt.entries or [])
    for folder in listed:
        recorder.list_dir(folder["path"])
    recorder.put(KEY, listed)
