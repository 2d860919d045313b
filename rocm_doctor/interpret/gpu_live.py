"""gpu.live: what each GPU was doing when the doctor looked, from nvidia-smi, amd-smi, rocm-smi and amdgpu sysfs.

{"gpus": [one dict per GPU], "processes": [every compute process seen], "self_pid", "sources": {tool: how it
went}}. A GPU has vendor, index, uuid, name, source, utilization_pct, memory_used_mib, memory_total_mib, clocks
(current and max, SM and memory), power_w / power_limit_w / power_default_w, temperature_c, throttle_reasons (NVML
names, or ["throttled"] from amd-smi), compute_mode, mig_mode, mig_devices, ecc_uncorrected, pcie (gen and width,
current and max), perf_level (AMD), processes_listed (whether a tool listed its processes). A process has vendor,
gpu (index, None when the tool cannot say which), pid, name, memory_mib, own (the doctor itself or its child, seen
through the recorded /proc/<pid>/status parents) and source. Missing, with the reason per tool, when no tool ran.
"""

from __future__ import annotations

from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (AMD_SMI_METRIC_KEY, AMD_SMI_PROCESS_KEY, CARD_BUSY, CARD_PERF_LEVEL, CARD_UEVENT,
                                    CARD_VRAM_TOTAL, CARD_VRAM_USED, DRM_DIR as DRM, GPU_INVENTORY, GPU_LIVE,
                                    LIVE_SELF_KEY, NVIDIA_SMI_APPS_KEY, NVIDIA_SMI_LIST_KEY, NVIDIA_SMI_QUERY_KEY,
                                    PID_STATUS_FILE, ROCM_SMI_LIVE_KEY)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers import nvidia_smi
from rocm_doctor.parsers.amd_smi_live import parse_metric, parse_process
from rocm_doctor.parsers.live_files import parse_proc_status, parse_uevent, sysfs_int, sysfs_value
from rocm_doctor.parsers.rocm_smi_live import parse_rocm_smi_live

REQUIRES = (GPU_INVENTORY,)  # AMD GPUs take their uuid and name from the inventory
MIB = 2**20


def why_not(result: CommandResult | None, tool: str) -> str | None:
    """Why a command gave nothing usable, in words; None when it ran and exited 0."""
    if result is None:
        return f"{tool} was not run (not recorded in this snapshot)"
    if result.error == "not found":
        return f"{tool} not found on PATH"
    if result.error:
        return f"{tool} could not run: {result.error}"
    if result.timed_out:
        return f"{tool} did not finish within {result.timeout_s:g} s"
    if result.returncode != 0:
        last = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:]
        return f"{tool} exited with code {result.returncode}" + (f": {last[0][:200]}" if last else "")
    return None


def _nvidia(observations: Observations, sources: dict) -> tuple[list[dict], list[dict]]:
    query = observations.command(NVIDIA_SMI_QUERY_KEY)
    reason = why_not(query, "nvidia-smi")
    sources["nvidia-smi"] = reason or "ok"
    if reason:
        return [], []
    parsed = nvidia_smi.parse_gpu_query(query.stdout, nvidia_smi.query_fields(query.argv))
    listed = observations.command(NVIDIA_SMI_LIST_KEY)
    migs = {g["uuid"]: g["mig"] for g in nvidia_smi.parse_list(listed.stdout if listed else "")}
    apps = observations.command(NVIDIA_SMI_APPS_KEY)
    apps_ok = apps is not None and why_not(apps, "nvidia-smi") is None
    gpus, processes = [], []
    for raw in parsed["gpus"]:
        mask = raw.get("clocks_throttle_reasons.active")
        gpus.append({
            "vendor": "nvidia", "index": raw.get("index"), "uuid": raw.get("uuid"), "name": raw.get("name"),
            "source": "nvidia-smi", "utilization_pct": raw.get("utilization.gpu"),
            "memory_used_mib": raw.get("memory.used"), "memory_total_mib": raw.get("memory.total"),
            "sm_clock_mhz": raw.get("clocks.sm"), "sm_clock_max_mhz": raw.get("clocks.max.sm"),
            "mem_clock_mhz": raw.get("clocks.mem"), "mem_clock_max_mhz": raw.get("clocks.max.mem"),
            "power_w": raw.get("power.draw"), "power_limit_w": raw.get("power.limit"),
            "power_default_w": raw.get("power.default_limit"), "temperature_c": raw.get("temperature.gpu"),
            "throttle_reasons": nvidia_smi.reasons(mask) if isinstance(mask, int) else None,
            "persistence": raw.get("persistence_mode"), "compute_mode": raw.get("compute_mode"),
            "mig_mode": raw.get("mig.mode.current"), "mig_devices": migs.get(raw.get("uuid"), []),
            "ecc_uncorrected": raw.get("ecc.errors.uncorrected.volatile.total"),
            "pcie_gen": raw.get("pcie.link.gen.current"), "pcie_gen_max": raw.get("pcie.link.gen.max"),
            "pcie_width": raw.get("pcie.link.width.current"), "pcie_width_max": raw.get("pcie.link.width.max"),
            "perf_level": None, "processes_listed": apps_ok, "bdf": raw.get("pci.bus_id"),
        })
    by_uuid = {g["uuid"]: g["index"] for g in gpus if g["uuid"]}
    for app in nvidia_smi.parse_compute_apps(apps.stdout)["processes"] if apps_ok else []:
        processes.append({"vendor": "nvidia", "gpu": by_uuid.get(app["gpu_uuid"]), "gpu_uuid": app["gpu_uuid"],
                          "pid": app["pid"], "name": app["name"], "memory_mib": app["used_mib"],
                          "source": "nvidia-smi"})
    if parsed["errors"]:
        sources["nvidia-smi"] = "; ".join(parsed["errors"])
    return gpus, processes


def _amd_gpu(index: int, inventory: dict) -> dict:
    return {"vendor": "amd", "index": index, "uuid": inventory.get("uuid"), "name": inventory.get("name"),
            "source": None, "utilization_pct": None, "memory_used_mib": None, "memory_total_mib": None,
            "sm_clock_mhz": None, "sm_clock_max_mhz": None, "mem_clock_mhz": None, "mem_clock_max_mhz": None,
            "power_w": None, "power_limit_w": None, "power_default_w": None, "temperature_c": None,
            "throttle_reasons": None, "persistence": None, "compute_mode": None, "mig_mode": None,
            "mig_devices": [], "ecc_uncorrected": None, "pcie_gen": None, "pcie_gen_max": None, "pcie_width": None,
            "pcie_width_max": None, "perf_level": None, "processes_listed": False, "bdf": inventory.get("bdf")}


def _sysfs_cards(observations: Observations) -> list[dict]:
    cards = []
    for entry in (observations.file(DRM).entries or []) if observations.file(DRM) else []:
        device = f"{DRM}/{entry}/device"
        uevent = observations.file(f"{device}/{CARD_UEVENT}")
        info = parse_uevent(uevent.content if uevent else "")
        if info["driver"] != "amdgpu":
            continue

        def read(name: str, device: str = device):
            record = observations.file(f"{device}/{name}")
            return record.content if record and record.exists else None

        cards.append({"card": entry, "slot": info["slot"], "busy": sysfs_int(read(CARD_BUSY)),
                      "used": sysfs_int(read(CARD_VRAM_USED)), "total": sysfs_int(read(CARD_VRAM_TOTAL)),
                      "perf_level": sysfs_value(read(CARD_PERF_LEVEL))})
    return cards


def _fill(gpu: dict, source: str, values: dict) -> None:
    for key, value in values.items():
        if value is not None and gpu.get(key) is None:
            gpu[key] = value
    gpu["source"] = gpu["source"] or source


def _amd(observations: Observations, facts: Facts, sources: dict) -> tuple[list[dict], list[dict]]:
    metric_result = observations.command(AMD_SMI_METRIC_KEY)
    process_result = observations.command(AMD_SMI_PROCESS_KEY)
    rocm_result = observations.command(ROCM_SMI_LIVE_KEY)
    for key, result in (("amd-smi", metric_result), ("rocm-smi", rocm_result)):
        sources[key] = why_not(result, key) or "ok"
    metric = parse_metric(metric_result.stdout) if metric_result else []
    rocm = parse_rocm_smi_live(rocm_result.stdout) if rocm_result else {"cards": [], "processes": []}
    cards = _sysfs_cards(observations)
    inventory = {g.get("index"): g for g in facts.get(GPU_INVENTORY) or [] if isinstance(g, dict)}
    count = max(len(metric), len(rocm["cards"]), len(cards), len(inventory))
    gpus = [_amd_gpu(i, inventory.get(i, {})) for i in range(count)]
    for m in metric:
        if m["index"] < count:
            total = m["vram_total_mib"]
            _fill(gpus[m["index"]], "amd-smi", {
                "utilization_pct": m["gfx_activity"], "memory_used_mib": m["vram_used_mib"], "memory_total_mib": total,
                "sm_clock_mhz": m["gfx_clock_mhz"], "sm_clock_max_mhz": m["gfx_clock_max_mhz"],
                "mem_clock_mhz": m["mem_clock_mhz"], "mem_clock_max_mhz": m["mem_clock_max_mhz"],
                "power_w": m["power_w"], "temperature_c": m["temperature_c"], "pcie_width": m["pcie_width"],
                "ecc_uncorrected": m["ecc_uncorrectable"], "perf_level": m["perf_level"],
                "throttle_reasons": {"throttled": ["throttled"], "unthrottled": []}.get(m["throttle_status"] or ""),
            })
    for card in rocm["cards"]:
        if card["index"] < count:
            used, total = card["vram_used_bytes"], card["vram_total_bytes"]
            _fill(gpus[card["index"]], "rocm-smi", {
                "utilization_pct": card["gpu_use_pct"], "memory_used_mib": used / MIB if used is not None else None,
                "memory_total_mib": total / MIB if total is not None else None})
    slots = {g.get("bdf"): g for g in gpus if g.get("bdf")}
    for position, card in enumerate(cards):
        gpu = slots.get(card["slot"]) or (gpus[position] if len(cards) == count else None)
        if gpu is not None:
            _fill(gpu, "sysfs", {"utilization_pct": card["busy"], "perf_level": card["perf_level"],
                                 "memory_used_mib": card["used"] / MIB if card["used"] is not None else None,
                                 "memory_total_mib": card["total"] / MIB if card["total"] is not None else None})
    processes = _amd_processes(process_result, rocm, count, sources)
    listed = sources["amd-smi process"] == "ok" or (count == 1 and sources["rocm-smi"] == "ok")
    for gpu in gpus:
        gpu["processes_listed"] = listed
    return [g for g in gpus if g["source"]], processes


def _amd_processes(result: CommandResult | None, rocm: dict, count: int, sources: dict) -> list[dict]:
    reason = why_not(result, "amd-smi")
    sources["amd-smi process"] = reason or "ok"
    if not reason:
        return [{"vendor": "amd", "gpu": p["gpu"], "gpu_uuid": None, "pid": p["pid"], "name": p["name"],
                 "memory_mib": p["vram_mib"] if p["vram_mib"] is not None else p["mem_mib"], "source": "amd-smi"}
                for p in parse_process(result.stdout)]
    return [{"vendor": "amd", "gpu": 0 if count == 1 else None, "gpu_uuid": None, "pid": p["pid"], "name": p["name"],
             "memory_mib": p["vram_bytes"] / MIB if p["vram_bytes"] is not None else None, "source": "rocm-smi"}
            for p in rocm["processes"]]


def _statuses(observations: Observations) -> dict[int, dict]:
    out = {}
    for path, record in observations.files.items():
        parts = path.split("/")
        if len(parts) == 4 and path == PID_STATUS_FILE.format(pid=parts[2]) and record.content:
            status = parse_proc_status(record.content)
            if status["pid"] is not None:
                out[status["pid"]] = status
    return out


def _own(pid: int, self_pid, statuses: dict[int, dict], started: frozenset = frozenset()) -> bool:
    """The doctor itself, a process it started (listed by the doctor, so one that has just ended counts too), or a
    process whose recorded parents lead to either."""
    for _ in range(8):
        if pid == self_pid or pid in started:
            return True
        status = statuses.get(pid)
        if not status or status["ppid"] in (None, 0, pid):
            return False
        pid = status["ppid"]
    return False


def interpret(observations: Observations, facts: Facts) -> None:
    sources: dict[str, str] = {}
    nvidia, nvidia_processes = _nvidia(observations, sources)
    amd, amd_processes = _amd(observations, facts, sources)
    gpus = nvidia + amd
    if not gpus:
        reasons = [v for k, v in sources.items() if v != "ok" and k != "amd-smi process"]
        if reasons and all("not recorded" in r for r in reasons):
            reasons = ["this snapshot holds no live GPU state (nvidia-smi, amd-smi, rocm-smi)"]
        facts.set_missing(GPU_LIVE, "; ".join(reasons) or "no tool reported the live state of a GPU")
        return
    own = observations.probes.get(LIVE_SELF_KEY) or {}
    self_pid = own.get("pid")
    started = frozenset(p for p in own.get("started") or () if isinstance(p, int))
    statuses = _statuses(observations)
    processes = []
    for process in nvidia_processes + amd_processes:
        status = statuses.get(process["pid"]) or {}
        processes.append(dict(process, name=process["name"] or status.get("name"),
                              own=_own(process["pid"], self_pid, statuses, started)))
    facts.set(GPU_LIVE, {"gpus": gpus, "processes": processes, "self_pid": self_pid, "sources": sources})
