"""Environment scopes on Windows, pure: the User and Machine variables (registry, raw + type), the process
environment, what a *new* shell would get, and how they disagree."""

from __future__ import annotations

from typing import Mapping, Optional

from rocm_doctor.knowledge import env_catalog
from rocm_doctor.parsers import windows_paths as paths

SETX_LIMIT = 1024
# Variables whose scope problems matter to a GPU/PyTorch setup (prefixes, upper case).
WATCHED_PREFIXES = (
    "HIP_",
    "HSA_",
    "ROCM",
    "ROCR_",
    "MIOPEN_",
    "ROCBLAS_",
    "HIPBLASLT_",
    "AMD_",
    "PYTORCH_",
    "TORCH_",
)


def watched(name: str) -> bool:
    return name.upper().startswith(WATCHED_PREFIXES) or env_catalog.lookup(name.upper()) is not None


def scope_table(values: Optional[Mapping[str, dict]], *lookups: Mapping[str, str]) -> Optional[dict[str, dict]]:
    """{NAME: {"name", "value", "type", "expanded", "unresolved"}} from recorded registry values."""
    if values is None:
        return None
    table = {}
    for name, item in values.items():
        if not isinstance(item, dict):
            continue
        raw = item.get("value")
        kind = item.get("type")
        text = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
        if kind == "REG_EXPAND_SZ":
            expanded, unresolved = paths.expand(text, *lookups)
        else:
            expanded, unresolved = text, []
        table[name.upper()] = {"name": name, "value": text, "type": kind, "expanded": expanded, "unresolved": unresolved}
    return table


def new_shell_value(name: str, user: Optional[dict], machine: Optional[dict]) -> Optional[str]:
    """What a freshly started process gets for NAME: User overrides Machine, except Path = Machine;User."""
    key = name.upper()
    u = (user or {}).get(key)
    m = (machine or {}).get(key)
    if key == "PATH":
        parts = [x["expanded"] for x in (m, u) if x and x["expanded"]]
        return ";".join(parts) if parts else None
    if u is not None:
        return u["expanded"]
    if m is not None:
        return m["expanded"]
    return None


def conflicts(user: Optional[dict], machine: Optional[dict]) -> list[dict]:
    """Watched variables set in both scopes with different (expanded) values; the User value wins."""
    out = []
    for key in sorted(set(user or {}) & set(machine or {})):
        if key == "PATH" or not watched(key):
            continue
        u, m = user[key], machine[key]
        if _pathlike(key):
            differ = paths.norm(u["expanded"]) != paths.norm(m["expanded"])
        else:
            differ = u["expanded"] != m["expanded"]
        if differ:
            out.append({"name": u["name"], "user": u["expanded"], "machine": m["expanded"], "effective": "user"})
    return out


def _pathlike(key: str) -> bool:
    return key.startswith("HIP_PATH") or key in ("ROCM_PATH", "ROCM_HOME")


def stale(process: Mapping[str, str], user: Optional[dict], machine: Optional[dict]) -> list[dict]:
    """Watched variables (and PATH entries) a new shell would get that this process does not have."""
    out = []
    names = {k for k in set(user or {}) | set(machine or {}) if watched(k)}
    for key in sorted(names):
        expected = new_shell_value(key, user, machine)
        current = paths.ci_get(process, key)
        same = current is not None and (
            paths.norm(current) == paths.norm(expected or "") if _pathlike(key) else current == expected
        )
        if not same:
            scope = "user" if key in (user or {}) else "machine"
            name = ((user or {}).get(key) or (machine or {}).get(key))["name"]
            out.append({"name": name, "registry": expected, "process": current, "scope": scope})
    process_path = {paths.norm(p) for p in paths.split_path_var(paths.ci_get(process, "PATH"))}
    for scope, table in (("machine", machine), ("user", user)):
        item = (table or {}).get("PATH")
        if not item:
            continue
        missing = [
            p for p in paths.split_path_var(item["expanded"]) if not paths.has_vars(p) and paths.norm(p) not in process_path
        ]
        if missing:
            out.append({"name": "Path", "scope": scope, "missing_entries": missing})
    return out
