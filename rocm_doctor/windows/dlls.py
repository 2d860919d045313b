"""DLL provenance, pure: which ROCm DLLs torch loaded and from where, which copies torch ships itself, and which
same-named copies sit in System32 or PATH folders."""

from __future__ import annotations

from typing import Optional

from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.patterns import is_hip_runtime, matches, runtime_major


def own_dirs(torch_file: Optional[str], sdk_dirs: list[str]) -> list[str]:
    """Folders whose DLLs belong to this torch: torch\\lib and the rocm-sdk packages' bin folders."""
    dirs = []
    if torch_file:
        dirs.append(paths.join(paths.dirname(torch_file), "lib"))
    dirs += [paths.join(d, "bin") for d in sdk_dirs or []]
    return dirs


def loaded(libraries: list[str], own: list[str], system32: str) -> list[dict]:
    out = []
    for path in libraries or []:
        name = paths.basename(path)
        if not matches(name):
            continue
        folder = paths.dirname(path)
        out.append(
            {
                "path": path,
                "name": name,
                "folder": folder,
                "runtime": is_hip_runtime(name),
                "runtime_major": runtime_major(name),
                "own": any(paths.is_under(path, d) for d in own),
                "system32": paths.same(folder, system32),
            }
        )
    return out
