"""rocminfo.*, hip.*, smi.*, *.targets and tools.garbled facts from the ROCm command-line tools the amd_tools probe
ran.

A tool that is missing, hangs or crashes gives a missing fact whose reason says which of these happened, so a check
can tell "ROCm is not installed" from "rocminfo crashed".
"""

from __future__ import annotations

from rocm_doctor.facts.command import CommandResult, signal_name
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (AGENT_ENUMERATOR_KEY, AMD_SMI_LIST_KEY, AMD_SMI_STATIC_KEY, AMDGPU_ARCH_KEY,
                                    AMDGPU_ARCH_TARGETS, HIP_CONFIG, HIP_VERSION, HIPCONFIG_FULL_KEY,
                                    HIPCONFIG_VERSION_KEY, ROCM_AGENT_ENUMERATOR_TARGETS, ROCM_SMI_KEY, ROCMINFO_AGENTS,
                                    ROCMINFO_KEY, ROCMINFO_STATUS, SMI_DEVICES, SMI_PROBLEMS, TOOLS_GARBLED)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.agent_enumerator import parse_target_lines
from rocm_doctor.parsers.amd_smi import parse_amd_smi
from rocm_doctor.parsers.hipconfig import parse_hip_version, parse_hipconfig_full
from rocm_doctor.parsers.rocm_smi import parse_rocm_smi
from rocm_doctor.parsers.rocminfo import parse_rocminfo

ERROR_STATES = ("rock-not-loaded", "kfd-permission-denied", "kfd-no-memory", "kfd-missing", "kfd-open-failed",
                "out-of-resources", "unsupported-gpu", "hsa-error")


def tool_name(result: CommandResult) -> str:
    return result.argv[0].rsplit("/", 1)[-1] if result.argv else "the tool"


def failure(result: CommandResult | None, what: str) -> str | None:
    """Why a command gave no usable output, in words; None when it ran and exited 0."""
    if result is None:
        return f"{what} was not run on this platform"
    tool = tool_name(result)
    if result.error == "not found":
        return f"{tool} not found on PATH or in ROCm's bin folder ($ROCM_PATH/bin, /opt/rocm/bin)"
    if result.error:
        return f"{tool} could not run: {result.error}"
    if result.timed_out:
        return f"{tool} did not finish within {result.timeout_s:g} s and was killed"
    if result.signal:
        return f"{tool} was killed by signal {signal_name(result.signal)}"
    if result.returncode != 0:
        last = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:]
        return f"{tool} exited with code {result.returncode}" + (f": {last[0][:200]}" if last else "")
    return None


def _output(result: CommandResult) -> str:
    return result.stdout + ("\n" + result.stderr if result.stderr else "")


def _rocminfo(observations: Observations, facts: Facts, garbled: list) -> None:
    result = observations.command(ROCMINFO_KEY)
    if result is None:
        for key in (ROCMINFO_STATUS, ROCMINFO_AGENTS):
            facts.set_missing(key, "rocminfo was not run on this platform")
        return
    parsed = parse_rocminfo(_output(result))
    garbled += [dict(g, tool="rocminfo") for g in parsed["garbled"]]
    state = parsed["state"]
    if result.error == "not found":
        state = "not-installed"
    elif result.error:
        state = "not-run"
    elif result.timed_out:
        state = "timed-out"
    elif state not in ERROR_STATES and (result.signal or result.returncode != 0):
        state = "crashed"
    status = {k: parsed[k] for k in ("wsl", "runtime_version", "rock_loaded", "rock_version", "kfd_error",
                                     "hsa_error", "agent_creation_failed", "complete")}
    status.update(state=state, returncode=result.returncode, evidence=[result.describe(), *parsed["evidence"]],
                  environment=result.environment)  # "run.env": it ran in the service's or kernel's environment
    facts.set(ROCMINFO_STATUS, status)
    if parsed["agents"]:
        facts.set(ROCMINFO_AGENTS, parsed["agents"])
    else:
        why = failure(result, "rocminfo") or f"rocminfo listed no agents ({state})"
        detail = next((line for line in parsed["evidence"] if "ROCk module is loaded" not in line), None)
        facts.set_missing(ROCMINFO_AGENTS, why + (f": {detail}" if detail and detail not in why else ""))


def _hip(observations: Observations, facts: Facts, garbled: list) -> None:
    full = observations.command(HIPCONFIG_FULL_KEY)
    config = parse_hipconfig_full(_output(full)) if full is not None else None
    garbled += [dict(g, tool="hipconfig --full") for g in (config or {}).get("garbled") or []]
    if config and (config["version"] or config["platform"] or config["hip_path"]):
        facts.set(HIP_CONFIG, config)
    else:
        facts.set_missing(HIP_CONFIG, failure(full, "hipconfig") or "hipconfig --full printed no HIP configuration")
    short = observations.command(HIPCONFIG_VERSION_KEY)
    version = parse_hip_version(short.stdout) if short is not None and not failure(short, "hipconfig") else None
    if version:
        facts.set(HIP_VERSION, dict(version, source="hipconfig --version"))
    elif config and config["version"]:
        facts.set(HIP_VERSION, dict(config["version"], source="hipconfig --full"))
    else:
        facts.set_missing(HIP_VERSION, failure(short, "hipconfig") or "hipconfig printed no HIP version")


def _merge_amd_smi(static: list[dict], listed: list[dict]) -> list[dict]:
    """`amd-smi static` has names and gfx, `amd-smi list` the KFD ids and UUID; join them on the GPU index."""
    by_index = {d["index"]: d for d in listed}
    devices = []
    for device in static or listed:
        extra = by_index.get(device["index"], {})
        merged = dict(device)
        for key, value in extra.items():
            if merged.get(key) is None:
                merged[key] = value
        devices.append(dict(merged, source="amd-smi"))
    return devices


def _smi(observations: Observations, facts: Facts, garbled: list) -> None:
    problems, reasons = [], []
    parsed = {}
    for key in (AMD_SMI_STATIC_KEY, AMD_SMI_LIST_KEY, ROCM_SMI_KEY):
        result = observations.command(key)
        if result is None:
            continue
        parsed[key] = parse_amd_smi(_output(result)) if key.startswith("amd") else parse_rocm_smi(_output(result))
        problems += [f"{tool_name(result)}: {line}" for line in parsed[key]["errors"]]
        garbled += [dict(g, tool=" ".join([tool_name(result), *result.argv[1:]])) for g in parsed[key]["garbled"]]
        reason = failure(result, key)
        if reason and not parsed[key]["devices"]:
            reasons.append(reason)
    if not parsed:
        facts.set_missing(SMI_DEVICES, "amd-smi and rocm-smi were not run on this platform")
        return
    amd = _merge_amd_smi(*(parsed.get(k, {}).get("devices", []) for k in (AMD_SMI_STATIC_KEY, AMD_SMI_LIST_KEY)))
    rocm = [dict(d, source="rocm-smi") for d in parsed.get(ROCM_SMI_KEY, {}).get("devices", [])]
    if amd or rocm:
        facts.set(SMI_DEVICES, amd or rocm)
    else:
        facts.set_missing(SMI_DEVICES, "; ".join(dict.fromkeys(reasons)) or "neither amd-smi nor rocm-smi listed a GPU")
    facts.set(SMI_PROBLEMS, problems)


def _targets(observations: Observations, facts: Facts, key: str, fact: str, garbled: list) -> None:
    result = observations.command(key)
    reason = failure(result, key)
    if reason:
        facts.set_missing(fact, reason)
        return
    parsed = parse_target_lines(_output(result))
    garbled += [dict(g, tool=tool_name(result)) for g in parsed["garbled"]]
    facts.set(fact, parsed["gpus"])


def interpret(observations: Observations, facts: Facts) -> None:
    garbled: list[dict] = []  # {tool, what, lines}: output no healthy install prints
    _rocminfo(observations, facts, garbled)
    _hip(observations, facts, garbled)
    _smi(observations, facts, garbled)
    _targets(observations, facts, AGENT_ENUMERATOR_KEY, ROCM_AGENT_ENUMERATOR_TARGETS, garbled)
    _targets(observations, facts, AMDGPU_ARCH_KEY, AMDGPU_ARCH_TARGETS, garbled)
    facts.set(TOOLS_GARBLED, garbled)
