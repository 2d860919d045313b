"""Pure accessors over recorded Windows observations (registry, folder scans, file records), shared by the
Windows interpreters. Everything is looked up case-insensitively, as on Windows."""

from __future__ import annotations

from typing import Any, Optional

from rocm_doctor.facts.keys import DIR_SCAN_PREFIX, REGISTRY_PREFIX
from rocm_doctor.facts.observations import FileRecord, Observations
from rocm_doctor.parsers import windows_paths as paths


class Seen:
    """What the Windows probes recorded, indexed for lookups."""

    def __init__(self, observations: Observations) -> None:
        self.observations = observations
        self.registry: dict[str, dict] = {}
        self.scans: dict[str, dict] = {}
        for key, value in observations.probes.items():
            if key.startswith(REGISTRY_PREFIX) and isinstance(value, dict):
                for reg_key, entry in value.items():
                    if not isinstance(entry, dict):
                        continue
                    merged = self.registry.setdefault(reg_key.lower(), {})
                    for field, item in entry.items():
                        if field == "values" and isinstance(item, dict):
                            merged.setdefault("values", {}).update(item)
                        elif field == "complete":
                            merged["complete"] = bool(merged.get("complete")) or bool(item)
                        else:
                            merged.setdefault(field, item)
            elif key.startswith(DIR_SCAN_PREFIX) and isinstance(value, dict):
                for folder, item in (value.get("dirs") or {}).items():
                    if not isinstance(item, dict):
                        continue
                    merged = self.scans.setdefault(paths.norm(folder), {"path": folder, "matches": []})
                    merged["exists"] = bool(merged.get("exists")) or bool(item.get("exists"))
                    if item.get("error"):
                        merged.setdefault("error", item["error"])
                    for name in item.get("matches") or []:
                        if name not in merged["matches"]:
                            merged["matches"].append(name)
        self.files: dict[str, FileRecord] = {paths.norm(p): r for p, r in observations.files.items()}

    # Registry ---------------------------------------------------------------------------------------------------
    def reg_key(self, hive: str, key: str) -> Optional[dict]:
        return self.registry.get(f"{hive}\\{key}".lower())

    def reg_values(self, hive: str, key: str) -> Optional[dict[str, dict]]:
        """{name: {"value", "type"}} when the key was read, else None."""
        entry = self.reg_key(hive, key)
        if entry is None or "values" not in entry and "error" not in entry:
            return None
        return {k: v for k, v in (entry.get("values") or {}).items() if isinstance(v, dict)}

    def reg_value(self, hive: str, key: str, name: str) -> Any:
        values = self.reg_values(hive, key) or {}
        for existing, item in values.items():
            if existing.lower() == name.lower():
                return item.get("value")
        return None

    # Files ------------------------------------------------------------------------------------------------------
    def file(self, path: str) -> Optional[FileRecord]:
        return self.files.get(paths.norm(path))

    def exists(self, path: str) -> Optional[bool]:
        """True/False when the path was looked at (file record or a scan of it or its parent), None if never."""
        record = self.file(path)
        if record is not None:
            return record.exists
        scan = self.scans.get(paths.norm(path))
        if scan is not None:
            return scan["exists"]
        parent = self.file(paths.dirname(path))
        if parent is not None and parent.entries is not None:
            return paths.basename(path).lower() in {e.lower() for e in parent.entries}
        return None

    def entries(self, path: str) -> Optional[list[str]]:
        record = self.file(path)
        return list(record.entries) if record is not None and record.entries is not None else None

    def scan(self, path: str) -> Optional[dict]:
        return self.scans.get(paths.norm(path))
