"""log.machine: what a log given with `check --log` says about the machine it came from (targets, overrides, torch
builds, ROCm and HIP versions, interpreters), each item with its line, so checks can judge a user's log replayed
without the user's machine and say which reading came from the log; a GPU named only by its PCI id or card name gets
its target from the GPU catalog. Runs after amd_derived (user.log)."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import LOG_KEY, LOG_MACHINE
from rocm_doctor.facts.observations import Observations
from rocm_doctor.knowledge import catalog
from rocm_doctor.parsers.log_machine import parse_log

REQUIRES = (LOG_KEY,)


def interpret(observations: Observations, facts: Facts) -> None:
    log = facts.get(LOG_KEY)
    if not isinstance(log, dict) or not log.get("text"):
        facts.set_missing(LOG_MACHINE, "no log was given (check --log FILE)")
        return
    machine = dict(parse_log(str(log["text"])), path=log.get("path"))
    _targets_by_name(machine)
    facts.set(LOG_MACHINE, machine)


def _targets_by_name(machine: dict) -> None:
    """A GPU the log names only by its PCI id (Ollama's name=1002:7480) or its card ("RX 6700 XT") gets its gfx from
    the GPU catalog, when the log names no target itself."""
    if machine["targets"]:
        return
    for gpu in machine.get("gpus") or []:
        name = str(gpu.get("name") or "")
        gfx = catalog.gfx_for_pci_id(name.split(":")[1]) if name.lower().startswith("1002:") else None
        found = catalog.by_name(name) if not gfx and name else None
        gfx = gfx or (found.gfx if found is not None and found.vendor == "amd" else None)
        if gfx and all(t["gfx"] != gfx for t in machine["targets"]):
            machine["targets"].append({"gfx": gfx, "line": gpu["line"], "via": f"{name} in the GPU catalog"})
