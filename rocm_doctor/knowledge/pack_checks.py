"""What a data pack must mean before it is installed, beyond its shape: a dated version, overrides that stay in
their GPU's family, URLs only on the hosts the shipped data already uses, and a source for every row.

A signature says who published a pack; these checks catch a signed pack that is wrong (a slip, or a stolen key
used for a quiet change): an RDNA2 card told to run RDNA3 code crashes, and an index URL on another host makes
`fix` install torch from there.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import re
from importlib import resources
from typing import Any, Iterable, Iterator, Mapping, Optional
from urllib.parse import urlsplit

from rocm_doctor.parsers.gfx import base_gfx, from_override

# Wheel and package hosts of the projects the data describes; the embedded tables' own hosts are added to these.
KNOWN_HOSTS = frozenset({"download.pytorch.org", "rocm.nightlies.amd.com", "repo.radeon.com", "repo.amd.com",
                         "pypi.org", "files.pythonhosted.org"})
VERSION = re.compile(r"(\d{4})\.(\d{1,2})\.(\d{1,2})(?:\.(\d{1,3}))?", re.ASCII)
FUTURE_DAYS = 2  # clocks differ; a version dated further ahead than this is a mistake
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")  # from a word's start: linear
_SOURCE_KEYS = ("source", "sources", "also")


def version_problem(manifest: Mapping[str, Any], today: Optional[_dt.date] = None) -> Optional[str]:
    """Why the manifest's data_version is not a real, dated version (YYYY.MM.DD[.N]), or None."""
    text = manifest.get("data_version")
    match = VERSION.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return f"data_version {text!r} is not a version of the form YYYY.MM.DD or YYYY.MM.DD.N"
    try:
        dated = _dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return f"data_version {text!r} names no real date"
    today = today or _dt.datetime.now(_dt.timezone.utc).date()
    if dated > today + _dt.timedelta(days=FUTURE_DAYS):
        return f"data_version {text!r} is dated after today ({today.isoformat()})"
    generated = manifest.get("generated")
    if generated is not None and generated != dated.isoformat():
        return f"generated {generated!r} is not the date of data_version {text!r}"
    return None


MAX_AGE_DAYS = 400  # a pack without its own `expires` is stale this long after its date (a replayed old pack)


def expiry_problem(manifest: Mapping[str, Any], today: Optional[_dt.date] = None) -> Optional[str]:
    """Why the pack is past its expiry (`expires`: YYYY-MM-DD, else MAX_AGE_DAYS after its data_version), or None."""
    match = VERSION.fullmatch(str(manifest.get("data_version") or ""))
    if match is None:
        return None  # version_problem names it
    today = today or _dt.datetime.now(_dt.timezone.utc).date()
    text = manifest.get("expires")
    try:
        expires = _dt.date.fromisoformat(text) if isinstance(text, str) else \
            _dt.date(int(match[1]), int(match[2]), int(match[3])) + _dt.timedelta(days=MAX_AGE_DAYS)
    except ValueError:
        return f"expires {text!r} is not a date (YYYY-MM-DD)"
    if expires < today:
        return f"the data expired on {expires.isoformat()}; a newer pack is needed"
    return None


QUOTED = ("example",)  # a real message as a log printed it, quoted verbatim: never fetched or advised


def urls(table: Any) -> Iterator[str]:
    """Every URL in a table outside its `sources` (citations shown to the reader, never fetched) and the verbatim
    messages it quotes."""
    for value in _strings(table, top=True):
        yield from _URL.findall(value)


def _strings(value: Any, top: bool = False) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if not (top and key == "sources") and key not in QUOTED:
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def hosts_of(tables: Iterable[Any]) -> set[str]:
    return {urlsplit(url).hostname or "" for table in tables for url in urls(table)} - {""}


def url_problems(name: str, table: Any, allowed: Iterable[str]) -> list[str]:
    allowed = set(allowed)
    out = []
    for url in urls(table):
        parts = urlsplit(url)
        if parts.scheme != "https":
            out.append(f"{name} holds a URL that is not https: {url}")
        elif (parts.hostname or "") not in allowed:
            out.append(f"{name} points at {parts.hostname}, not one of the known hosts ({url})")
    return out


def source_problems(name: str, table: Any) -> list[str]:
    """Rows (objects in lists) without a source of their own or of an enclosing object, and source keys that
    name no entry of the table's `sources`."""
    if not isinstance(table, dict):
        return []
    sources = table.get("sources")
    if not isinstance(sources, dict) or not sources:
        return [f"{name} has no sources"]
    out = [f"{name}: source {key!r} has no title" for key, entry in sources.items()
           if not isinstance(entry, dict) or not isinstance(entry.get("title"), str) or not entry["title"].strip()]
    _walk_rows(name, {k: v for k, v in table.items() if k != "sources"}, name, set(sources), False, out)
    return out


def _walk_rows(name: str, value: Any, where: str, known: set, sourced: bool, out: list) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _SOURCE_KEYS or key.endswith("_source"):
                for ref in item if isinstance(item, list) else [item]:
                    if not isinstance(ref, str) or ref not in known:
                        out.append(f"{where}.{key} names {ref!r}, which is not in the sources of {name}")
        sourced = sourced or "source" in value or "sources" in value
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                _walk_rows(name, item, f"{where}.{key}", known, sourced, out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict) and not sourced and "source" not in item and "sources" not in item:
                out.append(f"{where}[{index}] has no source")
            if isinstance(item, (dict, list)):
                _walk_rows(name, item, f"{where}[{index}]", known, sourced, out)


def override_problems(table: Any) -> list[str]:
    """Each override family's value must name its `as` target, and every target it covers must be of the same
    generation (gfx10 cards run gfx10 code; an override across generations crashes)."""
    out = []
    families = table.get("families") if isinstance(table, dict) else None
    for index, family in enumerate(families if isinstance(families, list) else []):
        if not isinstance(family, dict):
            out.append(f"overrides.json families[{index}] is not an object")
            continue
        value, target = family.get("value"), base_gfx(family.get("as"))
        if target is None or from_override(value) != target:
            out.append(f"overrides.json families[{index}]: value {value!r} does not name {family.get('as')!r}")
            continue
        covers = family.get("covers")
        for gfx in covers if isinstance(covers, list) else [covers]:
            real = base_gfx(gfx)
            if real is None or _generation(real) != _generation(target):
                out.append(f"overrides.json families[{index}]: {value} ({target}) for {gfx!r} crosses GPU generations")
    return out


def _generation(gfx: str) -> str:
    """gfx9 is several families: code for one runs on the others only within an LLVM generic processor
    (torch_wheels.json's generic_targets); gfx908 and gfx90a are in none, so each is a family of its own."""
    if gfx.startswith("gfx9") and len(gfx) == 6:
        return next((name for name, members in _generic_targets().items()
                     if name.startswith("gfx9") and gfx in members), gfx)
    return gfx[3:-2]


@functools.lru_cache(maxsize=1)
def _generic_targets() -> dict:
    """The embedded table's generic targets (read directly: the store itself loads this module to check packs)."""
    raw = resources.files("rocm_doctor.data").joinpath("torch_wheels.json").read_text(encoding="utf-8")
    return json.loads(raw)["generic_targets"]["targets"]


# The packages a pack's install specs (keys ending in `_spec`: `torch[device-{gfx}]`) may name, and the one
# placeholder they may hold: `fix` installs what they say, so a pack can change a version or an extra, never what
# is installed.
PACKAGES = frozenset({"torch", "torchvision", "torchaudio", "rocm", "triton", "pytorch-triton-rocm"})
_SPEC = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[A-Za-z0-9,._{}-]*\])?(?:[=<>!~]=?[A-Za-z0-9.*+!_-]+)?")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def spec_problems(name: str, table: Any) -> list[str]:
    out = []
    for key, value in _specs(table):
        match = _SPEC.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            out.append(f"{name}: {key} {value!r} is not a package spec")
        elif match["name"].lower() not in PACKAGES:
            out.append(f"{name}: {key} names the package {match['name']!r}, which a data pack may not install")
        elif any(p != "{gfx}" for p in _PLACEHOLDER.findall(value)) or value.count("{") != value.count("}"):
            out.append(f"{name}: {key} {value!r} holds a placeholder other than {{gfx}}")
    return out


def _specs(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.endswith("_spec"):
                yield key, item
            else:
                yield from _specs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _specs(item)


def problems(files: Mapping[str, Any], allowed_hosts: Iterable[str]) -> list[str]:
    """Everything wrong with the parsed tables of a pack, in table order."""
    allowed = set(allowed_hosts)
    out = []
    for name, table in files.items():
        out += url_problems(name, table, allowed)
        out += source_problems(name, table)
        out += spec_problems(name, table)
        if name == "overrides.json":
            out += override_problems(table)
    return out
