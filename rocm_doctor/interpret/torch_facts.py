"""Reads the torch child's JSON lines into torch.* facts, and says how the child ended."""

from __future__ import annotations

import re
from typing import Any

from rocm_doctor.engine.child import classify, parse_json_lines
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (GCC_KEY, PYTHON_TARGET, PYTHON_TARGET_VERSION, TORCH_ARCH_LIST, TORCH_AVAILABLE,
                                    TORCH_AVAILABLE_ERROR, TORCH_BYTECODE, TORCH_CUDA_VERSION, TORCH_DEVICES,
                                    TORCH_DEVICE_COUNT, TORCH_FILE, TORCH_FLAVOUR, TORCH_HIP, TORCH_HOST,
                                    TORCH_IMPORT_ERROR, TORCH_INSTALLED, TORCH_LIBRARIES, TORCH_NUMPY, TORCH_PROBE,
                                    TORCH_PROBE_KEY as COMMAND_KEY, TORCH_THREADS, TORCH_VERSION, TORCH_WARNINGS)
from rocm_doctor.facts.observations import Observations

STAGE_MEANING = {
    None: "starting the interpreter",
    "start": "import torch",
    "import": "reading torch's build configuration",
    "build": "torch.cuda.is_available()",
    "available": "torch.cuda.device_count()",
    "count": "torch.cuda.get_arch_list()",
    "arch_list": "querying device properties",
    "device": "querying device properties",
    "libraries": "finishing",
}


def flavour(torch_version: str | None, hip: str | None, cuda: str | None) -> str:
    if hip:
        return "rocm"
    if cuda:
        return "cuda"
    return "cpu"


def probe_outcome(result: CommandResult, stages: list[dict]) -> dict[str, Any]:
    last = stages[-1]["stage"] if stages else None
    state, detail = classify(result, finished=last == "done")
    if state in ("hung", "crashed"):
        detail = f"{detail} while {STAGE_MEANING.get(last, last)}"
    return {
        "argv": result.argv,
        "returncode": result.returncode,
        "last_stage": last,
        "duration_s": result.duration_s,
        "stderr_tail": result.stderr[-2000:],
        "state": state,
        "detail": detail,
    }


def interpret(observations: Observations, facts: Facts) -> None:
    target = observations.target
    if target:
        facts.set(PYTHON_TARGET, target)
    result = observations.command(COMMAND_KEY)
    if result is None:
        for key in (TORCH_PROBE, TORCH_INSTALLED):
            facts.set_missing(key, "the torch probe did not run")
        return
    stages = parse_json_lines(result.stdout)
    outcome = probe_outcome(result, stages)
    facts.set(TORCH_PROBE, outcome)
    by_stage: dict[str, dict] = {}
    devices = []
    for stage in stages:
        if stage["stage"] == "device":
            devices.append({k: v for k, v in stage.items() if k != "stage"})
        else:
            by_stage[stage["stage"]] = stage
    why = f"the torch probe {outcome['state']}: {outcome['detail']}"

    start = by_stage.get("start")
    if start:
        facts.set(PYTHON_TARGET_VERSION, start.get("python"))
    _host(observations, facts, start or {}, by_stage.get("build") or {})

    imported = by_stage.get("import")
    if imported is None:
        facts.set_missing(TORCH_INSTALLED, why)
        facts.set_missing(TORCH_AVAILABLE, why)
        return
    if not imported.get("ok"):
        facts.set(TORCH_INSTALLED, False if imported.get("missing") else True)
        facts.set(TORCH_IMPORT_ERROR, imported.get("error"))
        facts.set_missing(TORCH_AVAILABLE, "torch could not be imported")
        return
    facts.set(TORCH_INSTALLED, True)
    facts.set(TORCH_VERSION, imported.get("version"))
    facts.set(TORCH_FILE, imported.get("file"))
    facts.set(TORCH_HIP, imported.get("hip"))
    facts.set(TORCH_CUDA_VERSION, imported.get("cuda"))
    facts.set(TORCH_FLAVOUR, flavour(imported.get("version"), imported.get("hip"), imported.get("cuda")))
    if isinstance(imported.get("numpy"), dict):
        facts.set(TORCH_NUMPY, imported["numpy"])
    else:
        facts.set_missing(TORCH_NUMPY, "this torch probe did not report numpy")
    if isinstance(imported.get("bytecode"), dict):
        facts.set(TORCH_BYTECODE, dict(imported["bytecode"], import_s=imported.get("seconds")))
    else:
        facts.set_missing(TORCH_BYTECODE, "this torch probe did not report torch's compiled bytecode")

    available = by_stage.get("available")
    if available is None:
        facts.set_missing(TORCH_AVAILABLE, why)
    else:
        facts.set(TORCH_AVAILABLE, bool(available.get("available")))
        facts.set(TORCH_AVAILABLE_ERROR, available.get("error"))
        facts.set(TORCH_WARNINGS, available.get("warnings") or [])
        if isinstance(available.get("threads"), int):
            facts.set(TORCH_THREADS, available["threads"])
    count = by_stage.get("count")
    if count is not None and count.get("device_count") is not None:
        facts.set(TORCH_DEVICE_COUNT, count["device_count"])
    arch = by_stage.get("arch_list")
    if arch is not None and arch.get("arch_list") is not None:
        facts.set(TORCH_ARCH_LIST, arch["arch_list"])
    elif facts.get(TORCH_FLAVOUR) == "cpu":
        facts.set_missing(TORCH_ARCH_LIST, "torch is a CPU build: it has no GPU targets")
    elif arch is not None:
        facts.set_missing(TORCH_ARCH_LIST, f"torch.cuda.get_arch_list() failed: {arch.get('error') or 'no answer'}")
    else:  # the probe asks only when torch.cuda.is_available() is True
        facts.set_missing(TORCH_ARCH_LIST, "torch sees no GPU, so its compiled GPU targets were not asked for")
    if devices:
        facts.set(TORCH_DEVICES, devices)
    libraries = by_stage.get("libraries")
    if libraries is not None and "paths" in libraries:
        facts.set(TORCH_LIBRARIES, libraries["paths"])


def _host(observations: Observations, facts: Facts, start: dict, build: dict) -> None:
    """torch.host: the CPU the torch child ran on (and the instruction set torch chose for it), the gcc on PATH
    (torch.compile on the CPU and C++ extensions build with it) and the compiler torch itself was built with."""
    gcc = observations.command(GCC_KEY)
    built_with = re.search(r"^\s*- (GCC|clang|MSVC) ([\w.]+)", str(build.get("config") or ""), re.M)
    facts.set(TORCH_HOST, {
        "cpu": start.get("cpu"), "cpus": start.get("cpus"), "cpu_capability": build.get("cpu_capability"),
        "gcc": _first_line(gcc.stdout) if gcc is not None and gcc.ok else None,
        "gcc_error": ("not recorded (a run from before rocm-doctor asked for it)" if gcc is None else None if gcc.ok
                      else f"gcc {gcc.error}" if gcc.error else gcc.describe()),
        "built_with": " ".join(built_with.groups()) if built_with else None})


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
