"""Windows environment scopes and PATH folders: the User and Machine variables from the registry (raw, with
their types), and a scan of every PATH folder (process, User and Machine PATH) and System32 for the ROCm DLLs
and tools that matter. WINDOWS-ONLY probe; on Linux it runs in tests against a fake WindowsHost."""

from __future__ import annotations

from typing import Optional

from rocm_doctor.facts.keys import MACHINE_ENV_KEY, USER_ENV_KEY
from rocm_doctor.probes._base import Recorder
from rocm_doctor.probes.windows_record import WindowsRecorder
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.windows.host import WindowsHost, default_host
from rocm_doctor.windows.patterns import SCAN_PATTERNS

PLATFORMS = ("windows",)


def collect(recorder: Recorder, host: Optional[WindowsHost] = None) -> None:
    win = WindowsRecorder(recorder, host or default_host(), "env")
    env = dict(recorder.context.env)
    user = win.registry_values(*USER_ENV_KEY)
    machine = win.registry_values(*MACHINE_ENV_KEY)

    machine_plain = {k: str(v) for k, (v, _t) in machine.items()}
    user_plain = {k: str(v) for k, (v, _t) in user.items()}
    folders = paths.split_path_var(paths.ci_get(env, "PATH"))
    for scope, lookups in ((machine, (env, machine_plain)), (user, (env, machine_plain, user_plain))):
        raw = next((str(v) for k, (v, _t) in scope.items() if k.upper() == "PATH"), None)
        if raw:
            expanded, _unresolved = paths.expand(raw, *lookups)
            folders += paths.split_path_var(expanded)
    for folder in [paths.system32(env)] + paths.unique(folders):
        if paths.has_vars(folder):
            continue  # an unexpandable %VAR% entry: the interpreter reports it from the raw value
        win.scan_dir(folder, SCAN_PATTERNS)
