"""MIOpen, AMD's convolution library: the MIOPEN_FIND_MODE grammar, the lines it logs (MIOPEN_LOG_LEVEL=5 and up,
MIOPEN_ENABLE_LOGGING=1) and the records of its find database. Pure: text in, data out.

The find mode decides what the first convolution of a new shape costs: MIOpen looks the problem up in its find
database and, on a miss, searches (benchmarks solvers, compiling their kernels) or falls back without searching.
The grammar follows MIOpen's find_controls.cpp: a name (any case) or its number; empty means the default.
"""

from __future__ import annotations

import re
from typing import Any, Optional

FIND_MODES = {1: "NORMAL", 2: "FAST", 3: "HYBRID", 4: "FAST_HYBRID", 5: "DYNAMIC_HYBRID", 6: "TRUST_VERIFY",
              7: "TRUST_VERIFY_FULL"}
DEFAULT_FIND_MODE = 5
ON_MISS = {
    "NORMAL": "every new problem is searched over all solvers (the find database only caches the results)",
    "FAST": "a problem missing from the find database takes the immediate-mode fallback: no search, and possibly "
            "a slower kernel",
    "HYBRID": "a problem missing from the find database is searched over all solvers",
    "FAST_HYBRID": "a deprecated mode number (MIOpen logs it as <Unknown>)",
    "DYNAMIC_HYBRID": "a problem missing from the find database is searched over the solvers whose kernels need no "
                      "compile for the shape",
    "TRUST_VERIFY": "a hybrid search that takes the user database as ground truth (MIOpen 3.5 and newer)",
    "TRUST_VERIFY_FULL": "TRUST_VERIFY with an exhaustive search on a miss (MIOpen 3.5 and newer)",
}
DIRECTIONS = {"F": "fwd", "B": "bwd-data", "W": "bwd-weights", "FW": "fwd", "BWD": "bwd-data", "BW": "bwd-data",
              "BWW": "bwd-weights", "WRW": "bwd-weights"}
NETWORKED = re.compile(r"NFS|SMB|CIFS|9P|FUSE", re.I)
NAIVE = re.compile(r"naive", re.I)

_LINE = re.compile(r"^\s*(?:INFO - )?MIOpen(?:\((?:HIP|OpenCL)\))?\s*(?:[\d.]+:)?:?\s*"
                   r"(?P<level>Info2|Info|Warning|Error|Command|Trace|Fatal)\s*\[(?P<func>[^\]]*)\]\s?(?P<msg>.*)$")
_MODE = re.compile(r"MIOPEN_FIND_MODE\s*=\s*(?P<name>[<>\w]+)\((?P<number>\d+)\)")
_VERSION = re.compile(r"MIOpen version (?P<miopen>\d[\w.]*?)\.?(?:\s|$)")
_HIP_VERSION = re.compile(r"HIP version (?P<hip>[\d.]+\d)")
_CHOSEN = re.compile(r"(?P<dir>FW|BWD|BWW|WRW|BW) Chosen Algorithm:\s*(?P<solver>\S+)\s*,\s*(?P<ws>\d+)\s*,\s*"
                     r"(?P<time>[\d.eE+-]+)")
_SELECTED = re.compile(r"Selected:\s*(?P<solver>[^:\s]+):\s*(?P<kernel>[^:]+?):\s*(?P<time>[\d.eE+-]+)")
_FOUND = re.compile(r"Solver (?P<solver>\S+) registered as find 1\.0 best for (?P<algo>\S+)")
_EXECUTED = re.compile(r'Problem="(?P<problem>[^"]*)" Solver="(?P<solver>[^"]+)"(?:.*Time=(?P<time>[\d.eE+-]+))?')
_APPLICABLE = re.compile(r"^(?P<solver>[^\s:]+): Success\.")
_KERNEL = re.compile(r"kernel_name = (?P<kernel>[\w.]+)|Preparing kernel: (?P<prepared>[\w.]+)")
_INSERTED = re.compile(r"(?P<key>[\w.x-]+), content inserted: (?P<value>\S+)")
_QUOTED_PATH = re.compile(r'"(?P<path>[^"]+)"|(?:file|unreadable:)\s+(?P<bare>/\S+)')
_FILESYSTEM = re.compile(r"Filesystem type at '\"?(?P<path>[^'\"]+)\"?' is: (?P<magic>\S+) '(?P<name>[^']*)'")
_DB_FILE = re.compile(r"db(\.txt)?$")
_ERRORS = re.compile(r"terminate called|what\(\):|MIOpen Error|Internal error|No suitable algorithm|"
                     r"filesystem_error|miopenStatus\w+Error", re.I)


def find_mode(value: Optional[str]) -> dict[str, Any]:
    """What MIOpen makes of a MIOPEN_FIND_MODE value: the mode, its number, whether it was set and valid."""
    raw = (value or "").strip()
    out: dict[str, Any] = {"raw": value, "set": bool(raw), "valid": True}
    number: Optional[int] = None
    if not raw:
        number = DEFAULT_FIND_MODE
    elif raw.upper() in FIND_MODES.values() and raw.upper() != "FAST_HYBRID":
        number = next(n for n, name in FIND_MODES.items() if name == raw.upper())
    elif raw.isdigit() and int(raw) in FIND_MODES:
        number = int(raw)
    else:
        out.update(valid=False, note="not a mode name or number MIOpen accepts; MIOpen rejects it and keeps its "
                                     "default")
        number = DEFAULT_FIND_MODE
    mode = FIND_MODES[number]
    out.update(mode=mode, number=number, default=number == DEFAULT_FIND_MODE, on_miss=ON_MISS[mode])
    return out


def find_db_record(value: str) -> list[dict[str, Any]]:
    """The solutions of one find-database record, fastest first.

    'Solver:time,workspace,algorithm;...' (MIOpen 2 and newer) or the older
    'algorithm:solver,time,workspace,...;...'; times are milliseconds.
    """
    entries = []
    for part in value.strip().split(";"):
        name, _, rest = part.partition(":")
        fields = rest.split(",")
        try:
            if name.startswith("miopenConvolution"):
                algorithm, solver, time_ms, workspace = name, fields[0], float(fields[1]), int(fields[2])
            else:
                solver, time_ms, workspace = name, float(fields[0]), int(fields[1])
                algorithm = fields[2] if len(fields) > 2 else None
        except (IndexError, ValueError):
            continue
        entries.append({"solver": solver, "time_ms": time_ms, "workspace": workspace, "algorithm": algorithm,
                        "naive": bool(NAIVE.search(solver))})
    return sorted(entries, key=lambda e: e["time_ms"])


def problem_of(key: str) -> dict[str, Any]:
    """The dtype and direction a find-database key ends with ('...-NCHW-FP16-F')."""
    parts = key.split("-")
    dtype = next((p for p in reversed(parts) if re.fullmatch(r"FP\d+|BF16|BFP16|INT8\w*", p)), None)
    return {"key": key, "dtype": dtype, "direction": DIRECTIONS.get(parts[-1]) if parts else None}


def _record(records: dict[str, dict[str, Any]], key: str, solutions: list[dict[str, Any]]) -> None:
    """Add the solutions of one problem to `records`; a problem logged several times keeps them all."""
    if not solutions:
        return
    merged = sorted(((records.get(key) or {}).get("solutions") or []) + solutions, key=lambda e: e["time_ms"])
    records[key] = dict(problem_of(key), solutions=merged, best=merged[0]["solver"])


def parse_find_db(text: str) -> dict[str, dict[str, Any]]:
    """A user find database (*.ufdb.txt): key -> {dtype, direction, solutions (fastest first), best}."""
    out: dict[str, dict[str, Any]] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key:
            _record(out, key, find_db_record(value))
    return out


def _path(msg: str) -> Optional[str]:
    match = _QUOTED_PATH.search(msg)
    return (match.group("path") or match.group("bare")) if match else None


def _add(items: list, value: Any) -> None:
    if value and value not in items:
        items.append(value)


def parse_log(text: str) -> dict[str, Any]:
    """What a MIOpen log says: the find mode in effect, versions, devices, the solvers chosen and those a search
    found applicable (and whether a naive fallback is among them), the kernels run, what happened in the find and
    perf databases, and errors."""
    out: dict[str, Any] = {"miopen_lines": 0, "find_mode": None, "miopen_version": None, "hip_version": None,
                           "devices": [], "problems": [], "chosen": [], "applicable": [], "kernels": [], "naive": [],
                           "records": {},
                           "db": {"files": [], "unreadable": [], "regenerating": 0, "stored": 0, "perf_db_misses": 0,
                                  "filesystems": [], "networked": [], "system_db_missing": []},
                           "errors": [], "warnings": []}
    db = out["db"]
    for line in (text or "").splitlines():
        match = _LINE.match(line)
        if not match:
            if _ERRORS.search(line):
                _add(out["errors"], line.strip())
                path = _path(line)
                if path and _DB_FILE.search(path):
                    _add(db["files"], path)
            continue
        out["miopen_lines"] += 1
        level, func, msg = match.group("level"), match.group("func"), match.group("msg").strip()
        if level == "Error" or _ERRORS.search(msg):
            _add(out["errors"], msg)
        elif level == "Warning":
            _add(out["warnings"], msg)
        if m := _MODE.search(msg):
            number = int(m.group("number"))
            out["find_mode"] = {"mode": FIND_MODES.get(number, m.group("name")), "number": number}
        if m := _VERSION.search(msg):
            out["miopen_version"] = m.group("miopen")
        if m := _HIP_VERSION.search(msg):
            out["hip_version"] = m.group("hip")
        if func == "get_device_name" and "Raw device name:" in msg:
            _add(out["devices"], msg.split("Raw device name:", 1)[1].strip())
        if level == "Command" and func.startswith("LogCmd"):
            _add(out["problems"], msg)
        _chosen(out, func, msg)
        if func == "SearchForAllSolutions" and (m := _APPLICABLE.match(msg)):
            _add(out["applicable"], m.group("solver"))
        if m := _KERNEL.search(msg):
            kernel = m.group("kernel") or m.group("prepared")
            _add(out["kernels"], kernel)
            if NAIVE.search(kernel):
                _add(out["naive"], kernel)
        if m := _INSERTED.search(msg):
            _record(out["records"], m.group("key"), find_db_record(m.group("value")))
        _database(db, msg)
    out["only_naive"] = bool(out["applicable"]) and all(NAIVE.search(s) for s in out["applicable"])
    if out["only_naive"]:
        for solver in out["applicable"]:
            _add(out["naive"], solver)
    return out


def _chosen(out: dict[str, Any], func: str, msg: str) -> None:
    """A solver MIOpen picked, from whichever line this version logs it in."""
    pick = None
    if m := _CHOSEN.search(msg):
        pick = {"solver": m.group("solver"), "direction": DIRECTIONS.get(m.group("dir")), "time_ms": float(m.group("time")),
                "via": "find"}
    elif m := _SELECTED.search(msg):
        pick = {"solver": m.group("solver"), "kernel": m.group("kernel").strip(), "time_ms": float(m.group("time")),
                "via": "find"}
    elif m := _FOUND.search(msg):
        pick = {"solver": m.group("solver"), "algorithm": m.group("algo"), "via": "find"}
    elif m := _EXECUTED.search(msg):
        pick = {"solver": m.group("solver"), "problem": m.group("problem"), "via": "executed",
                "time_ms": float(m.group("time")) if m.group("time") else None}
    elif "solver_id = " in msg:
        pick = {"solver": msg.split("solver_id = ", 1)[1].split()[0], "via": "compiled"}
    if pick is None:
        return
    pick["direction"] = (pick.get("direction") or direction_of(pick.get("algorithm") or pick["solver"])
                         or direction_of(func))
    same = [p for p in out["chosen"] if p["solver"] == pick["solver"] and p["direction"] == pick["direction"]]
    if same:
        for key, value in pick.items():
            same[0].setdefault(key, value)
    else:
        out["chosen"].append(pick)
    if NAIVE.search(pick["solver"]):
        _add(out["naive"], pick["solver"])


def direction_of(name: str) -> Optional[str]:
    """fwd, bwd-data or bwd-weights from a solver or algorithm name (ConvDirectNaiveConvWrw,
    miopenConvolutionBwdDataAlgoGEMM), None when the name does not say."""
    if re.search(r"Wrw|BwdWeights|WrW", name):
        return "bwd-weights"
    if re.search(r"Bwd|Backward", name):
        return "bwd-data"
    if re.search(r"Fwd|Forward", name):
        return "fwd"
    return None


def _database(db: dict[str, Any], msg: str) -> None:
    if "Find-db regenerating" in msg:
        db["regenerating"] += 1
    if "Perf Db: record not found" in msg:
        db["perf_db_misses"] += 1
    if "Storing record" in msg:
        db["stored"] += 1
    if "File is unreadable" in msg:
        _add(db["unreadable"], _path(msg))
    if "Looking for key" in msg or "Trying to store record" in msg:
        _add(db["files"], _path(msg))
    if m := _FILESYSTEM.search(msg):
        entry = {"path": m.group("path"), "magic": m.group("magic"), "name": m.group("name")}
        if entry not in db["filesystems"]:
            db["filesystems"].append(entry)
        if NETWORKED.search(entry["name"]):
            _add(db["networked"], entry["path"])
    if "system database file" in msg:
        _add(db["system_db_missing"], msg.split("file:", 1)[-1].split(" Performance")[0].strip())
