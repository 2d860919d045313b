"""gfx target-id helpers: every spelling the AMD tools use reduces to one base name."""

import pytest

from rocm_doctor.parsers import gfx


@pytest.mark.parametrize(
    "text, base, features",
    [
        ("gfx942:sramecc+:xnack-", "gfx942", {"sramecc": "+", "xnack": "-"}),
        ("amdgcn-amd-amdhsa--gfx90c:xnack-", "gfx90c", {"xnack": "-"}),
        ("amdgcn-amd-amdhsa--gfx1030", "gfx1030", {}),
        ("gfx10-3-generic", "gfx10-3-generic", {}),
        ("amdgcn-amd-amdhsa--gfx9-4-generic:sramecc+:xnack-", "gfx9-4-generic", {"sramecc": "+", "xnack": "-"}),
        ("gfx11-generic", "gfx11-generic", {}),
        ("  GFX1100  ", "gfx1100", {}),
        ("sm_90", None, {}),
        ("", None, {}),
        (None, None, {}),
    ],
)
def test_split_target_id(text, base, features):
    assert gfx.split_target_id(text) == (base, features)


def test_target_id_drops_isa_prefix_and_keeps_features():
    assert gfx.target_id("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-") == "gfx942:sramecc+:xnack-"
    assert gfx.target_id("nonsense") is None
    assert gfx.is_generic("gfx10-3-generic") and not gfx.is_generic("gfx1030")


@pytest.mark.parametrize(
    "value, name",
    [(100302, "gfx1032"), (90010, "gfx90a"), (90012, "gfx90c"), (110501, "gfx1151"), (90402, "gfx942"),
     (110001, "gfx1101"), (110003, "gfx1103"), (120001, "gfx1201"), (100100, "gfx1010"), ("100306", "gfx1036"),
     (0, None), (-1, None), ("x", None), (None, None), (500, None)],
)
def test_from_kfd_version(value, name):
    assert gfx.from_kfd_version(value) == name


@pytest.mark.parametrize(
    "text, name",
    [("10.3.0", "gfx1030"), ("11.0.0", "gfx1100"), ("9.0.6", "gfx906"), ("9.0.10", "gfx90a"), ("9.0.12", "gfx90c"),
     ("9.4.2", "gfx942"), ("11.5.1", "gfx1151"), ("12.0.1", "gfx1201"), ("10.3", None), ("abc", None), (None, None)],
)
def test_from_override(text, name):
    assert gfx.from_override(text) == name


@pytest.mark.parametrize(
    "text, name",
    [
        # rocm_smi_lib 6.1-6.2: major*100 + minor*10 + stepping, major*10 more when minor is 0
        ("gfx11002", "gfx1102"), ("gfx11000", "gfx1100"), ("gfx12001", "gfx1201"), ("gfx9010", "gfx90a"),
        ("gfx9006", "gfx906"), ("gfx9008", "gfx908"), ("gfx9012", "gfx90c"), ("gfx8003", "gfx803"),
        # minor != 0 came out right then, and every name is right in later versions
        ("gfx1036", "gfx1036"), ("gfx942", "gfx942"), ("gfx1151", "gfx1151"), ("gfx90a", "gfx90a"),
        ("gfx1100", "gfx1100"), ("gfx1201", "gfx1201"),
        # before 6.1: the raw KFD number
        ("gfx110002", "gfx1102"), ("gfx90010", "gfx90a"), ("gfx90402", "gfx942"),
        ("N/A", None), ("gfx", None), ("", None), (None, None), ("gfx1234567", None),
    ],
)
def test_from_rocm_smi(text, name):
    assert gfx.from_rocm_smi(text) == name
