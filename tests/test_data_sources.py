"""Every source of the tables can be checked again: a primary URL or repository document, the page's own version
or commit, the date it was read, and the words it rests on; none is a note of this project's."""

import re
from pathlib import Path

import pytest

from rocm_doctor.knowledge import provenance
from rocm_doctor.knowledge.store import load

# error_signatures.json cites the issue thread of each message row by row; its sources are kept by its own checks.
TABLES = [name for name in provenance.TABLES if name != "error_signatures.json"]
NOTES = re.compile(r"amd-facts|perf-anchors|research notes|shared/reference|/work/", re.I)
# A path in this repository: only a saved copy of a page or a recorded observation (real tool output) may be named.
REPO_PATH = re.compile(r"^(?:data|docs|tests|tools|rocm_doctor|shared|notes|benchmarks)/|^README")
OBSERVED = ("tests/fixtures/", "tests/snapshots/")
ROOT = Path(__file__).resolve().parents[1]
DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")  # a month where the day was not recorded


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


@pytest.mark.parametrize("name", TABLES)
def test_no_source_points_into_notes(name):
    for key, source in load(name)["sources"].items():
        assert not [text for text in _strings(source) if NOTES.search(text)], f"{name} {key}"
        assert not str(source.get("document", "")).startswith(("shared/", "notes/")), f"{name} {key}"


@pytest.mark.parametrize("name", TABLES)
def test_a_source_in_this_repository_is_a_saved_page_or_an_observation_never_a_note(name):
    for key, source in load(name)["sources"].items():
        named = [source.get("url"), source.get("document"), *(source.get("also_url") or [])]
        for where in (str(n) for n in named if n):
            if not REPO_PATH.search(where) or where.startswith(("http://", "https://")):
                continue
            path = where.split(" ")[0].split("#")[0]
            assert path.startswith(OBSERVED) and not path.endswith(".md"), f"{name} {key}: {where}"
            assert (ROOT / path).exists(), f"{name} {key}: {where}"
        if source.get("saved"):
            assert source["saved"].startswith("tests/fixtures/") and (ROOT / source["saved"]).is_file(), f"{name} {key}"


def test_every_saved_copy_says_where_and_when_it_was_read():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import source_parsers

    for path in sorted((ROOT / "tests" / "fixtures" / "sources").iterdir()):
        head = source_parsers.header(path.read_text(encoding="utf-8"))
        assert head.get("source", "").startswith("https://"), path.name
        assert DATE.match(head.get("read", "")) and (head.get("commit") or head.get("page-date")), path.name


@pytest.mark.parametrize("name", TABLES)
def test_every_source_has_a_read_date_and_a_version(name):
    for key, source in load(name)["sources"].items():
        where = f"{name} {key}"
        if "primary" in source:  # no primary source exists: said so, never passed off as one
            assert source["primary"] is None and source.get("verified") is False and source.get("why"), where
        else:
            assert source.get("url") or source.get("document"), where
        assert DATE.match(str(source.get("read", ""))), where
        assert source.get("version"), where
        if source["version"] == "unrecorded" or not source.get("quote"):
            assert source.get("verified") is False and source.get("why"), where


@pytest.mark.parametrize("name", TABLES)
def test_a_verified_source_quotes_the_words_it_rests_on(name):
    for key, source in load(name)["sources"].items():
        if source.get("verified") is True:
            assert source.get("quote") and source["version"] != "unrecorded", f"{name} {key}"


def test_a_saved_source_holds_its_quote():
    root = ROOT
    saved = [(name, key, source) for name in TABLES for key, source in load(name)["sources"].items()
             if source.get("saved")]
    assert saved
    for name, key, source in saved:
        assert source["quote"] in (root / source["saved"]).read_text(encoding="utf-8"), f"{name} {key}"


def test_nothing_is_presumed():
    for name in TABLES:
        assert not [text for text in _strings(load(name)) if re.search(r"\bpresum", text, re.I)], name


def test_a_target_only_kfd_knows_is_catalogued_and_listed_by_no_support_row():
    catalog = load("gpu_catalog.json")
    kfd_only = {row["gfx"]: row for row in catalog["targets"] if row["source"] == "KFD-DEVICE"}
    assert kfd_only["gfx1154"]["gc"] == ["11.5.4"] and kfd_only["gfx1250"]["gfx_target_version"] == 120500
    assert all(key in catalog["sources"] for row in kfd_only.values() for key in row["support_sources"])
    listed = set()
    for table in ("rocm_support_linux.json", "support_windows.json"):
        listed |= {gfx for row in load(table)["releases"] for gfx in row.get("gfx", {})}
    assert not listed & set(kfd_only), "a support row lists a target the catalog says no row lists"


def test_each_cuda_compat_reading_names_its_rows_driver_or_a_recorded_disagreement():
    table = load("nvidia_driver_cuda.json")
    read = [row for row in table["toolkits"] if "toolkit" in row]
    assert {"CUDA 13.2 GA", "CUDA 13.1 Update 1", "CUDA 13.2 Update 1", "CUDA 13.3 GA",
            "CUDA 13.3 Update 1"} <= {row["release"] for row in read}
    for row in read:
        keys = [k for k in [row["source"], *row.get("also", [])] if k.startswith(("CF-COMPAT-", "NV-REDIST-"))]
        assert keys, row
        for key in keys:
            quote = table["sources"][key]["quote"]
            quoted = re.search(r'(?:driver_version = |"version": )"([0-9.]+)"', quote).group(1)
            assert quoted == row["linux"] or row.get("disagreement") == f"{key} names Linux driver {quoted}", row
    assert not {f"CUDA {t['release']}" for t in table["after_table"]["toolkits"]} & {r["release"] for r in read}
