"""Reads the torch child's JSON lines into torch.* facts, and says how the child ended."""

from __future__ import annotations

import re
from typing import Any

from rocm_doctor.engine.child import classify, parse_json_lines
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import GCC_KEY, TORCH_PROBE_KEY as COMMAND_KEY
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
        facts.set("python.target", target)
    result = observations.command(COMMAND_KEY)
    if result is None:
        for key in ("torch.probe", "torch.installed"):
            facts.set_missing(key, "the torch probe did not run")
        return
    stages = parse_json_lines(result.stdout)
    outcome = probe_outcome(result, stages)
    facts.set("torch.probe", outcome)
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
        facts.set("python.target.version", start.get("python"))
    _host(observations, facts, start or {}, by_stage.get("build") or {})

    imported = by_stage.get("import")
    if imported is None:
        facts.set_missing("torch.installed", why)
        facts.set_missing("torch.available", why)
        return
    if not imported.get("ok"):
        facts.set("torch.installed", False if imported.get("missing") else True)
        facts.set("torch.import_error", imported.get("error"))
        facts.set_missing("torch.available", "torch could not be imported")
        return
    facts.set("torch.installed", True)
    facts.set("torch.version", imported.get("version"))
    facts.set("torch.file", imported.get("file"))
    facts.set("torch.hip", imported.get("hip"))
    facts.set("torch.cuda_version", imported.get("cuda"))
    facts.set("torch.flavour", flavour(imported.get("version"), imported.get("hip"), imported.get("cuda")))
    if isinstance(imported.get("numpy"), dict):
        facts.set("torch.numpy", imported["numpy"])
    else:
        facts.set_missing("torch.numpy", "this torch probe did not report numpy")
    if isinstance(imported.get("bytecode"), dict):
        facts.set("torch.bytecode", dict(imported["bytecode"], import_s=imported.get("seconds")))
    else:
        facts.set_missing("torch.bytecode", "this torch probe did not report torch's compiled bytecode")

    available = by_stage.get("available")
    if available is None:
        facts.set_missing("torch.available", why)
    else:
        facts.set("torch.available", bool(available.get("available")))
        facts.set("torch.available_error", available.get("error"))
        facts.set("torch.warnings", available.get("warnings") or [])
        if isinstance(available.get("threads"), int):
            facts.set("torch.threads", available["threads"])
    count = by_stage.get("count")
    if count is not None and count.get("device_count") is not None:
        facts.set("torch.device_count", count["device_count"])
    arch = by_stage.get("arch_list")
    if arch is not None and arch.get("arch_list") is not None:
        facts.set("torch.arch_list", arch["arch_list"])
    elif facts.get("torch.flavour") == "cpu":
        facts.set_missing("torch.arch_list", "torch is a CPU build: it has no GPU targets")
    elif arch is not None:
        facts.set_missing("torch.arch_list", f"torch.cuda.get_arch_list() failed: {arch.get('error') or 'no answer'}")
    else:  # the probe asks only when torch.cuda.is_available() is True
        facts.set_missing("torch.arch_list", "torch sees no GPU, so its compiled GPU targets were not asked for")
    if devices:
        facts.set("torch.devices", devices)
    libraries = by_stage.get("libraries")
    if libraries is not None and "paths" in libraries:
        facts.set("torch.libraries", libraries["paths"])


def _host(observations: Observations, facts: Facts, start: dict, build: dict) -> None:
    """torch.host: the CPU the torch child ran on (and the instruction set torch chose for it), the gcc on PATH
    (torch.compile on the CPU and C++ extensions build with it) and the compiler torch itself was built with."""
    gcc = observations.command(GCC_KEY)
    built_with = re.search(r"^\s*- (GCC|clang|MSVC) ([\w.]+)", str(build.get("config") or ""), re.M)
    facts.set("torch.host", {
        "cpu": start.get("cpu"), "cpus": start.get("cpus"), "cpu_capability": build.get("cpu_capability"),
        "gcc": _first_line(gcc.stdout) if gcc is not None and gcc.ok else None,
        "gcc_error": ("not recorded (a run from before rocm-doctor asked for it)" if gcc is None else None if gcc.ok
                      else f"gcc {gcc.error}" if gcc.error else gcc.describe()),
        "built_with": " ".join(built_with.groups()) if built_with else None})


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
