"""nvidia.driver: which NVIDIA driver torch met, as far as anything recorded says, each reading with where it came
from: the driver version (the libcuda.so.X torch loaded, or nvidia-smi's header in a given log), the CUDA version
the driver supports (torch's "found version N" warning, or that header), and whether the CUDA runtime called the
driver too old or insufficient. A log (another run, perhaps another day) fills in only what this run did not
record. Runs after the torch facts and the given log (user.log)."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (LOG_KEY, NVIDIA_DRIVER, TORCH_AVAILABLE_ERROR, TORCH_FLAVOUR, TORCH_INSTALLED,
                                    TORCH_LIBRARIES, TORCH_PROBE, TORCH_WARNINGS)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.cuda_driver import libcuda_version, read_text

REQUIRES = (LOG_KEY, TORCH_AVAILABLE_ERROR, TORCH_FLAVOUR, TORCH_INSTALLED, TORCH_LIBRARIES,
            TORCH_PROBE, TORCH_WARNINGS)


def _said(facts: Facts) -> list[tuple[str, str]]:
    """(where, text) of what torch printed, then of the given log."""
    sources = [("torch's warning", "\n".join(facts.get(TORCH_WARNINGS) or [])),
               ("torch.cuda.is_available()", facts.get(TORCH_AVAILABLE_ERROR) or ""),
               ("the torch probe's stderr", (facts.get(TORCH_PROBE) or {}).get("stderr_tail") or "")]
    log = facts.get(LOG_KEY)
    if isinstance(log, dict) and log.get("text"):
        sources.append((f"the log {log.get('path')}", str(log["text"])))
    return [(where, text) for where, text in sources if text]


def interpret(observations: Observations, facts: Facts) -> None:
    if not facts.has(TORCH_FLAVOUR):
        why = facts.why_missing(TORCH_INSTALLED) if not facts.has(TORCH_INSTALLED) else "torch could not be imported"
        facts.set_missing(NVIDIA_DRIVER, why)
        return
    driver = {"version": None, "version_from": None, "cuda": None, "cuda_from": None, "too_old": None,
              "insufficient": None, "lines": []}
    loaded = libcuda_version(facts.get(TORCH_LIBRARIES))
    if loaded:
        driver["version"], driver["version_from"] = loaded[0], f"the driver library torch loaded: {loaded[1]}"
    for where, text in _said(facts):
        reading = read_text(text)
        from_log = where.startswith("the log")
        if reading["driver_cuda"] and driver["cuda"] is None and not (from_log and loaded):  # this run's driver wins
            driver["cuda"], driver["cuda_from"] = reading["driver_cuda"], where
        if reading["driver_version"] and driver["version"] is None:
            driver["version"], driver["version_from"] = reading["driver_version"], f"nvidia-smi in {where}"
        for said in ("too_old", "insufficient"):
            if reading[said] and driver[said] is None:
                driver[said] = where
        driver["lines"] += [f"{where}: {line}" for line in (reading["too_old"], reading["insufficient"],
                                                              reading["smi"]) if line and f"{where}: {line}" not in driver["lines"]]
    facts.set(NVIDIA_DRIVER, driver)
