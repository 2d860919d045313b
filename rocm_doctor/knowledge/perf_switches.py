"""The environment switches that change speed (data/perf_switches.json): which of them an environment sets to a
value that matters for the build being measured, and what each moves, with its source."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Mapping

from rocm_doctor.knowledge.store import load

FALSY = {"", "0", "false", "off", "no", "none"}
# A switch slows a figure when the figure is at least this many times better without it; smaller differences are not
# told from run-to-run variation measured on H200s (docs/measurements.md). Matmul and the rest: the same bf16 product
# varied about 12% between runs minutes apart. Device memory (section "memory"): copy and read bandwidth 4,120-4,232
# GB/s across three hosts, read 4,124 against 4,120 GB/s on one host minutes apart (2026-12-02), so 10% is told apart.
SLOWS_AT = 1.2
SLOWS_AT_BY_SECTION = {"memory": 1.1}
VENDORS = ("amd", "nvidia", "any")
SIDES = ("gpu", "cpu")


def slows_at(key: str) -> float:
    """How many times better a figure (by its line key, e.g. "memory.read") must be without a switch to say the
    switch slows it."""
    return SLOWS_AT_BY_SECTION.get(key.split(".", 1)[0], SLOWS_AT)


@dataclass(frozen=True)
class Switch:
    """One variable set in the environment, with the table row that says what it does."""

    variable: str
    value: str
    pattern: str  # the row's variable: a name, or a family ending in '*'
    vendor: str
    side: str
    changes: str
    sections: tuple[str, ...]
    figures: tuple[str, ...]
    source: str
    url: str
    read: str

    def describe(self) -> str:
        return f"{self.variable}={self.value}"

    def to_dict(self) -> dict:
        return {"variable": self.variable, "value": self.value, "pattern": self.pattern, "vendor": self.vendor,
                "side": self.side, "changes": self.changes, "sections": list(self.sections),
                "figures": list(self.figures), "source": self.source, "url": self.url, "read": self.read}


def table() -> dict:
    return load("perf_switches.json")


def matters(values, value: str) -> bool:
    """Whether `value` is one the row's `values` name: exact (case-insensitive), '*' any, 'nonzero' any but off."""
    text = (value or "").strip().lower()
    for wanted in values:
        if wanted == "*" or (wanted == "nonzero" and text not in FALSY) or text == str(wanted).lower():
            return True
    return False


def _applies(row: dict, vendor: str, cpu_device: bool) -> bool:
    if cpu_device:
        return row.get("side") == "cpu"
    return row.get("vendor") in ("any", vendor)


def set_in(env: Mapping[str, str], vendor: str, cpu_device: bool = False) -> list[Switch]:
    """The switches `env` sets to a value that matters, for a run on `vendor` ("amd", "nvidia") or on the CPU."""
    data = table()
    found = []
    for row in data["switches"]:
        if not _applies(row, vendor, cpu_device):
            continue
        for name in sorted(env):
            if fnmatch.fnmatchcase(name, row["variable"]) and matters(row["values"], env[name]):
                source = data["sources"].get(row["source"], {})
                found.append(Switch(name, env[name], row["variable"], row["vendor"], row.get("side", "gpu"),
                                    row["changes"], tuple(row["sections"]), tuple(row["figures"]), row["source"],
                                    source.get("url") or source.get("document", ""), source.get("read", "")))
    return found


def describe(figure: dict) -> str:
    """One figure a re-run without a switch measured, against the run with it."""
    return (f"{figure['label']}: {figure['without']:.3g} {figure['unit']} without it against {figure['with']:.3g} "
            f"with it ({figure['speedup']:.2f}x)")
