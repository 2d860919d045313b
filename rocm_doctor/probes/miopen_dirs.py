"""MIOpen's user database and kernel cache folders: where they are, whether they exist and are writable.

MIOPEN_USER_DB_PATH (default ~/.config/miopen) holds tuning results; MIOPEN_CUSTOM_CACHE_DIR (default
~/.cache/miopen) holds compiled kernels. Nothing is created or written here: writability is os.access on the folder,
or on the nearest existing parent when the folder does not exist yet (MIOpen creates it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional

from rocm_doctor.facts.keys import MIOPEN_DIRS_KEY as KEY
from rocm_doctor.probes._base import Recorder

VARIABLES = {
    "MIOPEN_USER_DB_PATH": (".config", "miopen"),
    "MIOPEN_CUSTOM_CACHE_DIR": (".cache", "miopen"),
}


def nearest_existing(path: Path) -> Optional[Path]:
    for candidate in [path, *path.parents]:
        if candidate.exists():
            return candidate
    return None


def describe(path: str, source: str) -> dict:
    folder = Path(os.path.expanduser(path))
    info: dict = {"path": str(folder), "source": source, "exists": folder.exists()}
    try:
        if info["exists"]:
            info["is_dir"] = folder.is_dir()
            info["writable"] = bool(info["is_dir"] and os.access(folder, os.W_OK | os.X_OK))
        else:
            parent = nearest_existing(folder.parent)
            info["nearest_parent"] = str(parent) if parent else None
            info["creatable"] = bool(parent and parent.is_dir() and os.access(parent, os.W_OK | os.X_OK))
            info["writable"] = info["creatable"]
    except OSError as exc:
        info["error"] = f"{type(exc).__name__}: {exc.strerror or exc}"
        info["writable"] = False
    return info


def folders(env: Mapping[str, str]) -> dict:
    home = env.get("HOME") or env.get("USERPROFILE")
    out = {}
    for variable, default in VARIABLES.items():
        value = env.get(variable)
        if value:
            out[variable] = describe(value, "env")
        elif home:
            out[variable] = describe(os.path.join(home, *default), "default")
    return out


def collect(recorder: Recorder) -> None:
    recorder.put(KEY, folders(recorder.context.env))
