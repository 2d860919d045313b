"""Checks of the ROCm 6.4 and 7.0-7.2 rows against AMD's compatibility matrix read at ROCm/ROCm commits (saved
under tests/fixtures/sources/): the past-versions CSV of January 2026, a column per point release 6.0.0-7.2.0, and
the matrix page as 7.1.0 left it, with its kernel and glibc table. The rows keep their words; a target,
distribution or glibc version their source page does not give stops the rebuild, and what the later CSV lists
differently is kept as a disagreement."""

from __future__ import annotations

import rocm_pages
import source_parsers as parse
from source_parsers import source_entry

HISTORY = "rocm-compatibility-matrix-historical-6.0-7.2.csv"
HISTORY_QUOTE = ',"RHEL 10.1, 10.0, 9.7, 9.6, 9.4","RHEL 10.1, 10.0, 9.7, 9.6, 9.4","RHEL 10.0, 9.6, 9.4"'
PAGE_71 = "rocm-compatibility-matrix-7.1.0.rst"
PAGE_71_QUOTE = ("`Red Hat Enterprise Linux (RHEL 10) <https://access.redhat.com/articles/3078#RHEL9>`_, 10.0, "
                 "6.12.0-55, 2.39")
PAGE_71_POINT = {"7.0": "7.0.2", "7.1": "7.1.0"}  # the column of each release the 7.1.0 page has


def _version(point: str) -> tuple[int, ...]:
    return tuple(int(part) for part in point.split("."))


def _also(row: dict, key: str) -> None:
    if key not in row.setdefault("also", []):
        row["also"].append(key)


def support_checks(table: dict, texts: dict) -> None:
    """The targets of 6.4 and 7.0-7.2 are the CSV's for every point release of each."""
    table["sources"]["CM-HIST-7.2"] = source_entry(HISTORY, texts[HISTORY], HISTORY_QUOTE)
    history = parse.matrix_csv(texts[HISTORY])
    for row in table["releases"]:
        if row["rocm"] in ("6.4", "7.0", "7.1", "7.2"):
            rocm_pages._check_targets(row, history, "CM-HIST-7.2")
            _also(row, "CM-HIST-7.2")


def _check_page(row: dict, page: dict, kernels: dict) -> None:
    """A row resting on the 7.1.0 page lists what that page's column of the release lists (a later point release's
    additions aside), and the glibc and Ubuntu kernels the page's table gives."""
    point = PAGE_71_POINT[row["rocm"]]
    listed = {(d["id"], d["version"]) for d in rocm_pages._matrix_distros(page, row["rocm"], {}, {})}
    ours = {(d["id"], d["version"]) for d in row["distros"]
            if not d.get("from") or _version(d["from"]) <= _version(point)}
    assert ours == listed, f"ROCm {row['rocm']}: CM-7.1 lists {sorted(listed)}, the row {sorted(ours)}"
    for entry in row["distros"]:
        given = [kernels[(entry["id"], v)] for v in entry.get("points", [entry["version"]])
                 if (entry["id"], v) in kernels]
        for field in ("glibc", "kernels"):
            if field in entry:
                assert given and given[0].get(field) == entry[field], f"ROCm {row['rocm']} {entry}: CM-7.1 {given}"


def os_checks(table: dict, texts: dict) -> None:
    """7.0 and 7.1 rest on the 7.1.0 page; the CSV gives the point release that added a distribution (7.1.1's
    RHEL 10.1 and 9.7 among them) and what it no longer lists; 6.4's row, 6.4.3's page, is compared with the CSV's
    6.4.3 column."""
    sources = table["sources"]
    sources["CM-7.1"] = source_entry(PAGE_71, texts[PAGE_71], PAGE_71_QUOTE)
    sources["CM-HIST-7.2"] = source_entry(HISTORY, texts[HISTORY], HISTORY_QUOTE)
    page = parse.matrix_table(texts[PAGE_71])
    kernels = {(e["id"], e["version"]): e for e in parse.matrix_kernels(texts[PAGE_71])}
    history = parse.matrix_csv(texts[HISTORY])
    for row in table["releases"]:
        if row["rocm"] not in PAGE_71_POINT:
            continue
        assert row["source"] == "CM-7.1", row["rocm"]
        _check_page(row, page, kernels)
        listed = rocm_pages._matrix_distros(history, row["rocm"], {}, {})
        later = {(d["id"], d["version"]): d.get("from") for d in listed}
        points = " or ".join(r for r in history if r.rsplit(".", 1)[0] == row["rocm"])
        for entry in row["distros"]:
            where = (entry["id"], entry["version"])
            entry.pop("disagreement", None)
            if where not in later:
                entry["disagreement"] = f"CM-HIST-7.2 does not list {' '.join(where)} for {points}"
                continue
            assert later.pop(where) == entry.get("from"), f"ROCm {row['rocm']} {entry}: CM-HIST-7.2 differs"
            if entry.get("from"):
                entry.pop("verified", None)
                entry.pop("why", None)
                entry["source"] = "CM-HIST-7.2"
        assert not later, f"ROCm {row['rocm']}: CM-HIST-7.2 also lists {sorted(later)}"
        _also(row, "CM-HIST-7.2")
    _last_point(next(row for row in table["releases"] if row["rocm"] == "6.4"), history)


def _last_point(row: dict, history: dict) -> None:
    """A row read from its release's last point-release page is compared with that point's column: what one lists
    and the other does not joins the row's `disagreement` beside what other matrices said."""
    last = rocm_pages._points(history, row["rocm"])[-1]
    theirs = {(d["id"], d["version"]) for d in rocm_pages._matrix_distros({last: history[last]}, row["rocm"], {}, {})}
    ours = {(d["id"], d["version"]) for d in row["distros"]}
    key = f"CM-HIST-7.2 ({last} column)"
    said = [f"{key} does not list {', '.join(' '.join(d) for d in sorted(ours - theirs))}"] if ours - theirs else []
    said += [f"{key} also lists {', '.join(' '.join(d) for d in sorted(theirs - ours))}"] if theirs - ours else []
    kept = [part for part in row.get("disagreement", "").split("; ") if part and not part.startswith("CM-HIST-7.2 ")]
    row.pop("disagreement", None)
    if kept + said:
        row["disagreement"] = "; ".join(kept + said)
    _also(row, "CM-HIST-7.2")
