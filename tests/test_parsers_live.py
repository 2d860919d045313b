"""The live-state parsers on real recorded outputs (tests/fixtures/INDEX.md names each source), and on garbage."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_doctor.parsers import nvidia_smi
from rocm_doctor.parsers.amd_smi_live import mib, parse_metric, parse_process
from rocm_doctor.parsers.live_files import parse_proc_status, parse_uevent, sysfs_int
from rocm_doctor.parsers.rocm_smi_live import parse_rocm_smi_live

FIXTURES = Path(__file__).parent / "fixtures"
H200_UUID = "GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0"


def text(relative: str) -> str:
    return (FIXTURES / relative).read_text(encoding="utf-8")


def test_h200_idle_query_in_the_probes_field_order():
    (gpu,) = nvidia_smi.parse_gpu_query(text("nvidia-smi/linux-h200-driver580-query-gpu-idle.txt"))["gpus"]
    assert gpu["index"] == 0 and gpu["uuid"] == H200_UUID and gpu["name"] == "NVIDIA H200"
    assert (gpu["utilization.gpu"], gpu["memory.used"], gpu["memory.total"]) == (0, 0, 143771)
    assert (gpu["clocks.sm"], gpu["clocks.max.sm"], gpu["clocks.mem"], gpu["clocks.max.mem"]) == (345, 1980, 3201, 3201)
    assert (gpu["power.draw"], gpu["power.limit"], gpu["power.default_limit"]) == (102.19, 700.0, 700.0)
    assert nvidia_smi.reasons(gpu["clocks_throttle_reasons.active"]) == ["gpu_idle"]
    assert (gpu["persistence_mode"], gpu["compute_mode"], gpu["mig.mode.current"]) == ("Enabled", "Default", "Disabled")
    assert gpu["ecc.errors.uncorrected.volatile.total"] == 0
    assert (gpu["pcie.link.gen.current"], gpu["pcie.link.gen.max"], gpu["pcie.link.width.current"]) == (5, 5, 16)


def test_h200_busy_with_another_process_is_power_capped_not_throttled():
    (gpu,) = nvidia_smi.parse_gpu_query(text("nvidia-smi/linux-h200-driver580-query-gpu-busy-other-process.txt"))["gpus"]
    assert (gpu["utilization.gpu"], gpu["memory.used"], gpu["clocks.sm"], gpu["power.draw"]) == (100, 123891, 1455, 691.88)
    assert nvidia_smi.reasons(gpu["clocks_throttle_reasons.active"]) == ["sw_power_cap"]


def test_the_csv_header_with_units_and_the_renamed_event_reasons_field():
    (gpu,) = nvidia_smi.parse_gpu_query(text("nvidia-smi/linux-h200-driver580-query-gpu-idle-csv-header.txt"))["gpus"]
    assert gpu["clocks.sm"] == 345 and gpu["memory.total"] == 143771 and gpu["power.draw"] == 99.94
    assert gpu["clocks_throttle_reasons.active"] == 1  # header says clocks_event_reasons.active


def test_a_many_field_query_from_an_older_driver_with_na_values():
    parsed = nvidia_smi.parse_gpu_query(text("nvidia-smi/linux-rtx2080super-driver465.27-query-gpu-many-fields-csv-units.txt"))
    (gpu,) = parsed["gpus"]
    assert gpu["name"] == "NVIDIA GeForce RTX 2080 SUPER" and gpu["uuid"] == "GPU-df6e7a7c-7314-46f8-abc4-b88b36dcf3aa"
    assert (gpu["pcie.link.gen.current"], gpu["pcie.link.gen.max"]) == (1, 3)  # idle: the link slows down
    assert gpu["ecc.errors.uncorrected.volatile.total"] is None and gpu["mig.mode.current"] is None  # [N/A]
    assert (gpu["memory.used"], gpu["clocks.mem"], gpu["clocks.max.mem"]) == (344, 405, 7751)


def test_an_unknown_field_fails_the_whole_query_and_is_named():
    raw = text("nvidia-smi/linux-h200-driver580-query-gpu-invalid-field.txt")
    assert nvidia_smi.parse_gpu_query(raw) == {"gpus": [], "errors": ['Field "no.such.field" is not a valid field to query.']}
    assert nvidia_smi.invalid_field(raw) == "no.such.field"


def test_the_fields_come_from_the_recorded_argv():
    argv = ["nvidia-smi", "--query-gpu=index,uuid,clocks.current.sm", "--format=csv,noheader,nounits"]
    assert nvidia_smi.query_fields(argv) == ("index", "uuid", "clocks.sm")
    assert nvidia_smi.parse_gpu_query("0, GPU-x, 1410", nvidia_smi.query_fields(argv))["gpus"][0]["clocks.sm"] == 1410


def test_compute_apps_with_and_without_header():
    for name in ("compute-apps-busy-other-process.txt", "compute-apps-busy-csv-header.txt"):
        parsed = nvidia_smi.parse_compute_apps(text(f"nvidia-smi/linux-h200-driver580-{name}"))
        assert parsed["processes"] == [{"gpu_uuid": H200_UUID, "pid": 461, "name": "python3", "used_mib": 123882}]


def test_compute_apps_without_a_uuid_column_and_a_full_path_name():
    parsed = nvidia_smi.parse_compute_apps(
        text("nvidia-smi/linux-host-compute-apps-pid-name-used-csv-header-driver-in-container-issue.txt"))
    assert parsed["processes"] == [{"gpu_uuid": None, "pid": 40170, "name": "/opt/rh/rh-python38/root/usr/bin/python3",
                                    "used_mib": 185}]


def test_a_process_name_with_commas_and_one_from_another_namespace():
    raw = ("GPU-a, 11, /opt/google/chrome/chrome --type=gpu-process --flag=a,b, 90\n"
           "GPU-b, 1758887, [Not Found], 58060\nNo running processes found\n")
    processes = nvidia_smi.parse_compute_apps(raw)["processes"]
    assert processes[0]["name"] == "/opt/google/chrome/chrome --type=gpu-process --flag=a, b" and processes[0]["used_mib"] == 90
    assert processes[1] == {"gpu_uuid": "GPU-b", "pid": 1758887, "name": None, "used_mib": 58060}


def test_list_with_mig_devices():
    (gpu,) = nvidia_smi.parse_list(text("nvidia-smi/linux-a100-sxm4-80gb-mig-7x-1g.10gb-list-driver535.txt"))
    assert gpu["uuid"] == "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16" and len(gpu["mig"]) == 7
    assert gpu["mig"][6] == {"profile": "1g.10gb", "device": 6, "uuid": "MIG-1aae4990-b962-574e-8375-119d6d9b9687"}
    gpus = nvidia_smi.parse_list(text("nvidia-smi/linux-4x-a100-sxm4-80gb-mig-on-gpu0-only-list.txt"))
    assert [len(g["mig"]) for g in gpus] == [4, 0, 0, 0] and gpus[3]["index"] == 3
    assert nvidia_smi.parse_list(text("nvidia-smi/linux-h200-driver580-list.txt"))[0]["uuid"] == H200_UUID


def test_reason_bits():
    assert nvidia_smi.reasons(0x44) == ["sw_power_cap", "hw_thermal_slowdown"]
    assert nvidia_smi.reasons(0x1000) == ["0x1000"] and nvidia_smi.reasons(None) == []


def test_amd_smi_process_json_and_text_with_a_hidden_name():
    json_form = parse_process(text("amd-smi/linux-process-json-two-processes-transferbench-rvs.txt"))
    assert [(p["gpu"], p["pid"], p["name"], p["mem_mib"]) for p in json_form] == [(0, 420157, "TransferBench", 0.0),
                                                                                  (0, 420315, "rvs", 0.0)]
    (hidden,) = parse_process(text("amd-smi/linux-process-text-name-na-without-sudo-transferbench-10.1gb.txt"))
    assert (hidden["gpu"], hidden["pid"], hidden["name"]) == (0, 1693982, None) and round(hidden["vram_mib"]) == 10342
    (mi300x,) = parse_process(text("amd-smi/linux-mi300x-process-text-name-na-rocm6.4.0.txt"))
    assert mi300x["pid"] == 2266127 and round(mi300x["vram_mib"]) == 1946


def test_amd_smi_process_by_pid_and_no_process():
    by_pid = '[{"pid": 7, "name": "/usr/bin/python3.12", "gpus": [{"gpu_index": 1, "mem": {"value": 67108864, ' \
             '"unit": "B"}, "memory_usage": {"vram_mem": {"value": 65588000, "unit": "B"}}}]}]'
    assert parse_process(by_pid) == [{"gpu": 1, "pid": 7, "name": "/usr/bin/python3.12", "vram_mib": 65588000 / 2**20,
                                      "mem_mib": 64.0}]
    assert parse_process('[{"gpu": 0, "process_list": [{"process_info": "No running processes detected"}]}]') == []


def test_amd_smi_metric_json_and_text():
    (power,) = parse_metric(text("amd-smi/linux-metric-power-json-unthrottled.txt"))
    assert (power["index"], power["power_w"], power["throttle_status"]) == (0, 10.0, "unthrottled")
    (plain,) = parse_metric(text("amd-smi/linux-metric-text-usage-power-clock-excerpt.txt"))
    assert (plain["gfx_activity"], plain["power_w"], plain["gfx_clock_mhz"], plain["gfx_clock_max_mhz"]) == (0, 20, 14, 2482)
    wrapped = parse_metric('{"gpu_data": [{"gpu": 2, "mem_usage": {"total_vram": {"value": 196288, "unit": "MB"}, '
                           '"used_vram": {"value": 2531, "unit": "MB"}}, "perf_level": "AMDSMI_DEV_PERF_LEVEL_LOW"}]}')
    assert (wrapped[0]["index"], wrapped[0]["vram_total_mib"], wrapped[0]["perf_level"]) == (2, 196288, "low")
    assert mib("10.1 GB") == 10.1 * 1024 and mib({"value": 2, "unit": "GiB"}) == 2048 and mib("N/A") is None


def test_rocm_smi_showpids_text_forms():
    parsed = parse_rocm_smi_live(text("rocm-smi/linux-showpids-pt_main_thread-177gb-and-idle-test_ref-processes.txt"))
    big = [p for p in parsed["processes"] if p["vram_bytes"]]
    assert big == [{"pid": 1168514, "name": "pt_main_thread", "gpu_count": 1, "vram_bytes": 177386942464}]
    assert len(parsed["processes"]) == 8
    unknown = parse_rocm_smi_live(text("rocm-smi/linux-4-gpus-showpids-unknown-values-not-supported.txt"))["processes"]
    assert [p["pid"] for p in unknown] == [55573, 55571, 55574, 55572] and unknown[0]["vram_bytes"] is None
    (tabbed,) = parse_rocm_smi_live(text("rocm-smi/linux-mi300-showpids-tabs-kfd-open-only-process.txt"))["processes"]
    assert tabbed == {"pid": 1075718, "name": "kfd_open", "gpu_count": 0, "vram_bytes": 0}


def test_rocm_smi_use_and_memory_json():
    (card,) = parse_rocm_smi_live(text("rocm-smi/linux-rx7900xt-showproductname-showuse-showmeminfo-vram-json.txt"))["cards"]
    assert card == {"index": 0, "gpu_use_pct": 0, "vram_pct": None, "vram_used_bytes": 27856896,
                    "vram_total_bytes": 21458059264}
    cards = parse_rocm_smi_live(text("rocm-smi/linux-2x-rx6800-showmemuse-json-rocm-smi-1.4.1.txt"))["cards"]
    assert [c["vram_used_bytes"] for c in cards] == [17453056, 17457152]
    pids = parse_rocm_smi_live('{"system": {"PID28389": "llama-server, 1, 2353860608, 11011, 0"}}')["processes"]
    assert pids == [{"pid": 28389, "name": "llama-server", "gpu_count": 1, "vram_bytes": 2353860608}]


def test_proc_status_and_drm_files():
    status = parse_proc_status(text("nvidia-smi/linux-h200-proc-461-status-head.txt"))
    assert status == {"name": "python3", "pid": 461, "ppid": 434, "uid": 0}
    assert parse_uevent("DRIVER=amdgpu\nPCI_ID=1002:73BF\nPCI_SLOT_NAME=0000:03:00.0\n") == {
        "driver": "amdgpu", "pci_id": "1002:73bf", "slot": "0000:03:00.0"}
    assert sysfs_int("97\n") == 97 and sysfs_int("") is None


LIVE_FIXTURES = sorted(p for d in ("nvidia-smi", "amd-smi", "rocm-smi") for p in (FIXTURES / d).iterdir())
PARSERS = [nvidia_smi.parse_gpu_query, nvidia_smi.parse_compute_apps, nvidia_smi.parse_list, parse_metric,
           parse_process, parse_rocm_smi_live, parse_proc_status, parse_uevent, sysfs_int, nvidia_smi.invalid_field]


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=300).map(lambda b: b.decode("utf-8", errors="replace")),
                 st.text(alphabet=st.sampled_from(list('{}[]":, \t\n0123456789abcxGPU-:.N/A')), max_size=300)))
def test_the_live_parsers_never_raise(raw):
    for parser in PARSERS:
        parser(raw)


def test_the_live_parsers_take_any_truncation_of_any_fixture():
    for path in LIVE_FIXTURES:
        raw = path.read_text(encoding="utf-8")
        for cut in range(0, len(raw), max(1, len(raw) // 17)):
            for parser in PARSERS:
                parser(raw[:cut])
                parser(raw[cut:])
    for junk in ('{"gpu_data": 5}', '[{"gpu": "x", "process_list": 3}]', '{"system": {"PID1": 5}}', "[" * 3000,
                 '[{"gpu": 0, "process_list": [{"process_info": {"pid": "x"}}]}]', '{"card0": []}'):
        assert isinstance(parse_process(junk), list) and isinstance(parse_metric(junk), list)
        assert isinstance(parse_rocm_smi_live(junk)["processes"], list)
