"""ROCm installs and the search paths that pick one: ROCM_PATH, HIP_PATH, /opt/rocm and /opt/rocm-<version> (does
each exist, where it resolves, its .info/version), and whether every PATH and LD_LIBRARY_PATH entry exists."""

from __future__ import annotations

import os

from rocm_doctor.facts.keys import OPT_DIR, ROCM_PATHS_KEY as KEY
from rocm_doctor.knowledge.env_catalog import role
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux", "wsl")
LIST_VARIABLES = ("PATH", "LD_LIBRARY_PATH")


def roots(env, opt_entries: list[str]) -> list[str]:
    """Candidate install roots: the variables first, then /opt/rocm and the versioned folders beside it."""
    found = [env[v] for v in role("install-root") if env.get(v)]
    found += ["/opt/rocm"] + [f"/opt/{e}" for e in opt_entries if e.startswith("rocm-")]
    return list(dict.fromkeys(p.rstrip("/") or "/" for p in found))


def describe_root(recorder: Recorder, path: str) -> dict:
    info = {"path": path, "exists": os.path.isdir(path)}
    if info["exists"]:
        info["realpath"] = os.path.realpath(path)
        version = recorder.read_file(os.path.join(path, ".info", "version"))
        info["version"] = (version.content or "").strip() or None
        info["hipconfig"] = os.path.isfile(os.path.join(path, "bin", "hipconfig"))
        info["libamdhip64"] = os.path.exists(os.path.join(path, "lib", "libamdhip64.so"))
    return info


def collect(recorder: Recorder) -> None:
    env = recorder.context.env
    opt = recorder.list_dir(OPT_DIR)
    entries = {
        variable: [{"entry": e, "exists": os.path.isdir(e), "realpath": os.path.realpath(e) if os.path.isdir(e) else None}
                   for e in (env.get(variable) or "").split(os.pathsep) if e]
        for variable in LIST_VARIABLES
    }
    recorder.put(KEY, {"roots": [describe_root(recorder, r) for r in roots(env, opt.entries or [])], **entries})
