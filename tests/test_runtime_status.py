"""The runtime status table (data/runtime_status.json) holds exactly the enum members of the stored headers it cites
(tests/fixtures/headers), every row is sourced, and describe / by_name / names answer as the checks expect."""

import re
from pathlib import Path

import pytest

from rocm_doctor.engine.registry import load_registry
from rocm_doctor.knowledge import runtime_status
from rocm_doctor.knowledge.store import load

HEADERS = Path(__file__).parent / "fixtures" / "headers"
TABLE = load("runtime_status.json")
ROWS = TABLE["statuses"]
API_HEADERS = {"cuda-driver": ["cuda.h"], "cuda-runtime": ["driver_types.h"], "hip": ["hip_runtime_api.h"],
               "hsa": ["hsa.h", "hsa_ext_amd.h", "hsa_ext_image.h", "hsa_ext_finalize.h"]}


def enum_members(text: str) -> list[tuple[str, int]]:
    """(name, value) of every member of every enum in a C header, values as C assigns them (an implicit value is the
    previous one plus 1); comments and preprocessor lines are dropped first, so braces and commas in them do not count."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    code = re.sub(r"^[ \t]*#.*$", "", code, flags=re.M)
    members = []
    for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", code, flags=re.S):
        value = -1
        for item in filter(None, (part.strip() for part in body.split(","))):
            found = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:=\s*((?:0x)?[0-9A-Fa-f]+))?", item)
            assert found, f"unparsed enum item {item!r}"
            value = int(found.group(2), 0) if found.group(2) else value + 1
            members.append((found.group(1), value))
    return members


def test_the_parser_reads_c_enum_rules():
    text = "/* { , } */ typedef enum { A = 0x10, // x, y\n B, #if X\n C = 7 } t;\nenum { D }; int x[2] = {1, 2};"
    assert enum_members(text.replace("#if X", "\n#if X\n")) == [("A", 16), ("B", 17), ("C", 7), ("D", 0)]


@pytest.mark.parametrize("api", sorted(API_HEADERS))
def test_table_has_exactly_the_members_of_the_stored_headers(api):
    in_headers = [member for name in API_HEADERS[api] for member in enum_members((HEADERS / name).read_text("utf-8"))]
    in_table = [(row["name"], row["code"]) for row in ROWS if row["api"] == api]
    assert in_headers and in_table == in_headers


def test_the_headers_hold_the_statuses_users_meet():
    members = {name: value for names in API_HEADERS.values() for header in names
               for name, value in enum_members((HEADERS / header).read_text("utf-8"))}
    assert members["CUDA_ERROR_NO_DEVICE"] == 100 and members["cudaErrorInsufficientDriver"] == 35
    assert members["hipErrorNoBinaryForGpu"] == 209 and members["hipErrorTbd"] == 1055
    assert members["HSA_STATUS_ERROR_OUT_OF_RESOURCES"] == 0x1008
    assert members["HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"] == 41


def test_every_header_is_described_in_sources_md():
    sources_md = (HEADERS / "SOURCES.md").read_text("utf-8")
    for path in HEADERS.glob("*.h"):
        assert f"`{path.name}`" in sources_md
    for key in {row["source"] for row in ROWS}:  # the headers the rows come from, each with its commit or file hash
        document = TABLE["sources"][key]["document"]
        assert re.search(r"@([0-9a-f]{40})|sha256 ([0-9a-f]{64})\)$", document)
        assert any(ref and ref in sources_md for ref in re.findall(r"@([0-9a-f]{40})|sha256 ([0-9a-f]{64})\)$", document)[0])


def test_every_row_is_sourced_and_means_something():
    sources = TABLE["sources"]
    for row in ROWS:
        assert row["api"] in API_HEADERS and isinstance(row["code"], int)
        assert row["source"] in sources and row["meaning"].strip(), row["name"]
        assert all(cause["text"].strip() and cause["source"] in sources for cause in row["causes"]), row["name"]
    assert len({row["name"] for row in ROWS}) == len(ROWS)


def test_aliases_name_a_row_of_the_same_api_and_code():
    rows = {row["name"]: row for row in ROWS}
    aliases = [row for row in ROWS if row.get("alias_of")]
    assert {row["name"] for row in aliases} == {"hipErrorMemoryAllocation", "hipErrorInitializationError",
                                                "hipErrorMapBufferObjectFailed", "hipErrorInvalidResourceHandle"}
    for row in aliases:
        first = rows[row["alias_of"]]
        assert (first["api"], first["code"]) == (row["api"], row["code"]) and not first.get("alias_of")
    codes = [(row["api"], row["code"]) for row in ROWS if not row.get("alias_of")]
    assert len(codes) == len(set(codes))


def test_points_to_names_registered_checks():
    registered = set(load_registry(include_plugins=False).ids())
    pointed = {row["name"]: row["points_to"] for row in ROWS if row["points_to"]}
    assert set(pointed.values()) <= registered
    assert pointed["CUDA_ERROR_NO_BINARY_FOR_GPU"] == pointed["cudaErrorNoKernelImageForDevice"] == "sm-not-in-torch-arch-list"
    assert pointed["hipErrorNoBinaryForGpu"] == "gfx-not-in-torch-arch-list"
    assert pointed["cudaErrorInsufficientDriver"] == "nvidia-driver-older-than-torch-cuda"
    assert pointed["cudaErrorDevicesUnavailable"] == "gpu-compute-mode-restricted"
    assert pointed["HSA_STATUS_ERROR_OUT_OF_RESOURCES"] == "rocm-device-access"


def test_describe_by_code_and_by_name():
    no_device = runtime_status.describe("cuda-driver", 100)
    assert set(no_device) == {"api", "name", "code", "meaning", "causes", "points_to", "source"}
    assert (no_device["name"], no_device["api"], no_device["source"]) == ("CUDA_ERROR_NO_DEVICE", "cuda-driver", "CUDA-H")
    assert runtime_status.describe("cuda-driver", "CUDA_ERROR_NO_DEVICE") == no_device
    assert runtime_status.describe("cuda-driver", "100") == no_device
    assert runtime_status.describe("cuda-runtime", 100)["name"] == "cudaErrorNoDevice"
    assert runtime_status.describe("hsa", 0x1008)["name"] == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    assert runtime_status.describe("hsa", 4104)["points_to"] == "rocm-device-access"


def test_describe_prefers_the_first_name_of_a_code():
    assert runtime_status.describe("hip", 2)["name"] == "hipErrorOutOfMemory"
    assert runtime_status.describe("hip", "hipErrorMemoryAllocation")["code"] == 2


@pytest.mark.parametrize("api,code", [("cuda-driver", 123456), ("no-such-api", 0), ("cuda-driver", "cudaErrorNoDevice"),
                                      ("hip", "hipErrorNoSuchThing"), ("hsa", True), ("hsa", None), ("hsa", 1.5)])
def test_describe_unknown_is_none(api, code):
    assert runtime_status.describe(api, code) is None


def test_causes_carry_their_source():
    unavailable = runtime_status.by_name("cudaErrorDevicesUnavailable")
    assert unavailable["code"] == 46 and unavailable["points_to"] == "gpu-compute-mode-restricted"
    assert unavailable["causes"] and all(c["source"] == "DRIVER-TYPES-H" for c in unavailable["causes"])
    kfd = runtime_status.by_name("HSA_STATUS_ERROR_OUT_OF_RESOURCES")
    assert {c["source"] for c in kfd["causes"]} == {"HSA-H", "ROCMINFO-34", "LRB-1109"}
    assert runtime_status.by_name("CUDA_ERROR_PEER_ACCESS_NOT_ENABLED")["causes"] == []


def test_by_name_across_apis():
    assert runtime_status.by_name("CUDA_ERROR_OUT_OF_MEMORY")["api"] == "cuda-driver"
    assert runtime_status.by_name("hipErrorNoBinaryForGpu")["points_to"] == "gfx-not-in-torch-arch-list"
    assert runtime_status.by_name("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION")["code"] == 41
    assert runtime_status.by_name("nothing") is None and runtime_status.by_name(None) is None


def test_names_in_header_order_and_copies():
    hsa = runtime_status.names("hsa")
    assert hsa[:2] == ["HSA_STATUS_SUCCESS", "HSA_STATUS_INFO_BREAK"] and "HSA_STATUS_ERROR_XNACK_DISABLED" in hsa
    assert len(runtime_status.names("cuda-runtime")) == sum(row["api"] == "cuda-runtime" for row in ROWS)
    assert runtime_status.names("no-such-api") == []
    runtime_status.names("hip").clear()
    runtime_status.describe("hip", 209)["causes"].clear()
    assert runtime_status.names("hip") and runtime_status.describe("hip", 209)["causes"]


def test_a_real_cuda_13_0_driver_and_runtime_name_each_code_they_know_as_the_table_does():
    """Recorded on an H200 (driver 580.159.04, CUDA 13.0): an independent witness of the codes' names and values."""
    api = {"cuGetErrorName": "cuda-driver", "cudaGetErrorName": "cuda-runtime"}
    unknown = {"cuda-driver": set(), "cuda-runtime": set()}
    lines = (HEADERS / "h200-driver-580.159.04-status-names.txt").read_text("utf-8").splitlines()
    answers = [line.split() for line in lines if line.split()[0] in api]
    for call, code, *name in answers:
        row = runtime_status.describe(api[call], int(code))
        if name in (["rc=1"], ["unrecognized", "error", "code"]):
            unknown[api[call]].add(row["name"])
        else:
            assert name == [row["name"]]
    assert len(answers) == len(ROWS) - sum(row["api"] in ("hip", "hsa") for row in ROWS)
    assert unknown == {"cuda-driver": {"CUDA_ERROR_MULTICAST_RESOURCE_FULL", "CUDA_ERROR_INSUFFICIENT_LOADER_VERSION",
                                       "CUDA_ERROR_STREAM_DETACHED", "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE",
                                       "CUDA_ERROR_FABRIC_NOT_READY"},
                       "cuda-runtime": {"cudaErrorVersionTranslation", "cudaErrorInsufficientLoaderVersion",
                                        "cudaErrorStreamDetached", "cudaErrorGraphRecaptureFailure",
                                        "cudaErrorFabricNotReady"}}
