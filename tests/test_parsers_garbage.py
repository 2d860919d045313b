"""Every AMD-stack parser takes any text without raising: random bytes, truncated fixtures, binary junk."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_doctor.parsers import gfx
from rocm_doctor.parsers.agent_enumerator import parse_target_lines
from rocm_doctor.parsers.amd_smi import parse_amd_smi
from rocm_doctor.parsers.hipconfig import parse_hip_version, parse_hipconfig_full
from rocm_doctor.parsers.kfd_sysfs import describe_node
from rocm_doctor.parsers.rocm_smi import parse_rocm_smi
from rocm_doctor.parsers.rocminfo import parse_rocminfo

FIXTURES = Path(__file__).parent / "fixtures"
PARSERS = [parse_rocminfo, parse_hipconfig_full, parse_hip_version, parse_rocm_smi, parse_amd_smi,
           parse_target_lines, lambda t: describe_node("0", t, t), gfx.split_target_id, gfx.from_rocm_smi,
           gfx.from_override, gfx.from_kfd_version]
AMD_FIXTURES = sorted(p for d in ("rocminfo", "hipconfig", "rocm-smi", "amd-smi") for p in (FIXTURES / d).iterdir())

noisy_text = st.one_of(
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", errors="replace")),
    st.text(alphabet=st.sampled_from(list("{}[]\":,|=*- \t\n0123456789abcdefgxGPU:.")), max_size=400),
)


@settings(max_examples=150, deadline=None)
@given(noisy_text)
def test_parsers_never_raise_on_random_input(text):
    for parser in PARSERS:
        parser(text)


def test_parsers_never_raise_on_any_truncation_of_any_fixture():
    for path in AMD_FIXTURES:
        text = path.read_text(encoding="utf-8")
        for cut in range(0, len(text), max(1, len(text) // 23)):
            for parser in PARSERS:
                parser(text[:cut])
                parser(text[cut:])


def test_json_like_garbage():
    for text in ('{"card0": "x"}', '[1, 2, {"gpu": "x", "asic": []}]', '{"gpu_data": 5}', "[" * 5000, '{"card0": {'):
        assert isinstance(parse_rocm_smi(text)["devices"], list)
        assert isinstance(parse_amd_smi(text)["devices"], list)


def test_half_a_json_file_is_empty_not_an_error():
    text = (FIXTURES / "rocm-smi" /
            "linux-docker-mi300x-vf-gfx942-showproductname-showmeminfo-vram-showuse-json-card-series-na.txt").read_text()
    assert parse_rocm_smi(text[: len(text) // 2])["devices"] == []


def test_a_tool_listing_hundreds_of_thousands_of_gpus_is_read_to_the_limit():
    from rocm_doctor.parsers import amd_smi, garbled, nvidia_smi

    parsed = amd_smi.parse_amd_smi("[" + ",".join(['{"gpu": %d}' % i for i in range(300_001)]) + "]")
    assert len(parsed["devices"]) == garbled.MAX_GPUS and "300,001 GPUs" in parsed["garbled"][0]["what"]
    listing = "".join(f"GPU {i}: NVIDIA H200 (UUID: GPU-{i:08x}-0000-0000-0000-000000000000)\n" for i in range(1000))
    assert len(nvidia_smi.parse_list(listing)) == garbled.MAX_GPUS
