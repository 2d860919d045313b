"""Values older ROCm/HIP releases used (data/legacy_values.json): what a HIP_PLATFORM, HIP_COMPILER or HIP_RUNTIME
value meant then and what today's tools do with it, and the variables no current tool reads, so that a stale value is
read with its own meaning, never today's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from rocm_doctor.knowledge import versions
from rocm_doctor.knowledge.store import load


@dataclass(frozen=True)
class Legacy:
    variable: str
    value: str
    means: Optional[str]  # today's value it stands for (HIP_PLATFORM=hcc → amd); None: none
    then: str
    now: str
    source: str


def _table() -> dict:
    return load("legacy_values.json")


def reading(variable: str, value: str | None) -> Optional[Legacy]:
    """The legacy reading of `variable`=`value` (values compare case-insensitively: ROCclr, HCC), else None when the
    value is a current one or the variable is not in the table."""
    row = _table()["variables"].get(variable)
    if row is None or value is None:
        return None
    text = value.strip()
    if "removed" in row:
        entry = row["removed"]
        return Legacy(variable, text, None, entry["then"], entry["now"], entry["source"])
    if text.lower() in row["current"]:
        return None
    entry = row["values"].get(text.lower())
    if entry is None:
        return None
    return Legacy(variable, text, entry["means"], entry["then"], entry["now"], entry["source"])


def variables() -> list[str]:
    return list(_table()["variables"])


def hcc_era(hip_version: str | None) -> bool:
    """A HIP older than the release that replaced HCC with HIP-Clang (its HCC toolchain was the real one)."""
    parsed = versions.parse(hip_version or "")
    return bool(parsed) and not versions.at_least(parsed, _table()["hcc_removed_from"])
