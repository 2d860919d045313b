"""The Windows layer below torch: the Visual C++ runtime (the redistributable's registry key and the DLLs in
System32 that torch's own DLLs load) and the Windows version and build (HKLM Windows NT\\CurrentVersion, named
values only: the key also holds owner and product-key values that are nobody's business). WINDOWS-ONLY probe."""

from __future__ import annotations

from typing import Optional

from rocm_doctor.facts.keys import CURRENT_VERSION_KEY
from rocm_doctor.knowledge.windows_layer import vc_runtime
from rocm_doctor.probes._base import Recorder
from rocm_doctor.probes.windows_record import WindowsRecorder
from rocm_doctor.windows.host import WindowsHost, default_host
from rocm_doctor.parsers.windows_paths import system32

PLATFORMS = ("windows",)
CURRENT_VERSION_VALUES = ("CurrentBuild", "CurrentBuildNumber", "UBR", "DisplayVersion", "ReleaseId", "ProductName",
                          "EditionID", "InstallationType")


def collect(recorder: Recorder, host: Optional[WindowsHost] = None) -> None:
    win = WindowsRecorder(recorder, host or default_host(), "runtime")
    runtime = vc_runtime()
    for key in runtime["registry_keys"]:
        win.registry_values("HKLM", key)
    win.scan_dir(system32(recorder.context.env), runtime["dlls"])
    for name in CURRENT_VERSION_VALUES:
        win.registry_value(*CURRENT_VERSION_KEY, name)
