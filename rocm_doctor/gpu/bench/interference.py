"""Whether the measured GPU was shared or slowed while a section ran, from the live state sampled before the run, at
the start and end of each section, and after it (session.py). Pure.

What counts, each said with what was seen: another process on the GPU that was computing (the GPU busy before the
benchmark's child started, or the process appearing only once the run was under way); a GPU busy before the run with
no process listed (another container or PID namespace); throttling by heat or power protection; clocks held by the
applications-clocks setting; a power limit below its default that the GPU was running into. A process that only held
memory on an idle GPU is noted, not counted.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from rocm_doctor.gpu.bench.lines import device_of
from rocm_doctor.interpret.live_sample import read
from rocm_doctor.knowledge.env_catalog import visibility_variables

BUSY_PCT = 10
SLOWDOWNS = {"hw_slowdown": "hardware slowdown", "hw_thermal_slowdown": "hardware thermal slowdown",
             "sw_thermal_slowdown": "software thermal slowdown", "hw_power_brake_slowdown": "power brake",
             "throttled": "throttling (amd-smi)"}
_BDF = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.")


def _bus(bdf) -> Optional[tuple[int, int, int]]:
    found = _BDF.search(str(bdf or ""))
    return tuple(int(part, 16) for part in found.groups()) if found else None


def measured_gpu(state: dict, device: dict, env: dict) -> Optional[dict]:
    """The sampled GPU the benchmark ran on: by PCI address, else the only one, else by index when no visibility
    variable renumbers the GPUs."""
    gpus = [g for g in state.get("gpus") or [] if isinstance(g, dict)]
    wanted = (device.get("pci_domain_id"), device.get("pci_bus_id"), device.get("pci_device_id"))
    if None not in wanted:
        for gpu in gpus:
            if _bus(gpu.get("bdf")) == wanted:
                return gpu
    if len(gpus) == 1:
        return gpus[0]
    if not any(name in env for name in visibility_variables()):
        return next((g for g in gpus if g.get("index") == (device.get("index") or 0)), None)
    return None


def _label(gpu: dict) -> str:
    return f"GPU {gpu.get('index')} ({gpu.get('name') or gpu.get('vendor')})"


def _who(process: dict) -> str:
    memory = process.get("memory_mib")
    held = f", {memory:.0f} MiB" if isinstance(memory, (int, float)) else ""
    return f"pid {process.get('pid')} ({process.get('name') or 'name not visible from here'}{held})"


class _Reading:
    def __init__(self, results: dict[str, Any]) -> None:
        self.device = device_of(results)
        self.env = results.get("env") or {}
        self.states = []
        self.why = ""
        for sample in (results.get("live") or {}).get("samples") or []:
            state, why = read(sample)
            gpu = measured_gpu(state, self.device, self.env) if state else None
            if gpu is None:
                self.why = self.why or why or "the sampled GPUs could not be matched to the one measured"
                continue
            others = [p for p in state.get("processes") or []
                      if not p.get("own") and p.get("vendor") == gpu.get("vendor") and p.get("gpu") == gpu.get("index")]
            self.states.append((sample.get("marks") or [], gpu, others))
        before = [s for s in self.states if "before" in s[0]]
        self.before = before[0] if before else None

    def busy_before(self) -> float:
        return (self.before[1].get("utilization_pct") or 0) if self.before else 0

    def reasons(self, marks: set[str]) -> tuple[list[str], list[str]]:
        reasons, notes = [], []
        known = {p.get("pid") for p in self.before[2]} if self.before else set()
        for taken, gpu, others in (s for s in self.states if marks & set(s[0])):
            when = next(m for m in taken if m in marks).rsplit(".", 1)[-1]
            for process in others:
                if self.busy_before() >= BUSY_PCT:
                    why = f"which was {self.busy_before():.0f}% busy before the benchmark started"
                elif self.before and process.get("pid") not in known:
                    why = "having started on it after the benchmark began"
                else:
                    notes.append(f"{_who(process)} held memory on {_label(gpu)}, idle before the benchmark started")
                    continue
                reasons.append(f"{_who(process)} was on {_label(gpu)}, {why}")
            slow = [SLOWDOWNS[r] for r in gpu.get("throttle_reasons") or [] if r in SLOWDOWNS]
            if slow:
                reasons.append(f"{_label(gpu)} was slowed down at the {when}: {', '.join(slow)}")
            if "applications_clocks_setting" in (gpu.get("throttle_reasons") or []):
                reasons.append(f"{_label(gpu)}'s clocks were held by the applications-clocks setting "
                               f"(SM {gpu.get('sm_clock_mhz')} of {gpu.get('sm_clock_max_mhz')} MHz)")
            limit, default = gpu.get("power_limit_w"), gpu.get("power_default_w")
            if limit and default and limit < default - 1 and "sw_power_cap" in (gpu.get("throttle_reasons") or []):
                reasons.append(f"{_label(gpu)} ran into its power limit of {limit:.0f} W, below its default "
                               f"{default:.0f} W")
        return list(dict.fromkeys(reasons)), list(dict.fromkeys(notes))


def judge(results: dict[str, Any]) -> dict[str, Any]:
    """{"sampled", "why" (when nothing could be judged), "samples", "seconds", "run": {reasons, notes} for the whole
    run, "sections": {name: {reasons, notes}}}; a reason makes the section's figures unreliable."""
    live = results.get("live") or {}
    out: dict[str, Any] = {"sampled": False, "samples": len(live.get("samples") or []),
                           "seconds": live.get("seconds"), "run": {"reasons": [], "notes": []}, "sections": {}}
    if device_of(results).get("type") != "cuda":
        return dict(out, why="measured on the CPU device: the GPU state does not bear on these figures")
    if not live.get("samples"):
        return dict(out, why=live.get("reason") or "the live GPU state was not sampled in this run")
    reading = _Reading(results)
    if not reading.states:
        return dict(out, why=f"the live GPU state could not be read: {reading.why}")
    out["sampled"] = True
    if reading.before and reading.busy_before() >= BUSY_PCT and not reading.before[2] and \
            reading.before[1].get("processes_listed"):
        out["run"]["reasons"].append(
            f"{_label(reading.before[1])} was {reading.busy_before():.0f}% busy before the benchmark started with no "
            "process listed on it (work in another container or PID namespace)")
    for name in results.get("sections") or {}:
        reasons, notes = reading.reasons({f"{name}.start", f"{name}.end"})
        out["sections"][name] = {"reasons": reasons, "notes": notes}
    return out


def observed(judged: dict[str, Any], section: str) -> str:
    """What the samples showed for a section with nothing against it, for an explanation that has no cause."""
    if not judged.get("sampled"):
        return judged.get("why") or "the live GPU state was not sampled"
    notes = (judged["sections"].get(section) or {}).get("notes") or []
    return ("the GPU state sampled at the start and end of the section showed no other process computing and no "
            "throttling" + (f" ({'; '.join(notes)})" if notes else ""))
