"""Every source of the tables can be checked again: a primary URL or repository document, the page's own version
or commit, the date it was read, and the words it rests on; none is a note of this project's."""

import re

import pytest

from rocm_doctor.knowledge import provenance
from rocm_doctor.knowledge.store import load

# error_signatures.json cites the issue thread of each message row by row; its sources are kept by its own checks.
TABLES = [name for name in provenance.TABLES if name != "error_signatures.json"]
NOTES = re.compile(r"amd-facts|perf-anchors|research notes|shared/reference|/work/", re.I)
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
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    saved = [(name, key, source) for name in TABLES for key, source in load(name)["sources"].items()
             if source.get("saved")]
    assert saved
    for name, key, source in saved:
        assert source["quote"] in (root / source["saved"]).read_text(encoding="utf-8"), f"{name} {key}"


def test_nothing_is_presumed():
    for name in TABLES:
        assert not [text for text in _strings(load(name)) if re.search(r"\bpresum", text, re.I)], name
