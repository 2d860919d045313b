"""Builders for the NVIDIA driver rows conda-forge's cuda-compat recipe and NVIDIA's redistributable manifests give,
read at a commit (saved under tests/fixtures/sources/): each names a CUDA toolkit release and the Linux driver whose
forward-compatibility files NVIDIA's redistributable archive carries for it, the driver that toolkit release ships
with. A source that names another driver than a row's own source is kept beside the row as its disagreement."""

from __future__ import annotations

import re

from source_parsers import source_entry

COMPAT = {version: f"conda-forge-cuda-compat-{version}-meta.yaml" for version in (
    "12.8.0", "12.8.1", "12.9.0", "12.9.1", "13.0.0", "13.0.1", "13.0.2", "13.1.0", "13.1.1", "13.2.0")}
SHIPPED = ("the driver NVIDIA's redistributable for this release carries; NVIDIA's release-notes table may name a "
           "lower minimum for the release (it does for 12.8 GA: see that row's disagreement), so a driver between "
           "the two is judged against this one")
REDIST = {label: f"nvidia-redistrib-{label}-cuda_compat.json.txt" for label in (
    "13.1.2", "13.2.0", "13.2.1", "13.2.2", "13.3.0", "13.3.1")}
_LABEL = re.compile(r'^    "release_label": "([0-9.]+)",$', re.M)
_COMPAT = re.compile(r'^    "cuda_compat": \{\n(?:        .*\n)*?        "version": "([0-9.]+)",$', re.M)
_SET = re.compile(r'\{% set (driver_version|cuda_version) = "([0-9.]+)" %\}')


def compat_versions(text: str) -> dict[str, str]:
    """The recipe's {"driver_version": ..., "cuda_version": ...}."""
    return dict(_SET.findall(text))


def _release_names(version: str) -> tuple[str, ...]:
    """13.1.1 -> ("CUDA 13.1 Update 1",); 13.2.0 -> ("CUDA 13.2 GA", "CUDA 13.2"), the first the name a new row gets."""
    major, minor, patch = version.split(".")
    if patch != "0":
        return (f"CUDA {major}.{minor} Update {patch}",)
    return (f"CUDA {major}.{minor} GA", f"CUDA {major}.{minor}")


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def toolkit_drivers(table: dict, texts: dict) -> None:
    """Each recipe's and manifest's driver on its toolkit row; a release the table had only as existing
    (`after_table`) becomes a row that keeps its release-notes page beside the source of its driver."""
    rows, after = table["toolkits"], table["after_table"]
    pages = {f"CUDA {t['release']}": t["source"] for t in after["toolkits"]}
    for version, saved in COMPAT.items():
        found = compat_versions(texts[saved])
        assert found["cuda_version"] == version, f"{saved}: the recipe is for CUDA {found['cuda_version']}"
        driver, key = found["driver_version"], f"CF-COMPAT-{version}"
        table["sources"][key] = source_entry(saved, texts[saved], f'{{% set driver_version = "{driver}" %}}')
        _put(rows, pages, version, driver, key)
    for version, saved in REDIST.items():
        text = texts[saved]
        assert _LABEL.search(text).group(1) == version, f"{saved}: the manifest is for CUDA {_LABEL.search(text)[1]}"
        driver, key = _COMPAT.search(text).group(1), f"NV-REDIST-{version}"
        table["sources"][key] = source_entry(saved, text, f'"version": "{driver}"')
        _put(rows, pages, version, driver, key)
    listed = {r["release"] for r in rows}
    after["toolkits"] = [t for t in after["toolkits"] if not set(_release_names_of(t["release"])) & listed]


def _put(rows: list, pages: dict, version: str, driver: str, key: str) -> None:
    """One source's driver for one toolkit release: a new row resting on it, or a check of the row another source
    gives (kept beside it, with a disagreement where the drivers differ)."""
    names = _release_names(version)
    row = next((r for r in rows if r["release"] in names), None)
    if row is None or row["source"] == key:
        built = {"cuda": version.rsplit(".", 1)[0], "release": names[0], "linux": driver, "windows": None,
                 "source": key, "toolkit": version, "note": SHIPPED}
        page = next((pages[name] for name in names if name in pages), None) or (row or {}).get("also", [None])[0]
        if page:
            built["also"] = [page]
        if row is None:
            rows.insert(sum(1 for r in rows if "toolkit" in r and _key(r["toolkit"]) > _key(version)), built)
        else:
            rows[rows.index(row)] = built
        return
    row.update(also=[k for k in row.get("also", []) if k != key] + [key], toolkit=version)
    if row["linux"] != driver:
        row["disagreement"] = f"{key} names Linux driver {driver}"


def _release_names_of(release: str) -> tuple[str, ...]:
    """An `after_table` release ("13.2", "13.1 Update 1") under the names a toolkit row may have."""
    return (f"CUDA {release}", f"CUDA {release} GA")
