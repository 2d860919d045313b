"""A cheap sample of the live GPU state, taken by the parent around each stage and each bench section: one
`nvidia-smi --query-gpu` beside one `--query-compute-apps` on NVIDIA, one `rocm-smi` JSON query on AMD (amd-smi where
rocm-smi is missing), and the `/proc/<pid>/status` of each listed process and its parents, so the doctor's own
children are told apart from other processes. The sample is raw observations, so a replay re-reads it. Its
commands run side by side under one deadline: hung tools cost one timeout per sample, not one each.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Callable, Mapping

from rocm_doctor.engine import runner
from rocm_doctor.facts.keys import AMD_SMI_METRIC_KEY, AMD_SMI_PROCESS_KEY, LIVE_SELF_KEY, ROCM_SMI_LIVE_KEY
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.amd_smi_live import parse_process
from rocm_doctor.parsers.rocm_smi_live import parse_rocm_smi_live
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.probes.amd_tools import resolve
from rocm_doctor.probes.gpu_live import AMD_COMMANDS, nvidia_queries, record_parents

Sampler = Callable[[], dict]
FIELDS = ("index", "uuid", "name", "pci.bus_id", "utilization.gpu", "memory.used", "memory.total", "clocks.sm",
          "clocks.max.sm", "clocks.mem", "clocks.max.mem", "power.draw", "power.limit", "power.default_limit",
          "temperature.gpu", "clocks_throttle_reasons.active")
TIMEOUT_S = 5.0
STATUS_CAP = 512  # Name, Pid, PPid and Uid are in the first lines of /proc/<pid>/status


def sampler(env: Mapping[str, str], platform_os: str, timeout_s: float = TIMEOUT_S) -> Sampler:
    """A function that takes one sample of every GPU each time it is called. A field this driver does not know is
    dropped once and stays dropped for the later samples."""
    env = dict(env)
    fields = list(FIELDS)
    nvidia = shutil.which("nvidia-smi", path=env.get("PATH"))
    amd = {key: resolve(argv[0], env) for key, argv in AMD_COMMANDS.items()} if platform_os in ("linux", "wsl") else {}

    def sample() -> dict:
        started = time.monotonic()
        observations = Observations()
        recorder = Recorder(observations, ProbeContext(python="", python_reason="", platform_os=platform_os, env=env,
                                                       command_timeout_s=timeout_s, deadline=started + timeout_s))
        recorder.put(LIVE_SELF_KEY, {"pid": os.getpid(), "started": runner.started_pids()})
        asked = nvidia or not any(amd.values())
        on_nvidia, on_amd = recorder.side_by_side(
            lambda: nvidia_queries(recorder, nvidia or "nvidia-smi", fields) if asked else [],
            lambda: _amd(recorder, amd, env))
        record_parents(recorder, on_nvidia + on_amd, STATUS_CAP)
        raw = observations.to_dict()
        return {**{key: raw[key] for key in ("commands", "files", "probes")},
                "seconds": round(time.monotonic() - started, 3)}

    return sample


def _amd(recorder: Recorder, tools: dict, env: dict) -> list[int]:
    """rocm-smi's one query (use, memory, pids) where it is installed, else amd-smi's metric and process lists."""
    wanted = [ROCM_SMI_LIVE_KEY] if tools.get(ROCM_SMI_LIVE_KEY) else [
        key for key in (AMD_SMI_METRIC_KEY, AMD_SMI_PROCESS_KEY) if tools.get(key)]
    results = dict(zip(wanted, recorder.side_by_side(
        *(lambda key=key: recorder.command(key, [tools[key], *AMD_COMMANDS[key][1:]], env=env) for key in wanted))))
    pids = []
    if ROCM_SMI_LIVE_KEY in results:
        pids += [p["pid"] for p in parse_rocm_smi_live(results[ROCM_SMI_LIVE_KEY].stdout)["processes"]]
    if AMD_SMI_PROCESS_KEY in results:
        pids += [p["pid"] for p in parse_process(results[AMD_SMI_PROCESS_KEY].stdout)]
    return pids
