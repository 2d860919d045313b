"""The ROCm 7.0 and 7.1 rows are checked against AMD's compatibility matrix read at ROCm/ROCm commits: a point
release's additions name the past-versions CSV, and a row the pages contradict stops the rebuild."""

import copy
import sys
from pathlib import Path

import pytest

from rocm_doctor.knowledge.store import load

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import rocm_history_pages  # noqa: E402  (the maintainer's checks, beside rebuild_data.py)

SOURCES = ROOT / "tests" / "fixtures" / "sources"
TEXTS = {name: (SOURCES / name).read_text(encoding="utf-8")
         for name in (rocm_history_pages.HISTORY, rocm_history_pages.PAGE_71)}


def _distro(table, rocm, distro, version):
    row = next(row for row in table["releases"] if row["rocm"] == rocm)
    return next(d for d in row["distros"] if (d["id"], d["version"]) == (distro, version))


def test_rhel_10_1_and_9_7_from_7_1_1_rest_on_the_matrix():
    table = load("os_support.json")
    for version in ("10.1", "9.7"):
        entry = _distro(table, "7.1", "rhel", version)
        assert entry["from"] == "7.1.1" and entry["source"] == "CM-HIST-7.2" and "verified" not in entry
    assert table["sources"]["CM-7.1"]["verified"] is True and table["sources"]["CM-HIST-7.2"]["verified"] is True


def test_a_distribution_the_later_matrix_dropped_keeps_its_disagreement():
    entry = _distro(load("os_support.json"), "7.1", "azurelinux", "3.0")
    assert entry["disagreement"].startswith("CM-HIST-7.2 does not list azurelinux 3.0")
    assert "disagreement" not in _distro(load("os_support.json"), "7.0", "azurelinux", "3.0")


def test_a_glibc_the_page_does_not_give_stops_the_rebuild():
    table = copy.deepcopy(load("os_support.json"))
    _distro(table, "7.0", "rhel", "9.6")["glibc"] = "2.28"
    with pytest.raises(AssertionError, match="CM-7.1"):
        rocm_history_pages.os_checks(table, TEXTS)


def test_a_target_the_matrix_does_not_list_stops_the_rebuild():
    table = copy.deepcopy(load("rocm_support_linux.json"))
    next(row for row in table["releases"] if row["rocm"] == "7.0")["gfx"]["gfx1151"] = "supported"
    with pytest.raises(AssertionError, match="CM-HIST-7.2 lists"):
        rocm_history_pages.support_checks(table, TEXTS)


def test_the_6_4_row_names_what_the_6_4_3_column_adds():
    row = next(row for row in load("os_support.json")["releases"] if row["rocm"] == "6.4")
    assert row["also"][-1] == "CM-HIST-7.2"
    assert row["disagreement"].endswith("CM-HIST-7.2 (6.4.3 column) also lists sles 15 SP7")
