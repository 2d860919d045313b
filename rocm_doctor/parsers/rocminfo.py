"""`rocminfo` → HSA agents and the error state it ended in. Pure; never raises.

Handles the old padded layout (trailing spaces on every line), WSL output (no Uuid/BDFID lines), NPU agents
(`Device Type: DSP`) and the short error outputs rocminfo prints when it cannot reach the GPU.
"""

from __future__ import annotations

import re

from rocm_doctor.parsers import gfx as gfxlib

_KEY_VALUE = re.compile(r"^\s*(?P<key>[^:]+?)\s*:+\s*(?P<value>.*?)\s*$")
_AGENT = re.compile(r"^\s*Agent\s+(\d+)\s*$")
_NUMBERED = re.compile(r"^\s*(Pool|ISA)\s+(\d+)\s*$")
_INT = re.compile(r"^(-?\d+)")
_ROCK = re.compile(r"ROCk module(?: version (?P<version>\S+))? is (?P<not>NOT )?loaded")
_KFD_OPEN = re.compile(r"Unable to open /dev/kfd read-write:\s*(?P<reason>.+?)\s*$")
_HSA_STATUS = re.compile(r"\b(HSA_STATUS_ERROR_[A-Z_]+)")
_FAILURE_AT = re.compile(r"hsa api call failure at:\s*(?P<where>\S+)")
_GROUP = re.compile(r"\bgroup\b")  # rocminfo's notes on render/video/DRM group membership
# ROCr skipped a KFD GPU node it does not know ("Warning: Agent creation failed.\nThe GPU node has an unrecognized id.")
_AGENT_FAILED = re.compile(r"Agent creation failed|GPU node has an unrecognized id")
_GFX_NAME = re.compile(r"^gfx[0-9a-z]+$", re.IGNORECASE)
PIB_KB = 1 << 40  # a pool of a pebibyte or more is no real GPU's memory

KFD_REASON_STATES = {
    "permission denied": "kfd-permission-denied",
    "cannot allocate memory": "kfd-no-memory",
    "no such file or directory": "kfd-missing",
}

# Agent-level keys → (field, converter). Anything else is ignored.
_AGENT_FIELDS = {
    "Name": ("name", str),
    "Uuid": ("uuid", str),
    "Marketing Name": ("marketing_name", str),
    "Vendor Name": ("vendor_name", str),
    "Feature": ("feature", str),
    "Device Type": ("device_type", str.upper),
    "Node": ("node", "int"),
    "Chip ID": ("chip_id", "hex"),
    "ASIC Revision": ("asic_revision", "int"),
    "Compute Unit": ("compute_units", "int"),
    "SIMDs per CU": ("simds_per_cu", "int"),
    "Wavefront Size": ("wavefront_size", "int"),
    "Max Clock Freq. (MHz)": ("max_clock_mhz", "int"),
    "BDFID": ("bdfid", "int"),
    "Memory Properties": ("memory_properties", str),
}


def to_int(text: str | None) -> int | None:
    """`29631(0x73bf)` → 29631; `16760832(0xffc000) KB` → 16760832; junk → None."""
    match = _INT.match((text or "").strip())
    return int(match.group(1)) if match else None


def _convert(kind, value: str):
    if kind == "int":
        return to_int(value)
    if kind == "hex":
        number = to_int(value)
        return None if number is None else f"0x{number:04x}"
    return kind(value)


def _new_agent(number: int) -> dict:
    agent: dict = {field: None for field, _ in _AGENT_FIELDS.values()}
    agent.update(agent=number, isas=[], pools=[])
    return agent


def _finish_agent(agent: dict) -> dict:
    """Derived fields: the gfx and target id of the first specific ISA, VRAM, APU flag, PCI bus."""
    specific = [isa for isa in agent["isas"] if not gfxlib.is_generic(gfxlib.base_gfx(isa))]
    agent["target_id"] = specific[0] if specific else None
    agent["gfx"] = gfxlib.base_gfx(agent["target_id"]) or (
        gfxlib.base_gfx(agent.get("name")) if agent.get("device_type") == "GPU" else None
    )
    coarse = [p["size_kb"] for p in agent["pools"] if p.get("size_kb") and "COARSE GRAINED" in p.get("segment", "")]
    agent["vram_kb"] = max(coarse) if coarse and agent.get("device_type") == "GPU" else None
    props = agent.get("memory_properties")
    agent["is_apu"] = None if props is None else "APU" in props.upper().split()
    bdfid = agent.get("bdfid")
    agent["pci_bus"] = f"{bdfid >> 8:02x}:{(bdfid >> 3) & 0x1f:02x}.{bdfid & 7}" if bdfid else None
    return agent


def _status(lines: list[str]) -> dict:
    status: dict = {"rock_loaded": None, "rock_version": None, "wsl": False, "kfd_error": None,
                    "hsa_error": None, "unsupported_gpu": False, "agent_creation_failed": False, "evidence": []}
    for line in lines:
        text = line.strip()
        rock = _ROCK.search(text)
        kfd = _KFD_OPEN.search(text)
        hsa = _HSA_STATUS.search(text)
        if rock:
            status["rock_loaded"] = not rock["not"]
            status["rock_version"] = rock["version"]
        elif text.startswith("WSL environment detected"):
            status["wsl"] = True
        elif text.startswith("ROCR: unsupported GPU"):
            status["unsupported_gpu"] = True
        elif _AGENT_FAILED.search(text):
            status["agent_creation_failed"] = True
        elif kfd:
            status["kfd_error"] = kfd["reason"]
        elif hsa:
            status["hsa_error"] = hsa.group(1)
        elif not (_FAILURE_AT.search(text) or _GROUP.search(text)):
            continue
        status["evidence"].append(text)
    return status


def _state(status: dict, agents: list[dict]) -> str:
    if status["unsupported_gpu"]:
        return "unsupported-gpu"
    if status["rock_loaded"] is False:
        return "rock-not-loaded"
    if status["kfd_error"]:
        return KFD_REASON_STATES.get(status["kfd_error"].lower(), "kfd-open-failed")
    if status["hsa_error"] == "HSA_STATUS_ERROR_OUT_OF_RESOURCES":
        return "out-of-resources"
    if status["hsa_error"]:
        return "hsa-error"
    return "ok" if agents else "unrecognized"


def parse_rocminfo(text: str | None) -> dict:
    """{state, agents, runtime_version, wsl, rock_loaded, kfd_error, hsa_error, agent_creation_failed, evidence,
    complete, garbled: [{what, lines}]}."""
    lines = (text or "").splitlines()
    agents: list[dict] = []
    system: dict = {}
    seen: dict[str, list[str]] = {}  # system lines by key, to tell two outputs run together
    agent = None
    section = None  # None | "pools" | "isas" | "cache"
    for line in lines:
        number = _AGENT.match(line)
        if number:
            agent = _new_agent(int(number.group(1)))
            agents.append(agent)
            section = None
            continue
        numbered = _NUMBERED.match(line)
        if numbered and agent is not None:
            if numbered.group(1) == "Pool":
                agent["pools"].append({})
            section = "pools" if numbered.group(1) == "Pool" else "isas"
            continue
        match = _KEY_VALUE.match(line)
        if not match:
            continue
        key, value = match["key"], match["value"]
        if agent is None:
            if key in ("Runtime Version", "Runtime Ext Version"):
                system.setdefault(key.lower().replace(" ", "_"), value or None)
                seen.setdefault(key, []).append(line.strip())
            continue
        if key in ("Pool Info", "ISA Info", "Cache Info"):
            section = {"Pool Info": "pools", "ISA Info": "isas", "Cache Info": "cache"}[key]
        elif section == "isas" and key == "Name":
            if gfxlib.target_id(value):
                agent["isas"].append(gfxlib.target_id(value))
        elif section == "pools" and agent["pools"]:
            if key == "Segment":
                agent["pools"][-1]["segment"] = value
            elif key == "Size":
                agent["pools"][-1]["size_kb"] = to_int(value)
        elif key in _AGENT_FIELDS and section in (None, "cache"):
            field, kind = _AGENT_FIELDS[key]
            agent[field] = _convert(kind, value)
            section = None
    agents = [_finish_agent(a) for a in agents]
    status = _status(lines)
    return {
        "garbled": _garbled(agents, seen),
        "state": _state(status, agents),
        "agents": agents,
        "runtime_version": system.get("runtime_version"),
        "runtime_ext_version": system.get("runtime_ext_version"),
        "complete": any(line.strip() == "*** Done ***" for line in lines),
        **status,
    }


def _garbled(agents: list[dict], seen: dict[str, list[str]]) -> list[dict]:
    """What cannot come from one healthy rocminfo run: a system field printed twice with different values, agent
    numbers that repeat, a GPU named by no valid gfx, a GPU memory pool of 0 bytes or of a pebibyte and more."""
    out = [{"what": f"'{key}' printed {len(found)} times with different values", "lines": found}
           for key, found in seen.items() if len(set(found)) > 1]
    numbers = [a["agent"] for a in agents]
    repeated = sorted({n for n in numbers if numbers.count(n) > 1})
    if repeated:
        out.append({"what": "agent numbers repeat (" + ", ".join(f"Agent {n}" for n in repeated) + ")",
                    "lines": [f"Agent {n}" for n in repeated]})
    for agent in (a for a in agents if a.get("device_type") == "GPU"):
        name = agent.get("name") or ""
        if _GFX_NAME.match(name) and not gfxlib.base_gfx(name):
            out.append({"what": f"Agent {agent['agent']} is named {name}, which is no gfx target",
                        "lines": [f"Name: {name}"]})
        sizes = [p["size_kb"] for p in agent["pools"] if p.get("size_kb") is not None
                 and "COARSE GRAINED" in p.get("segment", "")]
        bad = [kb for kb in sizes if kb == 0 or kb >= PIB_KB]
        if bad and not agent.get("is_apu"):
            out.append({"what": f"Agent {agent['agent']} ({name}) reports a GPU memory pool of {bad[0] * 1024:,} bytes",
                        "lines": [f"Size: {kb}(0x{kb:x}) KB" for kb in bad]})
    return out


def gpu_agents(agents: list[dict]) -> list[dict]:
    """GPU agents only: CPU agents and NPUs (Device Type DSP, e.g. `aie2p`) are not GPUs."""
    return [a for a in agents if a.get("device_type") == "GPU"]
