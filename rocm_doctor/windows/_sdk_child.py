"""Runs inside the *target* interpreter on Windows: which TheRock `rocm` / `rocm-sdk-*` packages and which torch
are installed there, where they live, and whether the SDK ships C++ standard headers (type_traits) for hipRTC.
Standard library only and never imports torch (find_spec does not import a top-level package). Prints one JSON
object.
"""

import importlib.util
import os
import sys

try:
    from importlib import metadata
except ImportError:  # pragma: no cover - Python < 3.8
    metadata = None


def _load_childlib():
    """The shared child library, by path: the target interpreter need not have rocm-doctor installed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_childlib.py")
    spec = importlib.util.spec_from_file_location("_doctor_childlib", os.path.normpath(path))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


childlib = _load_childlib()

WANTED_PREFIXES = ("rocm", "torch", "amd-torch", "triton")
HEADER_NAMES = ("type_traits", "cstdint", "limits")
WALK_LIMIT = 200000


def package_versions():
    found = {}
    if metadata is None:
        return found
    for dist in metadata.distributions():
        try:
            name = (dist.metadata["Name"] or "").strip()
        except Exception:
            continue
        key = name.lower().replace("_", "-")
        if key.startswith(WANTED_PREFIXES):
            found[key] = dist.version
    return found


def module_dir(name):
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return locations[0]
    return os.path.dirname(spec.origin) if spec.origin else None


def sdk_dirs():
    dirs = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry) or "site-packages" not in entry.lower():
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for name in sorted(names):
            if name.lower().startswith(("_rocm_sdk", "rocm_sdk")) and os.path.isdir(os.path.join(entry, name)):
                path = os.path.join(entry, name)
                if path not in dirs:
                    dirs.append(path)
    return dirs


def headers(dirs):
    found, seen = [], 0
    for top in dirs:
        for root, _subdirs, files in os.walk(top):
            seen += len(files)
            for name in files:
                if name in HEADER_NAMES:
                    found.append(os.path.join(root, name))
            if seen > WALK_LIMIT or len(found) >= 30:
                return found
    return found


def main():
    dirs = sdk_dirs()
    out = {
        "python": sys.executable,
        "prefix": sys.prefix,
        "packages": package_versions(),
        "torch_dir": module_dir("torch"),
        "sdk_dirs": dirs,
        "cxx_headers": headers(dirs),
    }
    childlib.write_line(out)


if __name__ == "__main__":
    main()
