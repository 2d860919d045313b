"""Records the live state of every GPU: what nvidia-smi, amd-smi and rocm-smi say now (use, memory, clocks, power,
throttling, modes, link, errors, processes), the amdgpu sysfs counters, and who each listed process is.

The SMI tools run whenever they can be found, whatever the PCI list shows (containers and VMs often hide it). Each
listed pid gets its `/proc/<pid>/status` and its parents' up to the doctor's own pid, recorded here, so the
doctor's own children (the torch probe runs at the same time) are told apart from other processes.
"""

from __future__ import annotations

import os
import re
import shutil

from rocm_doctor.engine import runner
from rocm_doctor.facts.keys import (AMD_SMI_METRIC_KEY, AMD_SMI_PROCESS_KEY, CARD_FILES, CARD_UEVENT, DRM_DIR,
                                    LIVE_SELF_KEY, NVIDIA_SMI_APPS_KEY, NVIDIA_SMI_LIST_KEY, NVIDIA_SMI_QUERY_KEY,
                                    PID_STATUS_FILE, ROCM_SMI_LIVE_KEY)
from rocm_doctor.parsers import nvidia_smi
from rocm_doctor.parsers.amd_smi_live import parse_process
from rocm_doctor.parsers.live_files import parse_proc_status, parse_uevent
from rocm_doctor.parsers.rocm_smi_live import parse_rocm_smi_live
from rocm_doctor.probes._base import FILE_CAP, Recorder
from rocm_doctor.probes.amd_tools import resolve

PLATFORMS = ("linux", "wsl", "windows")
CSV = "--format=csv,noheader,nounits"
AMD_COMMANDS = {
    AMD_SMI_METRIC_KEY: ["amd-smi", "metric", "--json"],
    AMD_SMI_PROCESS_KEY: ["amd-smi", "process", "--json"],
    ROCM_SMI_LIVE_KEY: ["rocm-smi", "--showuse", "--showmemuse", "--showpids", "--json"],
}
ANCESTORS = 6  # parent levels followed from a listed pid towards the doctor


def _nvidia(recorder: Recorder) -> list[int]:
    tool = shutil.which("nvidia-smi", path=recorder.context.env.get("PATH")) or "nvidia-smi"
    return nvidia_queries(recorder, tool, list(nvidia_smi.GPU_FIELDS), ((NVIDIA_SMI_LIST_KEY, [tool, "-L"]),))


def nvidia_queries(recorder: Recorder, tool: str, fields: list[str], extra=()) -> list[int]:
    """nvidia-smi's GPU query beside its compute-apps query and the `extra` (key, argv) commands, all at once (each
    sample of the bench waits on them); a field this driver does not know is dropped from `fields` and the GPU query
    asked again. The pids listed, none where the GPU query failed (absent, or hung: asked again it would hang
    again)."""
    def query_gpus():
        for _ in range(4):
            result = recorder.command(NVIDIA_SMI_QUERY_KEY, [tool, "--query-gpu=" + ",".join(fields), CSV])
            unknown = nvidia_smi.invalid_field(result.stdout + result.stderr)
            if result.error or unknown not in fields:
                return result
            fields.remove(unknown)
        return result

    gpus, apps, *_ = recorder.side_by_side(
        query_gpus,
        lambda: recorder.command(NVIDIA_SMI_APPS_KEY,
                                 [tool, "--query-compute-apps=" + ",".join(nvidia_smi.APP_FIELDS), CSV]),
        *(lambda key=key, argv=argv: recorder.command(key, argv) for key, argv in extra))
    if gpus.error or gpus.timed_out:
        return []
    return [p["pid"] for p in nvidia_smi.parse_compute_apps(apps.stdout)["processes"]]


def _amd(recorder: Recorder) -> list[int]:
    env = recorder.context.env
    results = dict(zip(AMD_COMMANDS, recorder.side_by_side(*(
        lambda key=key, argv=argv: recorder.command(key, [resolve(argv[0], env) or argv[0], *argv[1:]], env=dict(env))
        for key, argv in AMD_COMMANDS.items()))))
    return ([p["pid"] for p in parse_process(results[AMD_SMI_PROCESS_KEY].stdout)]
            + [p["pid"] for p in parse_rocm_smi_live(results[ROCM_SMI_LIVE_KEY].stdout)["processes"]])


def _sysfs(recorder: Recorder) -> None:
    for entry in recorder.list_dir(DRM_DIR).entries or []:
        if re.fullmatch(r"card\d+", entry):
            device = f"{DRM_DIR}/{entry}/device"
            if parse_uevent(recorder.read_file(f"{device}/{CARD_UEVENT}").content or "")["driver"] == "amdgpu":
                for name in CARD_FILES:
                    recorder.read_file(f"{device}/{name}")


def record_parents(recorder: Recorder, pids: list[int], cap: int = FILE_CAP) -> None:
    """/proc/<pid>/status of each listed pid and of its parents, stopping at the doctor, init or an unreadable one."""
    own, seen = os.getpid(), set()
    for pid in pids:
        for _ in range(ANCESTORS):
            if pid in seen or pid <= 1 or pid == own:
                break
            seen.add(pid)
            status = parse_proc_status(recorder.read_file(PID_STATUS_FILE.format(pid=pid), cap).content or "")
            if status["ppid"] is None:
                break
            pid = status["ppid"]


def collect(recorder: Recorder) -> None:
    recorder.put(LIVE_SELF_KEY, {"pid": os.getpid(), "started": runner.started_pids()})
    if recorder.context.platform_os not in ("linux", "wsl"):
        _nvidia(recorder)
        return
    nvidia, amd = recorder.side_by_side(lambda: _nvidia(recorder), lambda: _amd(recorder))
    _sysfs(recorder)
    record_parents(recorder, nvidia + amd)
