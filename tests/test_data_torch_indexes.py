"""The wheel indexes of each torch release rest on PyTorch's own release matrix read at the commit that made the
release stable; a release-candidate matrix gives the row only where the released wheels' own metadata pins the CUDA
it calls stable, and otherwise only checks its row and keeps what differs as a disagreement."""

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
        channel = "test" if row["source"].endswith("-RC") else "release"
        built = pytorch_pages.matrix_row((ROOT / source["saved"]).read_text(encoding="utf-8"), channel)
        if channel == "test":  # a candidate's row: the released wheel's metadata confirmed it
            assert [table["sources"][key]["verified"] for key in row["also"]] == [True], row["torch"]
            row = {k: v for k, v in row.items() if k not in ("also", "note")}
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


def test_a_candidate_matrix_gives_the_row_once_the_released_wheels_pin_its_stable_cuda():
    table = load("torch_wheels.json")
    row = next(row for row in table["releases"] if row["torch"] == "2.14")
    assert row["source"] == "PT-MATRIX-2.14-RC" and row["also"] == ["PYPI-TORCH-2.14.0"]
    # the candidate builds CUDA 13.2 past its stable 13.0, and torch 2.14.0's PyPI wheels pin cuda-toolkit 13.0.3
    assert row["cuda_indexes"] == ["cu126", "cu130"] and row["cuda_experimental"] == ["cu132"]
    assert "13.0.3" in table["sources"]["PYPI-TORCH-2.14.0"]["quote"] and "disagreement" not in row
    assert wheels.cuda_index("2.14.1").endswith("/cu130")


def _rebuilt_2_14(metadata_text):
    """The 2.14 row as the builder makes it from the saved candidate matrix beside `metadata_text`."""
    table = load("torch_wheels.json")
    row = next(row for row in table["releases"] if row["torch"] == "2.14")
    row.update(source="PT-REL", cuda_indexes=["cu126", "cu130", "cu132"])
    row.pop("cuda_experimental")
    sources = ROOT / "tests" / "fixtures" / "sources"
    texts = {path.name: path.read_text(encoding="utf-8")
             for path in sources.glob("pytorch-test-infra-build-matrix-2.1*")}
    texts["pypi-torch-2.14.0-metadata.txt"] = metadata_text
    pytorch_pages.release_matrix_rows(table, texts)
    return next(row for row in table["releases"] if row["torch"] == "2.14")


def test_a_candidate_the_released_wheels_contradict_only_checks_its_row():
    saved = (ROOT / "tests" / "fixtures" / "sources" / "pypi-torch-2.14.0-metadata.txt").read_text(encoding="utf-8")
    assert _rebuilt_2_14(saved)["source"] == "PT-MATRIX-2.14-RC"
    row = _rebuilt_2_14(saved.replace("==13.0.3;", "==13.2.1;"))  # wheels built on 13.2: the candidate is not it
    assert row["source"] == "PT-REL" and row["also"] == ["PT-MATRIX-2.14-RC"]
    assert row["disagreement"].endswith("cuda_indexes cu126, cu130; cuda_experimental cu132")
