"""windows.env.* and windows.path facts: the User / Machine / process environment scopes and the PATH folders."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import MACHINE_ENV_KEY, USER_ENV_KEY, WINDOWS_ENV_SCOPES, WINDOWS_PATH
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.knowledge.windows_scopes import scope_table
from rocm_doctor.windows.observed import Seen

KEYS = (WINDOWS_ENV_SCOPES, WINDOWS_PATH)


def is_windows(observations: Observations) -> bool:
    return observations.platform.get("os") == "windows"


def not_windows(observations: Observations, facts: Facts, keys) -> bool:
    if is_windows(observations):
        return False
    for key in keys:
        facts.set_missing(key, f"not applicable on {observations.platform.get('os', 'linux')}")
    return True


def interpret(observations: Observations, facts: Facts) -> None:
    if not_windows(observations, facts, KEYS):
        return
    seen = Seen(observations)
    process = dict(observations.env)
    machine_raw = seen.reg_values(*MACHINE_ENV_KEY)
    user_raw = seen.reg_values(*USER_ENV_KEY)
    if machine_raw is None and user_raw is None:
        facts.set_missing(WINDOWS_ENV_SCOPES, "the registry environment was not read (windows_env probe did not run)")
    machine_plain = {k: str((v or {}).get("value", "")) for k, v in (machine_raw or {}).items()}
    user_plain = {k: str((v or {}).get("value", "")) for k, v in (user_raw or {}).items()}
    machine = scope_table(machine_raw, process, machine_plain)
    user = scope_table(user_raw, process, machine_plain, user_plain)
    if machine is not None or user is not None:
        facts.set(
            WINDOWS_ENV_SCOPES,
            {
                "process": {k.upper(): v for k, v in process.items()},
                "user": user,
                "machine": machine,
                "user_error": (seen.reg_key(*USER_ENV_KEY) or {}).get("error"),
                "machine_error": (seen.reg_key(*MACHINE_ENV_KEY) or {}).get("error"),
            },
        )
    facts.set(WINDOWS_PATH, path_fact(seen, process, user, machine))


def path_fact(seen: Seen, process: dict, user, machine) -> dict:
    scopes = {}
    process_raw = paths.ci_get(process, "PATH") or ""
    scopes["process"] = {"raw": process_raw, "length": len(process_raw), "type": None,
                         "entries": paths.split_path_var(process_raw)}
    for name, table in (("user", user), ("machine", machine)):
        item = (table or {}).get("PATH")
        if item is None:
            scopes[name] = None if table is None else {"raw": "", "length": 0, "type": None, "entries": []}
            continue
        scopes[name] = {
            "raw": item["value"],
            "length": len(item["value"]),
            "type": item["type"],
            "entries": paths.split_path_var(item["expanded"]),
            "raw_entries": paths.split_path_var(item["value"]),
            "unresolved": item["unresolved"],
        }
    folders: dict[str, dict] = {}
    for scope in ("process", "machine", "user"):
        if not scopes.get(scope):
            continue
        for position, entry in enumerate(scopes[scope]["entries"]):
            key = paths.norm(entry)
            folder = folders.setdefault(key, {"path": entry, "scopes": [], "positions": {}, "exists": None, "matches": []})
            if scope not in folder["scopes"]:
                folder["scopes"].append(scope)
                folder["positions"][scope] = position
            if paths.has_vars(entry):
                folder["unexpanded"] = True
                continue
            scan = seen.scan(entry)
            if scan is not None:
                folder["exists"] = bool(scan["exists"])
                folder["matches"] = list(scan["matches"])
                folder["error"] = scan.get("error")
    return {"scopes": scopes, "folders": list(folders.values())}
