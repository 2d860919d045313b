"""windows.dlls: ROCm DLLs torch loaded (fact torch.libraries, EnumProcessModules in the torch child) with their
folders, the copies torch ships (torch\\lib, rocm-sdk bin folders) and same-named copies in System32 / PATH."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import TORCH_FILE, TORCH_LIBRARIES, WINDOWS_DLLS, WINDOWS_PATH, WINDOWS_ROCM_SDK
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret.windows_env import not_windows
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows import dlls
from rocm_doctor.windows.observed import Seen
from rocm_doctor.windows.patterns import matches

REQUIRES = (TORCH_FILE, TORCH_LIBRARIES, WINDOWS_PATH, WINDOWS_ROCM_SDK)


def interpret(observations: Observations, facts: Facts) -> None:
    if not_windows(observations, facts, (WINDOWS_DLLS,)):
        return
    seen = Seen(observations)
    sdk = facts.get(WINDOWS_ROCM_SDK) or {}
    torch_file = facts.get(TORCH_FILE)
    if not torch_file and sdk.get("torch_dir"):
        torch_file = paths.join(sdk["torch_dir"], "__init__.py")
    own = dlls.own_dirs(torch_file, sdk.get("sdk_dirs") or [])
    sys32 = paths.system32(observations.env)

    own_copies: dict[str, list[str]] = {}
    for folder in own:
        scan = seen.scan(folder)
        for name in (scan or {}).get("matches") or []:
            if matches(name):
                own_copies.setdefault(name.lower(), []).append(paths.join(folder, name))

    path_fact = facts.get(WINDOWS_PATH) or {}
    process_entries = ((path_fact.get("scopes") or {}).get("process") or {}).get("entries") or []
    on_path = []
    for position, folder in enumerate(process_entries):
        scan = seen.scan(folder)
        for name in (scan or {}).get("matches") or []:
            if matches(name):
                on_path.append({"folder": folder, "name": name, "position": position,
                                "own": any(paths.same(folder, d) for d in own)})
    sys32_scan = seen.scan(sys32) or {}
    libraries = facts.get(TORCH_LIBRARIES)
    facts.set(
        WINDOWS_DLLS,
        {
            "own_dirs": own,
            "own_copies": own_copies,
            "system32": sys32,
            "system32_copies": [n for n in sys32_scan.get("matches") or [] if matches(n)],
            "system32_scanned": bool(sys32_scan),
            "on_path": on_path,
            "loaded": dlls.loaded(libraries, own, sys32) if libraries is not None else None,
            "loaded_why_missing": None if libraries is not None else facts.why_missing(TORCH_LIBRARIES),
        },
    )
