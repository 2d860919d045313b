"""hipconfig --full / --version parser on every real output in tests/fixtures/hipconfig."""

from pathlib import Path

import pytest

from rocm_doctor.parsers.hipconfig import parse_hip_version, parse_hipconfig_full

FIXTURES = Path(__file__).parent / "fixtures" / "hipconfig"


def read(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_rocm63_full():
    config = parse_hipconfig_full(read("linux-mint22.1-gfx90c-apu-full-rocm6.3.2.txt"))
    assert config["version"]["text"] == "6.3.42134-a9a80e791"
    assert config["version"]["release"] == "6.3"
    assert (config["platform"], config["compiler"], config["runtime"]) == ("amd", "clang", "rocclr")
    assert config["rocm_path"] == config["hip_path"] == "/opt/rocm-6.3.2"
    assert config["clang_version"] == "18.0.0git"
    assert config["clang"].startswith("AMD clang version 18.0.0git")
    assert config["config_file"] == "/opt/rocm-6.3.2/lib/llvm/bin/clang++.cfg"
    assert config["environment"]["PATH"].endswith("/opt/rocm-6.3.2/bin")
    assert config["problems"] == []


def test_therock_tarball_without_config_file_and_llc():
    config = parse_hipconfig_full(read("linux-fedora43-strixhalo-therock-nightly-6.5-llc-missing.txt"))
    assert config["version"]["text"] == "6.5.25213-f04c626a9"
    assert config["platform"] == "amd" and config["rocm_path"] == "/opt/rocm"
    assert config["config_file"] is None
    assert config["clang_version"] == "19.0.0git"
    assert config["problems"] == ["sh: line 1: /opt/rocm/lib/llvm/bin/llc: No such file or directory"]
    assert "environment variables" not in config["sections"]


def test_rocm4_hcc_fallback():
    config = parse_hipconfig_full(read("linux-debian-bullseye-hip-base4.0-only-no-compiler-hcc-fallback.txt"))
    assert config["version"]["text"] == "4.0.20496-4f163c68"
    assert (config["platform"], config["compiler"], config["runtime"]) == ("hcc", "hcc", "HCC")
    assert config["hip_path"] == "/opt/rocm-4.0.0/hip"
    assert config["clang"] is None
    assert len(config["problems"]) == 4
    assert all("Can't exec" in line for line in config["problems"])
    assert "environment variables" in config["sections"], "old `=== Environment Variables` heading"
    assert config["environment"] == {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


def test_version_only_output():
    version = parse_hip_version(read("linux-rocm6.0-hipconfig-v-n-version.txt"))
    assert version == {"text": "6.0.32830-d62f6a171", "major": 6, "minor": 0, "build": 32830,
                       "suffix": "d62f6a171", "release": "6.0"}
    assert parse_hipconfig_full(read("linux-rocm6.0-hipconfig-v-n-version.txt"))["version"] is None


@pytest.mark.parametrize(
    "text, expected",
    [("5.7.31921-9999", ("5.7.31921-9999", "9999")), ("6.3.42134-", ("6.3.42134", None)),
     ("6.2.41133", ("6.2.41133", None)), ("", None), ("no version here", None)],
)
def test_distro_and_odd_versions(text, expected):
    version = parse_hip_version(text)
    assert (version["text"], version["suffix"]) == expected if expected else version is None


def test_nvidia_platform():
    config = parse_hipconfig_full(
        "HIP version  : 5.7.31921-d1770ee1b\n\n== hipconfig\nHIP_PATH     : /opt/rocm\nROCM_PATH    : /opt/rocm\n"
        "HIP_COMPILER : nvcc\nHIP_PLATFORM : nvidia\nHIP_RUNTIME  : cuda\nCUDA_PATH    : /usr/local/cuda\n"
    )
    assert (config["platform"], config["compiler"], config["runtime"]) == ("nvidia", "nvcc", "cuda")
    assert config["cuda_path"] == "/usr/local/cuda"
