"""Shared reading of gpu.live for the gpu-state checks (no checks here): the GPUs, the processes on each, and the
words that name them in findings."""

from __future__ import annotations
from rocm_doctor.facts.keys import GPU_LIVE, GPU_PCI, KFD_NODES, ROCMINFO_AGENTS, SMI_DEVICES


def live(facts) -> dict:
    value = facts.get(GPU_LIVE)
    return value if isinstance(value, dict) else {}


def gpus(facts) -> list[dict]:
    return [g for g in live(facts).get("gpus") or [] if isinstance(g, dict)]


def label(gpu: dict) -> str:
    name = gpu.get("name") or ("NVIDIA GPU" if gpu.get("vendor") == "nvidia" else "AMD GPU")
    return f"GPU {gpu.get('index')} ({name})"


def subject(facts, gpu: dict) -> str:
    """The GPU index; with GPUs of both vendors, the vendor too (both number theirs from 0)."""
    vendors = {g.get("vendor") for g in gpus(facts)}
    return str(gpu.get("index")) if len(vendors) < 2 else f"{gpu.get('vendor')}{gpu.get('index')}"


def processes(facts, gpu: dict) -> list[dict]:
    """The processes a tool placed on this GPU."""
    return [p for p in live(facts).get("processes") or []
            if p.get("vendor") == gpu.get("vendor") and p.get("gpu") == gpu.get("index")]


def others(facts, gpu: dict) -> list[dict]:
    return [p for p in processes(facts, gpu) if not p.get("own")]


def who(process: dict) -> str:
    name = process.get("name") or "name not visible from here: another container or PID namespace"
    return f"pid {process.get('pid')} ({name})"


def mib(value) -> str:
    if value is None:
        return "an unknown amount"
    return f"{value:.0f} MiB" + (f" ({value / 1024:.1f} GiB)" if value >= 1024 else "")


def pct(part, whole) -> float | None:
    return 100.0 * part / whole if isinstance(part, (int, float)) and whole else None


def state_line(gpu: dict) -> str:
    """What the GPU was doing: utilization, memory, SM clock, power, temperature (what the tool gave)."""
    bits = []
    if gpu.get("utilization_pct") is not None:
        bits.append(f"{gpu['utilization_pct']:.0f}% busy")
    if gpu.get("memory_used_mib") is not None and gpu.get("memory_total_mib"):
        bits.append(f"{gpu['memory_used_mib']:.0f} of {gpu['memory_total_mib']:.0f} MiB in use")
    if gpu.get("sm_clock_mhz") is not None:
        top = f" of {gpu['sm_clock_max_mhz']:.0f}" if gpu.get("sm_clock_max_mhz") else ""
        bits.append(f"clock {gpu['sm_clock_mhz']:.0f}{top} MHz")
    if gpu.get("power_w") is not None:
        cap = f" of {gpu['power_limit_w']:.0f} W limit" if gpu.get("power_limit_w") else ""
        bits.append(f"{gpu['power_w']:.0f} W{cap}")
    if gpu.get("temperature_c") is not None:
        bits.append(f"{gpu['temperature_c']:.0f} °C")
    return f"{label(gpu)}: " + (", ".join(bits) or "no figures reported") + f" ({gpu.get('source')})"


def busy(gpu: dict) -> bool:
    """Work was running: not reported idle by the driver, and some utilization."""
    if "gpu_idle" in (gpu.get("throttle_reasons") or []):
        return False
    return (gpu.get("utilization_pct") or 0) > 0


def counts(facts) -> dict[str, int]:
    """How many GPUs each source lists: the SMI tools, KFD, rocminfo and PCI (torch is left out: the visibility
    variables change what it sees)."""
    found = {}
    live_gpus = gpus(facts)
    for vendor, tool in (("nvidia", "nvidia-smi"), ("amd", "amd-smi/rocm-smi")):
        listed = [g for g in live_gpus if g.get("vendor") == vendor]
        if listed:
            found[tool] = len(listed)
    sources = {
        "KFD": [n for n in facts.get(KFD_NODES) or [] if isinstance(n, dict) and n.get("kind") == "gpu"],
        "amd-smi/rocm-smi": facts.get(SMI_DEVICES) or [],
        "rocminfo": [a for a in facts.get(ROCMINFO_AGENTS) or [] if isinstance(a, dict)
                     and a.get("device_type") == "GPU"],
        "PCI": [d for d in facts.get(GPU_PCI) or [] if isinstance(d, dict) and d.get("vendor") in ("amd", "nvidia")],
    }
    for source, items in sources.items():
        if items:
            found[source] = max(found.get(source, 0), len(items))
    return found


def known_gpus(facts) -> list[str]:
    """One line per GPU the sources agree exists, as many as the source listing the most; the SMI tools' names and
    UUIDs where they listed that many."""
    total = max(counts(facts).values(), default=0)
    named = [f"{label(g)}" + (f" {g['uuid']}" if g.get("uuid") else "") for g in gpus(facts)]
    return named if len(named) == total else [f"GPU {i}" for i in range(total)]


def seen_by(facts) -> str:
    return ", ".join(f"{source} {n}" for source, n in counts(facts).items()) or "no source listed a GPU"
