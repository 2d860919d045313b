"""The environment variables the GPU stack reads (data/env_catalog.json): the one list of their names in rocm-doctor,
with each one's class, value grammar, effect and source. Checks, the run-environment comparison and the bench's
record of the environment ask it; data/perf_switches.json and data/legacy_values.json only add data to its names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from rocm_doctor.knowledge.store import load

CLASSES = ("selects-devices", "changes-results", "slows", "logs", "debug-only", "build-time", "tunes", "paths")
_PLACEHOLDER = re.compile(r"<[a-z]+>")


@dataclass(frozen=True)
class Row:
    """One catalogued variable (or documented pattern, such as HSA_OVERRIDE_GFX_VERSION_<n>)."""

    name: str
    owner: str
    cls: str
    grammar: str
    effect: str
    source: str
    cost: str = ""
    on: Optional[dict] = field(default=None, compare=False, hash=False)
    breaks: str = ""
    quiet: bool = False
    judged_by: str = ""
    role: str = ""
    order: Optional[int] = None

    @property
    def pattern(self) -> bool:
        return bool(_PLACEHOLDER.search(self.name))

    def reference(self) -> str:
        """The source's URL (or repository document) and the date it was read."""
        source = table()["sources"].get(self.source, {})
        return f"{source.get('url') or source.get('document', '')} (read {source.get('read', '?')})"


def table() -> dict:
    return load("env_catalog.json")


@lru_cache(maxsize=1)
def rows() -> tuple[Row, ...]:
    return tuple(Row(name=r["name"], owner=r["owner"], cls=r["class"], grammar=r["grammar"], effect=r["effect"],
                     source=r["source"], cost=r.get("cost", ""), on=r.get("on"), breaks=r.get("breaks", ""),
                     quiet=bool(r.get("quiet")), judged_by=r.get("judged_by", ""), role=r.get("role", ""),
                     order=r.get("order"))
                 for r in table()["variables"])


@lru_cache(maxsize=1)
def _index() -> tuple[dict, tuple]:
    names = {row.name: row for row in rows() if not row.pattern}
    patterns = tuple((re.compile(_PLACEHOLDER.sub(r"[0-9]+", re.escape(row.name).replace(r"\<", "<")
                                                  .replace(r"\>", ">"))), row) for row in rows() if row.pattern)
    return names, patterns


def lookup(name: str) -> Optional[Row]:
    """The row of `name`, a pattern's row for a name it matches (HSA_OVERRIDE_GFX_VERSION_1), else None."""
    names, patterns = _index()
    if name in names:
        return names[name]
    return next((row for regex, row in patterns if regex.fullmatch(name)), None)


def names_of_class(cls: str) -> tuple[str, ...]:
    """The names (patterns included) of one class, in catalog order."""
    if cls not in CLASSES:
        raise ValueError(f"unknown class {cls!r}")
    return tuple(row.name for row in rows() if row.cls == cls)


def names() -> tuple[str, ...]:
    return tuple(row.name for row in rows())


def judged_by(check_id: str) -> tuple[str, ...]:
    """The names whose values the check `check_id` judges (alloc-conf-invalid: the allocator configurations)."""
    return tuple(row.name for row in rows() if row.judged_by == check_id)


@lru_cache(maxsize=None)
def role(name: str) -> tuple[str, ...]:
    """The variables of one role, first in precedence first: "visibility" (ROCR_VISIBLE_DEVICES,
    GPU_DEVICE_ORDINAL, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES: the lowest layer first), "install-root"
    (ROCM_PATH, HIP_PATH), "cpu-threads" (MKL_NUM_THREADS, OMP_NUM_THREADS)."""
    found = sorted((row for row in rows() if row.role == name), key=lambda row: row.order or 0)
    if not found:
        raise ValueError(f"no variable has the role {name!r}")
    return tuple(row.name for row in found)


def visibility_variables() -> tuple[str, ...]:
    return role("visibility")


def _distance(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance, or limit + 1 once it is certainly above limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous, current = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        before, previous, current = previous, current, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
    return current[-1]


def _only_digits_differ(a: str, b: str) -> bool:
    return re.sub(r"[0-9]", "", a) == re.sub(r"[0-9]", "", b)


@lru_cache(maxsize=1)
def _candidates() -> dict[str, tuple[str, ...]]:
    """The names a misspelling is compared with (a pattern without its placeholder), by their first part."""
    by_prefix: dict[str, dict[str, None]] = {}
    for row in rows():
        name = _PLACEHOLDER.split(row.name)[0].rstrip("_") if row.pattern else row.name
        by_prefix.setdefault(name.split("_", 1)[0], {})[name] = None
    return {prefix: tuple(found) for prefix, found in by_prefix.items()}


def nearest(name: str) -> Optional[str]:
    """The catalogued name `name` is most likely a misspelling of, or None.

    None for a catalogued name. A name in the wrong case is a misspelling (the libraries read names case-sensitively
    on Linux). Otherwise the one catalogued name within 1 edit (2 for names of 12 or more letters), sharing the
    first part before '_' (CUDA, HSA, MIOPEN, ...), whose difference is not only digits (NCCL_IB_GID_INDEX and a
    numbered neighbour are different variables); a tie between two names is no answer."""
    if lookup(name) is not None or not name:
        return None
    upper = name.upper()
    if upper != name and lookup(upper) is not None:
        return upper
    number = re.search(r"_([0-9]+)$", upper)
    base = upper[:number.start()] if number else upper
    limit = 1 if len(base) < 12 else 2
    prefix = base.split("_", 1)[0]
    best = sorted((_distance(base, candidate, limit), candidate) for candidate in _candidates().get(prefix, ())
                  if not _only_digits_differ(candidate, base))
    best = [(distance, candidate) for distance, candidate in best if 0 < distance <= limit]
    if not best or (len(best) > 1 and best[0][0] == best[1][0]):
        return None
    found = best[0][1]
    numbered = next((row.name for row in rows() if row.pattern and row.name.startswith(found + "_")), None)
    if number and numbered:
        return _PLACEHOLDER.sub(number.group(1), numbered)
    return found
