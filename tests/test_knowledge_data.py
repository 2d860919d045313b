"""The sourced tables in data/: every row names a known source, the manifest matches the files, facts hold."""

import json
from pathlib import Path

import pytest

from rocm_doctor.knowledge import provenance
from rocm_doctor.knowledge.store import load

DATA = Path(__file__).resolve().parents[1] / "data"


def _source_refs(node, path=""):
    """Every value of a 'source' / '*_source' key and every key listed under 'also', outside the 'sources' maps."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "sources":
                continue
            if (key == "source" or key.endswith("_source")) and isinstance(value, str) and not value.endswith(".json"):
                yield f"{path}.{key}", value
            elif key == "also" and isinstance(value, list):
                yield from ((f"{path}.also", item) for item in value)
            else:
                yield from _source_refs(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _source_refs(item, f"{path}[{index}]")


@pytest.mark.parametrize("name", provenance.TABLES)
def test_every_source_key_is_defined_with_a_date(name):
    table = load(name)
    refs = list(_source_refs(table))
    assert refs, name
    unknown = [(where, key) for where, key in refs if key not in table["sources"]]
    assert not unknown
    for key, source in table["sources"].items():
        assert source.get("url") or source.get("document") or ("primary" in source and not source["primary"]), key
        assert source.get("read"), key


@pytest.mark.parametrize("name,rows", [("gpu_catalog.json", "gpus"), ("gpu_catalog.json", "targets"),
                                       ("rocm_support_linux.json", "releases"), ("support_windows.json", "releases"),
                                       ("error_signatures.json", "signatures"), ("overrides.json", "families")])
def test_every_row_carries_a_source(name, rows):
    assert all(row.get("source") for row in load(name)[rows])


def test_manifest_checksums_match_the_files():
    manifest = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
    assert [entry["name"] for entry in manifest["files"]] == list(provenance.TABLES)
    for entry in manifest["files"]:
        assert provenance.sha256((DATA / entry["name"]).read_bytes()) == entry["sha256"], "run python -m rocm_doctor.knowledge.provenance"


def test_provenance_reports_version_date_and_sources():
    info = provenance.data_provenance()
    assert info["data_version"] and info["generated"]
    assert all(entry["intact"] and entry["sources"] for entry in info["files"])


def test_build_manifest_is_reproducible(tmp_path):
    for name in provenance.TABLES:
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    written = json.loads(provenance.write_manifest(tmp_path, "2026-11-30").read_text(encoding="utf-8"))
    assert written["data_version"] == "2026.11.30"
    assert [f["sha256"] for f in written["files"]] == [f["sha256"] for f in json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))["files"]]


def test_catalog_covers_the_required_cards():
    names = {name for row in load("gpu_catalog.json")["gpus"] for name in row["names"]}
    for name in ["AMD Radeon RX 9070 XT", "AMD Radeon RX 9060 XT", "AMD Radeon RX 7900 XTX", "AMD Radeon RX 7600",
                 "AMD Radeon RX 6950 XT", "AMD Radeon RX 6600", "AMD Radeon VII", "AMD Instinct MI50", "AMD Instinct MI100",
                 "AMD Instinct MI210", "AMD Instinct MI250X", "AMD Instinct MI300X", "AMD Instinct MI325X", "AMD Instinct MI355X",
                 "AMD Radeon 680M", "AMD Radeon 780M", "AMD Radeon 890M", "AMD Radeon 8060S", "NVIDIA H100 SXM", "NVIDIA H200",
                 "NVIDIA A100 80GB", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090", "NVIDIA L40S"]:
        assert name in names
    assert {row["gfx"] for row in load("gpu_catalog.json")["gpus"] if row["kind"] == "igpu"} >= {"gfx902", "gfx90c"}


def test_rdna2_rows_have_no_bf16_peak():
    rdna2 = [row for row in load("gpu_catalog.json")["gpus"] if row["arch"] == "RDNA2"]
    assert rdna2 and all(row["peak_tflops"]["bf16"] is None for row in rdna2)
