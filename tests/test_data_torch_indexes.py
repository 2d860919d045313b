"""The wheel indexes of each torch release rest on PyTorch's own release matrix read at the commit that made the
release stable; a release-candidate matrix only checks its row and keeps what differs as a disagreement."""

import sys
from pathlib import Path

from rocm_doctor.knowledge import wheels
from rocm_doctor.knowledge.store import load

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import pytorch_pages  # noqa: E402  (the maintainer's parsers, beside rebuild_data.py)


def _matrix_rows():
    table = load("torch_wheels.json")
    return table, [row for row in table["releases"] if row["source"].startswith("PT-MATRIX-")]


def test_each_matrix_row_is_its_saved_release_channel():
    table, rows = _matrix_rows()
    assert {row["torch"] for row in rows} >= {"2.0", "2.6", "2.7", "2.10", "2.11", "2.12", "2.13"}
    for row in rows:
        source = table["sources"][row["source"]]
        assert source["verified"] is True and source["version"].split(" ")[0] in source["url"], row["torch"]
        built = pytorch_pages.matrix_row((ROOT / source["saved"]).read_text(encoding="utf-8"), "release")
        if "cuda" in built:  # no stable CUDA named: the split is RELEASE.md's, the set the matrix's
            assert row["also"] == ["PT-REL"] and row["note"] == pytorch_pages.UNSPLIT, row["torch"]
            assert sorted(row["cuda_indexes"] + row.get("cuda_experimental", [])) == sorted(built.pop("cuda"))
            row = {k: v for k, v in row.items() if k not in ("cuda_indexes", "cuda_experimental", "also", "note")}
        assert {k: v for k, v in row.items() if k not in ("source", "date")} == built, row["torch"]
        assert "unverified_indexes" not in row, row["torch"]


def test_the_cuda_index_advised_is_the_stable_cuda_the_matrix_names():
    # 2.10 went live with CUDA 12.8 as its stable CUDA and 13.0 beside it; 2.11 moved the stable CUDA to 13.0
    assert wheels.cuda_index("2.10.0+cpu").endswith("/cu128")
    assert wheels.cuda_index("2.11.0").endswith("/cu130")
    assert wheels.torch_versions("rocm7.0") == ["2.10"]
    assert wheels.torch_versions("rocm6.1") == ["2.4", "2.5", "2.6"]


def test_a_release_candidate_matrix_checks_its_row_and_keeps_the_difference():
    table = load("torch_wheels.json")
    row = next(row for row in table["releases"] if row["torch"] == "2.14")
    assert row["source"] == "PT-REL" and row["also"] == ["PT-MATRIX-2.14-RC"]
    candidate = pytorch_pages.matrix_row((ROOT / table["sources"]["PT-MATRIX-2.14-RC"]["saved"]).read_text(
        encoding="utf-8"), "test")
    assert candidate["rocm_indexes"] == row["rocm_indexes"]
    # the candidate builds CUDA 13.2 past its stable 13.0; the row, from an unread RELEASE.md, counts 13.2 as stable
    assert candidate["cuda_experimental"] == ["cu132"] and row["cuda_indexes"][-1] == "cu132"
    assert row["disagreement"].endswith("cuda_indexes cu126, cu130; cuda_experimental cu132")
