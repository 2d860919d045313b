"""Environment-variable grammars: *_VISIBLE_DEVICES and PyTorch's caching-allocator config, on real values."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_doctor.knowledge.env_catalog import visibility_variables
from rocm_doctor.parsers.alloc_conf import parse_alloc_conf
from rocm_doctor.parsers.visible_devices import entries, index, is_uuid, parse_visible, visible_order

# -- visible devices -------------------------------------------------------------------------------------------

VISIBLE_CASES = [
    ("0", ["0"], []),
    ("0,1", ["0", "1"], []),
    (" 0 , 1 ", ["0", "1"], []),
    ("-1", ["-1"], []),
    ("", [], []),
    ("   ", [], []),
    ("GPU-362702d6dbbf2d1d", ["GPU-362702d6dbbf2d1d"], []),  # rocminfo's Uuid for an RX 6800
    ("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", ["GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"], []),  # nvidia-smi -L
    ("MIG-c2a1f7ad-1bcb-5a3b-a5e8-3b1a4d5e6f70", ["MIG-c2a1f7ad-1bcb-5a3b-a5e8-3b1a4d5e6f70"], []),
    ("0,gpu1", ["0", "gpu1"], ["gpu1"]),
    ("0,,1", ["0", "", "1"], [""]),
    ("cuda:0", ["cuda:0"], ["cuda:0"]),
]


@pytest.mark.parametrize("value,found,bad", VISIBLE_CASES, ids=[repr(c[0]) for c in VISIBLE_CASES])
def test_parse_visible(value, found, bad):
    assert parse_visible(value) == (found, bad)


def test_entries_and_indices():
    assert entries("1,0") == ["1", "0"]
    assert [index(e) for e in ("0", "7", "-1", "GPU-362702d6dbbf2d1d", "x", "+1", "1.0")] == [0, 7, -1, None, None,
                                                                                             None, None]
    assert is_uuid("GPU-362702d6dbbf2d1d") and not is_uuid("gpu1") and not is_uuid("")


IGPU = {"index": 0, "name": "AMD Radeon Graphics", "uuid": "GPU-XX"}
DGPU = {"index": 1, "name": "AMD Radeon RX 6800", "uuid": "GPU-362702d6dbbf2d1d"}
ORDER_CASES = [
    ({}, [IGPU, DGPU]),
    ({"HIP_VISIBLE_DEVICES": "1"}, [DGPU]),
    ({"HIP_VISIBLE_DEVICES": "1,0"}, [DGPU, IGPU]),
    ({"CUDA_VISIBLE_DEVICES": "1"}, [DGPU]),
    ({"ROCR_VISIBLE_DEVICES": "GPU-362702d6dbbf2d1d"}, [DGPU]),
    ({"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "0"}, [DGPU]),  # HIP indexes into what ROCr left
    ({"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "1"}, []),
    ({"HIP_VISIBLE_DEVICES": "GPU-362702d6dbbf2d1d"}, []),  # only ROCr takes UUIDs here
    ({"HIP_VISIBLE_DEVICES": "0,x,1"}, [IGPU]),  # the list stops at the first bad entry
    ({"HIP_VISIBLE_DEVICES": "-1"}, []),
    ({"HIP_VISIBLE_DEVICES": ""}, []),
]


@pytest.mark.parametrize("env,expected", ORDER_CASES, ids=[repr(c[0]) for c in ORDER_CASES])
def test_visible_order(env, expected):
    assert visible_order([IGPU, DGPU], env, visibility_variables()) == expected


# -- allocator config ------------------------------------------------------------------------------------------


def test_alloc_conf_settings_as_torch_reads_them():
    parsed = parse_alloc_conf("max_split_size_mb:128,roundup_power2_divisions:[256:1,>:8],expandable_segments:True")
    assert parsed == {"settings": {"max_split_size_mb": "128", "roundup_power2_divisions": [("256", "1"), (">", "8")],
                                   "expandable_segments": "True"}, "errors": [], "unknown": []}


ALLOC_OK = [
    ("expandable_segments:True", {"expandable_segments": "True"}),
    ("garbage_collection_threshold:0.6,max_split_size_mb:512,expandable_segments:True",
     {"garbage_collection_threshold": "0.6", "max_split_size_mb": "512", "expandable_segments": "True"}),
    ("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
     {"roundup_power2_divisions": [("256", "1"), ("512", "2"), ("1024", "4"), (">", "8")]}),
    ("roundup_power2_divisions:4", {"roundup_power2_divisions": "4"}),
    ("backend:cudaMallocAsync", {"backend": "cudaMallocAsync"}),
    ("backend:native", {"backend": "native"}),
    ("pinned_max_cached_size_mb:0,pinned_use_background_threads:True",
     {"pinned_max_cached_size_mb": "0", "pinned_use_background_threads": "True"}),
    (" expandable_segments : True ", {"expandable_segments": "True"}),
    ("expandable_segments:True,", {"expandable_segments": "True"}),
    ("", {}),
]


@pytest.mark.parametrize("value,expected", ALLOC_OK, ids=[c[0] or "empty" for c in ALLOC_OK])
def test_alloc_conf_accepted(value, expected):
    assert parse_alloc_conf(value) == {"settings": expected, "errors": [], "unknown": []}


ALLOC_BAD = [
    ("expandable_segments:true", "expandable_segments", "Expected a single True/False argument"),
    ("max_split_size_mb:10", "max_split_size_mb", "too small, must be >= 20"),
    ("max_split_size_mb:128MB", "max_split_size_mb", "needs a whole number of MB"),
    ("garbage_collection_threshold:1.0", "garbage_collection_threshold", "set it in (0.0, 1.0)"),
    ("roundup_power2_divisions:[300:2]", "roundup_power2_divisions", "intervals have to be power of 2"),
    ("roundup_power2_divisions:[256:2", "roundup_power2_divisions", "Expected closing bracket"),
    ("backend:hipMalloc", "backend", "Unknown allocator backend"),
    ("expandable_segments=True", "expandable_segments=True", "expected : after expandable_segments=True"),
    ("max_split_size_mb:", "max_split_size_mb", "expecting max_split_size_mb value"),
]


@pytest.mark.parametrize("value,key,message", ALLOC_BAD, ids=[c[0] for c in ALLOC_BAD])
def test_alloc_conf_rejected_with_torchs_message(value, key, message):
    errors = parse_alloc_conf(value)["errors"]
    assert errors and errors[0][0] == key and message in errors[0][1], errors


def test_alloc_conf_unknown_keys_are_listed_not_errors():
    parsed = parse_alloc_conf("expandable_segment:True,max_split_size_mb:128")
    assert parsed["unknown"] == ["expandable_segment"] and parsed["errors"] == []
    assert parsed["settings"]["max_split_size_mb"] == "128"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(",:[]> -.0123456789abeTrueFalsx_")), max_size=80))
def test_env_grammars_never_raise(text):
    parse_alloc_conf(text)
    parse_visible(text)
    visible_order([IGPU, DGPU], {"ROCR_VISIBLE_DEVICES": text, "HIP_VISIBLE_DEVICES": text}, visibility_variables())
