"""Reads the runtime child's lines (probes/_runtime_child.py) into `runtime.status` (what each GPU runtime answered,
per API) and `process.limits` (rlimits, CPU affinity, cgroup limits of the target's processes). Pure."""

from __future__ import annotations

from rocm_doctor.engine.child import classify, parse_json_lines
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.facts.keys import (OWN_LIMITS_KEY, PROCESS_LIMITS, REQUEST_KEY, RUNTIME_PROBE_KEY, RUNTIME_STATUS,
                                    SYSTEMD_SHOW_KEY)
from rocm_doctor.parsers.systemd_unit import show_properties
from rocm_doctor.parsers.unit_limits import unit_limits

APIS = ("cuda-driver", "cuda-runtime", "hip", "hsa")


def _apis(records: list[dict]) -> dict[str, dict]:
    apis: dict[str, dict] = {}
    for record in records:
        api = record.get("api")
        if api not in APIS:
            continue
        entry = apis.setdefault(api, {"loaded": None, "path": None, "tried": [], "calls": [], "pending": None})
        step = record.get("step")
        if step == "library":
            entry["loaded"] = bool(record.get("loaded"))
            entry["path"] = record.get("path")
            entry["tried"] = [str(t) for t in record.get("tried") or []]
        elif step == "calling":
            entry["pending"] = record.get("call")
        elif step == "returned":
            entry["pending"] = None
            entry["calls"].append({key: record.get(key) for key in ("call", "code", "name", "text", "value")})
        elif step == "agents":
            entry["agents"] = [a for a in record.get("agents") or [] if isinstance(a, dict)]
        elif step == "error":
            entry["error"] = record.get("error")
    return apis


def _int_pair(value):
    if isinstance(value, list) and len(value) == 2 and all(v is None or isinstance(v, int) for v in value):
        return value
    return None


def _limits(record: dict, read_in: str) -> dict:
    out = {"rlimits": {}, "cpu_count": record.get("cpu_count"), "read_in": read_in}
    for key, value in record.items():
        pair = _int_pair(value)
        if key.startswith("RLIMIT_") and pair is not None:
            out["rlimits"][key] = {"soft": pair[0], "hard": pair[1]}
    affinity = record.get("affinity")
    if isinstance(affinity, list) and all(isinstance(c, int) for c in affinity):
        out["affinity"] = affinity
    cgroup = record.get("cgroup_files")
    out["cgroup"] = {str(k): str(v) for k, v in cgroup.items()} if isinstance(cgroup, dict) else {}
    return out


def interpret(observations: Observations, facts: Facts) -> None:
    result = observations.command(RUNTIME_PROBE_KEY)
    own = observations.probes.get(OWN_LIMITS_KEY)
    if result is None and not isinstance(own, dict):
        for key in (RUNTIME_STATUS, PROCESS_LIMITS):
            facts.set_missing(key, "the runtime probe did not run (an older snapshot, or a platform without it)")
        return
    records = [r for r in parse_json_lines(result.stdout, marker="step") if isinstance(r, dict)] if result else []
    limits = next((r for r in records if r.get("step") == "limits"), None)
    if result is None:
        facts.set_missing(RUNTIME_STATUS, "the runtime probe did not run")
    else:
        state, detail = classify(result, finished=any(r.get("step") == "done" for r in records))
        facts.set(RUNTIME_STATUS, {"state": state, "detail": detail, "apis": _apis(records),
                                     "errors": [r for r in records if r.get("step") == "error"]})
    if limits is not None:
        record, read_in = limits, "the target interpreter"
    elif isinstance(own, dict):  # the target's processes inherit the doctor's limits
        record, read_in = own, "rocm-doctor's own process (the runtime child did not report them)"
    else:
        facts.set_missing(PROCESS_LIMITS, "the runtime probe ended before it read the limits")
        return
    record, read_in = _under_unit(observations, record, read_in)
    facts.set(PROCESS_LIMITS, _limits(record, read_in))


def _under_unit(observations: Observations, record: dict, read_in: str) -> tuple[dict, str]:
    """Under --unit the service runs under its unit's limits (LimitNOFILE=, TasksMax=, CPUAffinity=...), not the
    shell's: what the unit sets replaces what the child inherited."""
    request = observations.probes.get(REQUEST_KEY) or {}
    show = observations.command(SYSTEMD_SHOW_KEY)
    if request.get("kind") != "systemd" or show is None or show.returncode != 0:
        return record, read_in
    unit = unit_limits(show_properties(show.stdout))
    if not unit:
        return record, read_in
    merged = dict(record, **{k: v for k, v in unit.items() if k != "cgroup_files"})
    merged["cgroup_files"] = dict(record.get("cgroup_files") or {}, **unit.get("cgroup_files", {}))
    return merged, f"the settings of {request.get('name')} (systemctl show), where it sets them; else {read_in}"
