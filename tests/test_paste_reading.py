"""Pastes as they arrive in tickets, read back to the lines the tools printed. The lines are real (their threads
are named); each mangling is one a paste really shows: UTF-16 from PowerShell, cp1252 beside UTF-8, CRLF, ANSI
colours, Markdown quotes and fences, journalctl and docker prefixes, records run together or wrapped, lost first
characters."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_doctor.parsers.paste import clean, decode, strip_prefix
from rocm_doctor.parsers.paste_programs import parse_programs
from rocm_doctor.parsers.paste_tools import platform_of, tool_outputs

# https://github.com/ollama/ollama/issues/11557 (journalctl with a Russian month)
OLLAMA_JOURNAL = ('июл 26 11:15:53 TUF ollama[2169]: time=2025-07-26T11:15:53.149+03:00 level=INFO '
                  'source=amd_linux.go:386 msg="amdgpu is supported" gpu=0 gpu_type=gfx1102')
# https://github.com/ollama/ollama/issues/9516
OLLAMA_ENV = ('2025/03/05 11:26:34 routes.go:1215: INFO server config env="map[CUDA_VISIBLE_DEVICES: '
              'GPU_DEVICE_ORDINAL: HIP_VISIBLE_DEVICES: HSA_OVERRIDE_GFX_VERSION:11.0.0 HTTPS_PROXY: HTTP_PROXY: '
              'NO_PROXY: OLLAMA_CONTEXT_LENGTH:2048 OLLAMA_DEBUG:true]"')
# https://github.com/ROCm/ROCm/issues/1815
NO_BINARY = '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"'
# https://github.com/OpenImagingLab/FlashVSR/issues/24 (ComfyUI's log: records run together behind timestamps)
COMFY = "2025-10-21T21:59:20.982698 - [START] Security scan2025-10-21T21:59:20.982698 - "
# https://github.com/nlzy/triton-gfx906/issues/1
VLLM = ("(APIServer pid=24796) INFO 10-02 11:31:04 [api_server.py:1896] vLLM API server version "
        "0.10.2.dev756+gfx906.update1.gcdfcd781c")


def test_utf16_and_mixed_encodings_decode():
    assert decode(("\ufeff" + NO_BINARY + "\r\n").encode("utf-16-le")).strip("\ufeff\r\n") == NO_BINARY
    mixed = "Device: cuda:0 AMD Radeon RX 7900 XTX : native\n".encode() + "Temp 35.0°C\n".encode("cp1252")
    assert decode(mixed).splitlines() == ["Device: cuda:0 AMD Radeon RX 7900 XTX : native", "Temp 35.0°C"]


def test_prefixes_quotes_colours_and_crlf_are_removed():
    text = clean(f"> ```\r\n> {OLLAMA_JOURNAL}\r\n> \x1b[31m{NO_BINARY}\x1b[0m\r\n> ```\r\n")
    assert text["text"].split("\n") == [OLLAMA_JOURNAL.split("TUF ollama[2169]: ")[1], NO_BINARY, ""]
    assert text["programs"] == ["ollama"]
    assert strip_prefix(VLLM)[0].startswith("INFO 10-02 11:31:04 [api_server.py:1896] vLLM API server version")


def test_records_run_together_are_split_and_a_lost_first_character_restored():
    assert clean(COMFY)["text"].split("\n") == ["[START] Security scan", ""]
    assert clean(NO_BINARY.strip('"')[1:], ["hipErrorNoBinaryForGpu"])["text"] == NO_BINARY.strip('"')


def test_a_wrapped_record_is_joined_but_a_new_message_is_not():
    cut = OLLAMA_ENV.index("rue]")
    head, tail = OLLAMA_ENV[:cut], OLLAMA_ENV[cut:]
    assert not tail[0].isupper() and clean(head + "\n" + tail)["text"] == OLLAMA_ENV
    assert clean(VLLM + "\n" + NO_BINARY.strip('"'))["text"].count("\n") == 1


def test_program_start_up_lines_give_the_machine_facts():
    parsed = parse_programs("\n".join([OLLAMA_ENV, OLLAMA_JOURNAL, VLLM]))
    assert [p["name"] for p in parsed["programs"]] == ["ollama", "vllm"]
    assert parsed["programs"][1]["version"] == "0.10.2.dev756+gfx906.update1.gcdfcd781c"
    assert {"variable": "HSA_OVERRIDE_GFX_VERSION", "value": "11.0.0", "line": OLLAMA_ENV} in parsed["env"]
    assert parsed["gpus"][0]["gfx"] == "gfx1102" and parsed["gpus"][0]["accepted"]


def test_platform_and_tool_outputs():
    assert platform_of("WSL environment detected.\nROCR: unsupported GPU") == "wsl"
    assert platform_of(r"C:\Users\me\venv\Lib\site-packages\torch\lib\amdhip64_7.dll") == "windows"
    cut = tool_outputs("noise\nROCk module is loaded\nHSA System Attributes\n*** Done ***\nafter\n")
    assert cut == {"rocminfo": "ROCk module is loaded\nHSA System Attributes\n*** Done ***\n"}


@given(st.binary(max_size=400))
@settings(max_examples=200, deadline=None)
def test_reading_never_raises_on_any_bytes(raw):
    text = decode(raw)
    cleaned = clean(text, ["hipErrorNoBinaryForGpu"])
    assert isinstance(cleaned["text"], str) and isinstance(tool_outputs(cleaned["text"]), dict)
    assert platform_of(cleaned["text"]) in ("linux", "wsl", "windows", "unknown")


def test_a_variable_a_command_sets_is_read_but_an_errors_advice_is_not():
    """ROCm/TransformerEngine#293 sets HIP_VISIBLE_DEVICES empty on the command line; torch's own advice line
    ("consider passing AMD_SERIALIZE_KERNEL=3") sets nothing."""
    parsed = parse_programs('`HIP_VISIBLE_DEVICES="" python -c "import transformer_engine"`\n'
                            "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n")
    assert [(e["variable"], e["value"]) for e in parsed["env"]] == [("HIP_VISIBLE_DEVICES", "")]
    assert parse_programs(OLLAMA_ENV)["env"][0]["variable"] == "HSA_OVERRIDE_GFX_VERSION"  # unset ones skipped


def test_a_package_manager_paste_shows_linux():
    """zypper's and dnf's own words (https://github.com/ROCm/legacy-rocm-build/issues/1999,
    https://github.com/negativo17/nvidia-driver/issues/162) say Linux though no path does."""
    assert platform_of("mate@MATTY-GA402RK:~> sudo zypper install amdgpu-dkms rocm-hip-libraries\n"
                       "Resolving package dependencies...\n") == "linux"
    assert platform_of("$ sudo dnf module install nvidia-driver:open-dkms \n") == "linux"
