"""A machine's observations built from recorded tool outputs, for scenario tests: what the probes would have recorded
on a Linux box whose rocminfo, hipconfig or rocm_agent_enumerator printed a real thread's output, judged by the
real pipeline (interpreters, checks, relations, diagnosis) as `check --from` judges a snapshot."""

from __future__ import annotations

import json
from typing import Iterable, Optional

from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.keys import (AMDGPU_MODULE_DIR, KFD_NODES_DIR as KFD_NODES, NODE_PROPERTIES, PCI_SYSFS_KEY,
                                    TORCH_PROBE_KEY)
from rocm_doctor.facts.observations import FileRecord, Observations
from rocm_doctor.probes.amd_tools import LINUX_COMMANDS as AMD_TOOLS

PYTHON = "/home/user/venv/bin/python"


def kfd_node(gfx_target_version: int = 0, device_id: int = 0, location_id: int = 0, simd_count: Optional[int] = None,
             cpu_cores: int = 0) -> str:
    """A KFD topology node's properties file: a CPU node by default, a GPU node when a gfx_target_version is given."""
    simd = simd_count if simd_count is not None else (64 if gfx_target_version else 0)
    return (f"cpu_cores_count {cpu_cores}\nsimd_count {simd}\ngfx_target_version {gfx_target_version}\nvendor_id "
            f"{4098 if gfx_target_version else 0}\ndevice_id {device_id}\nlocation_id {location_id}\ndomain 0\n"
            f"simd_per_cu 2\n")


def torch_lines(version: str, hip: Optional[str], available: bool, devices: Iterable[dict] = (),
                arch_list: Optional[list] = None) -> str:
    """The torch probe's JSON lines for a torch that imported and answered is_available()."""
    devices = list(devices)
    lines = [{"stage": "start", "python": "3.12.3", "executable": PYTHON, "prefix": "/home/user/venv"},
             {"stage": "import", "ok": True, "version": version, "hip": hip, "cuda": None,
              "file": "/home/user/venv/lib/python3.12/site-packages/torch/__init__.py"},
             {"stage": "build"}, {"stage": "available", "available": available, "error": None, "warnings": []},
             {"stage": "count", "device_count": len(devices)}]
    if available:
        lines.append({"stage": "arch_list", "arch_list": arch_list or []})
    lines += [dict(d, stage="device", index=i) for i, d in enumerate(devices)]
    lines += [{"stage": "libraries", "paths": []}, {"stage": "done"}]
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def observations(commands: Optional[dict] = None, pci: Iterable[tuple] = (), kfd: Optional[list[str]] = None,
                 env: Optional[dict] = None, os: str = "linux", torch: Optional[str] = None,
                 amdgpu_loaded: Optional[bool] = True, probes: Optional[dict] = None) -> Observations:
    """commands: key → stdout or (stdout, returncode); AMD tools not named are recorded as not found.
    pci: (slot, device_id, driver) per AMD display device. kfd: property texts of nodes 0, 1, ... (None: no KFD)."""
    obs = Observations(platform={"os": os, "system": "Linux", "release": "6.8.0-45-generic", "machine": "x86_64"},
                       env=dict(env or {"PATH": "/usr/bin:/bin"}), target={"python": PYTHON, "reason": "test"})
    given = dict(commands or {})
    for key, argv in AMD_TOOLS.items():
        value = given.pop(key, None)
        if value is None:
            obs.add_command(key, CommandResult(argv=list(argv), error="not found"))
        else:
            stdout, code = value if isinstance(value, tuple) else (value, 0)
            obs.add_command(key, CommandResult(argv=[f"/opt/rocm/bin/{argv[0]}", *argv[1:]], returncode=code,
                                               stdout=stdout))
    for key, stdout in given.items():
        obs.add_command(key, CommandResult(argv=[key], returncode=0, stdout=stdout))
    if torch is not None:
        obs.add_command(TORCH_PROBE_KEY, CommandResult(argv=[PYTHON, "_torch_child.py"], returncode=0, stdout=torch))
    obs.add_probe(PCI_SYSFS_KEY, [{"slot": slot, "class": "0x030000", "vendor": "0x1002", "device": device,
                                 "driver": driver} for slot, device, driver in pci])
    if kfd is not None:
        obs.add_file(FileRecord(KFD_NODES, exists=True, entries=[str(i) for i in range(len(kfd))]))
        for i, text in enumerate(kfd):
            obs.add_file(FileRecord(f"{KFD_NODES}/{i}/{NODE_PROPERTIES}", exists=True, content=text))
    if amdgpu_loaded is not None:
        obs.add_file(FileRecord(AMDGPU_MODULE_DIR, exists=amdgpu_loaded, entries=[] if amdgpu_loaded else None))
    for key, value in (probes or {}).items():
        obs.add_probe(key, value)
    return obs
