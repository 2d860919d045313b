"""The gpu-state checks, facts in / findings out, on the real recorded nvidia-smi, amd-smi and rocm-smi outputs of
tests/fixtures (a variant changes one field of a real line and says which)."""

from pathlib import Path

import pytest

from rocm_doctor.parsers.nvidia_smi import APP_FIELDS, GPU_FIELDS
from rocm_doctor.testing import Case, facts_for, run_case

FIXTURES = Path(__file__).parent / "fixtures"
NV = FIXTURES / "nvidia-smi"
IDLE = (NV / "linux-h200-driver580-query-gpu-idle.txt").read_text()
BUSY = (NV / "linux-h200-driver580-query-gpu-busy-other-process.txt").read_text()
APPS = (NV / "linux-h200-driver580-compute-apps-busy-other-process.txt").read_text()
LIST = (NV / "linux-h200-driver580-list.txt").read_text()
DOCTOR = 900  # the doctor's own pid in these cases


def command(argv, stdout, returncode=0, error=None):
    return {"argv": argv, "returncode": None if error else returncode, "stdout": stdout, "stderr": "",
            "duration_s": 0.05, "timed_out": False, "error": error, "timeout_s": 10.0}


def status_file(pid, name, ppid):
    return {"path": f"/proc/{pid}/status", "exists": True,
            "content": f"Name:\t{name}\nState:\tR (running)\nPid:\t{pid}\nPPid:\t{ppid}\nUid:\t0\t0\t0\t0\n"}


def nvidia(query=IDLE, apps="", listing=LIST, files=(), fields=GPU_FIELDS):
    """Observations of the gpu_live probe on an NVIDIA machine (no AMD tools)."""
    not_found = {k: command([k.split("-")[0] + "-smi"], "", error="not found")
                 for k in ("amd-smi-metric-json", "amd-smi-process-json", "rocm-smi-live-json")}
    return {"commands": {"nvidia-smi-query-gpu": command(["nvidia-smi", "--query-gpu=" + ",".join(fields)], query),
                         "nvidia-smi-compute-apps": command(["nvidia-smi", "--query-compute-apps=" + ",".join(APP_FIELDS)],
                                                            apps),
                         "nvidia-smi-list": command(["nvidia-smi", "-L"], listing), **not_found},
            "files": {f["path"]: f for f in files}, "probes": {"gpu.live.self": {"pid": DOCTOR}}}


def field(line: str, name: str, value: str) -> str:
    """A real query line with one field changed."""
    cells = line.strip().split(", ")
    cells[GPU_FIELDS.index(name)] = value
    return ", ".join(cells) + "\n"


def test_another_process_computing_is_named_with_pid_name_and_memory():
    (finding,) = run_case(Case(check="gpu-other-process", observations=nvidia(BUSY, APPS),
                               expect={"gpu-other-process:0": "warn"}, text=["pid 461 (python3)", "123882 MiB"]))
    assert "100% busy" in finding.message and finding.data["processes"][0]["pid"] == 461


def test_a_child_the_doctor_started_counts_as_its_own_once_its_proc_entry_is_gone():
    gone = "GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0, 5150, , 2048\n"  # ended before /proc/5150 was read
    observations = nvidia(BUSY, gone)
    observations["probes"]["gpu.live.self"]["started"] = [5100, 5150]
    facts = facts_for(Case(check="gpu-other-process", observations=observations, expect={}))
    assert facts["gpu.live"]["processes"][0]["own"] is True
    plain = facts_for(Case(check="gpu-other-process", observations=nvidia(BUSY, gone), expect={}))
    assert plain["gpu.live"]["processes"][0]["own"] is False


def test_the_doctors_own_probe_child_is_not_another_process():
    own = "GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0, 4242, /opt/torch/.venv/bin/python3, 512\n"
    files = [status_file(4242, "python3", 4241), status_file(4241, "python3", DOCTOR)]
    run_case(Case(check="gpu-other-process", observations=nvidia(field(BUSY, "utilization.gpu", "3"), own, files=files),
                  expect={"gpu-other-process": "ok"}))
    facts = facts_for(Case(check="gpu-other-process", observations=nvidia(BUSY, own, files=files), expect={}))
    assert facts["gpu.live"]["processes"][0]["own"] is True


def test_a_busy_gpu_with_no_process_listed_runs_work_from_another_namespace():
    run_case(Case(check="gpu-other-process", observations=nvidia(BUSY, ""), expect={"gpu-other-process:0": "warn"},
                  text="another container or PID namespace"))


def test_an_idle_gpu_with_a_context_is_info_and_without_is_ok():
    run_case(Case(check="gpu-other-process", observations=nvidia(IDLE, APPS), expect={"gpu-other-process:0": "info"}))
    run_case(Case(check="gpu-other-process", observations=nvidia(IDLE, ""), expect={"gpu-other-process": "ok"}))


def test_memory_held_by_another_process_warns_at_86_percent_and_fails_at_93():
    run_case(Case(check="gpu-memory-held", observations=nvidia(BUSY, APPS), expect={"gpu-memory-held:0": "warn"},
                  text=["123891 of 143771 MiB (86%)", "pid 461 (python3): 123882 MiB", "kill 461"]))
    query = field(BUSY, "memory.used", "133657")
    apps = APPS.replace("123882", "133648")
    (finding,) = run_case(Case(check="gpu-memory-held", observations=nvidia(query, apps),
                               expect={"gpu-memory-held:0": "fail"}, text="(93%)"))
    assert finding.data["held_mib"] == 133657


def test_memory_no_listed_process_accounts_for_is_said():
    query = field(IDLE, "memory.used", "100000")
    run_case(Case(check="gpu-memory-held", observations=nvidia(query, ""), expect={"gpu-memory-held:0": "warn"},
                  text="held by no process listed here"))


def test_the_doctors_own_memory_does_not_count():
    query = field(IDLE, "memory.used", "100000")
    own = "GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0, 4242, python3, 99000\n"
    run_case(Case(check="gpu-memory-held", observations=nvidia(query, own, files=[status_file(4242, "python3", DOCTOR)]),
                  expect={"gpu-memory-held": "ok"}))


@pytest.mark.parametrize("mode,others,status", [("Prohibited", "", "fail"), ("Exclusive_Process", APPS, "fail"),
                                                ("Exclusive_Process", "", "warn"), ("Default", APPS, None)])
def test_compute_modes(mode, others, status):
    expect = {"gpu-compute-mode-restricted:0": status} if status else {"gpu-compute-mode-restricted": "ok"}
    run_case(Case(check="gpu-compute-mode-restricted", observations=nvidia(field(BUSY, "compute_mode", mode), others),
                  expect=expect, text=mode))


def test_mig_enabled_without_instances_fails_and_with_unselected_instances_warns():
    mig_on = field(IDLE, "mig.mode.current", "Enabled")
    run_case(Case(check="gpu-mig-enabled", observations=nvidia(mig_on), expect={"gpu-mig-enabled:0": "fail"}))
    a100 = (NV / "linux-a100-sxm4-80gb-mig-7x-1g.10gb-list-driver535.txt").read_text()
    query = field(mig_on, "uuid", "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16")
    run_case(Case(check="gpu-mig-enabled", observations=nvidia(query, listing=a100),
                  expect={"gpu-mig-enabled:0": "warn"}, text="MIG-feb88891-0321-5fef-9c87-d4af3b54259e"))
    run_case(Case(check="gpu-mig-enabled", observations=nvidia(query, listing=a100),
                  env={"CUDA_VISIBLE_DEVICES": "MIG-a25704ba-3a06-5299-a795-fd7cf4d13973"},
                  expect={"gpu-mig-enabled:0": "info"}))
    run_case(Case(check="gpu-mig-enabled", observations=nvidia(IDLE), expect={"gpu-mig-enabled": "ok"}))


def test_clocks_held_by_the_applications_clocks_setting():
    held = field(field(BUSY, "clocks_throttle_reasons.active", "0x0000000000000002"), "clocks.sm", "1110")
    run_case(Case(check="gpu-clocks-held-low", observations=nvidia(held), expect={"gpu-clocks-held-low:0": "warn"},
                  text=["SM 1110 of 1980 MHz", "-rac"]))
    (ok,) = run_case(Case(check="gpu-clocks-held-low", observations=nvidia(IDLE), expect={"gpu-clocks-held-low": "ok"}))
    assert "idle" in ok.message


def test_power_capped_below_the_default():
    capped = field(BUSY, "power.limit", "500.00")
    run_case(Case(check="gpu-power-capped", observations=nvidia(capped), expect={"gpu-power-capped:0": "warn"},
                  text=["500 W, below its default 700 W", "-pl 700"]))
    run_case(Case(check="gpu-power-capped", observations=nvidia(BUSY), expect={"gpu-power-capped": "ok"}))


def test_throttling_thermal_warns_power_cap_at_full_load_is_info():
    hot = field(BUSY, "clocks_throttle_reasons.active", "0x0000000000000040")
    run_case(Case(check="gpu-throttling", observations=nvidia(hot), expect={"gpu-throttling:0": "warn"},
                  text="hardware thermal slowdown"))
    run_case(Case(check="gpu-throttling", observations=nvidia(BUSY), expect={"gpu-throttling:0": "info"},
                  text="692 W of its 700 W limit"))
    run_case(Case(check="gpu-throttling", observations=nvidia(IDLE), expect={"gpu-throttling": "ok"}))


def test_pcie_link_narrower_warns_slower_only_when_busy():
    narrow = field(IDLE, "pcie.link.width.current", "8")
    run_case(Case(check="gpu-pcie-link-degraded", observations=nvidia(narrow),
                  expect={"gpu-pcie-link-degraded:0": "warn"}, text="x8 of x16"))
    gen3 = field(BUSY, "pcie.link.gen.current", "3")
    run_case(Case(check="gpu-pcie-link-degraded", observations=nvidia(gen3),
                  expect={"gpu-pcie-link-degraded:0": "warn"}, text="gen 3 of 5"))
    idle = field(IDLE, "pcie.link.gen.current", "1")
    (ok,) = run_case(Case(check="gpu-pcie-link-degraded", observations=nvidia(idle),
                          expect={"gpu-pcie-link-degraded": "ok"}))
    assert "idle at gen 1 of 5" in ok.message


def test_uncorrected_ecc_errors_fail_and_na_skips():
    run_case(Case(check="gpu-ecc-errors", observations=nvidia(field(IDLE, "ecc.errors.uncorrected.volatile.total", "2")),
                  expect={"gpu-ecc-errors:0": "fail"}, text="2 uncorrected ECC error(s)"))
    run_case(Case(check="gpu-ecc-errors", observations=nvidia(field(IDLE, "ecc.errors.uncorrected.volatile.total",
                                                                     "[N/A]")), expect={"gpu-ecc-errors": "skip"}))


def test_a_field_the_driver_lacks_leaves_the_others_readable():
    fields = tuple(f for f in GPU_FIELDS if f != "mig.mode.current")
    cells = IDLE.strip().split(", ")
    del cells[GPU_FIELDS.index("mig.mode.current")]
    facts = facts_for(Case(check="gpu-mig-enabled", observations=nvidia(", ".join(cells), fields=fields), expect={}))
    (gpu,) = facts["gpu.live"]["gpus"]
    assert gpu["mig_mode"] is None and gpu["pcie_gen"] == 5


def amd(process_text, busy="97", used=str(180 * 2**30), total=str(192 * 2**30), level="auto"):
    """An AMD machine without amd-smi metric and rocm-smi: amd-smi process plus amdgpu sysfs."""
    device = "/sys/class/drm/card1/device"
    files = {"/sys/class/drm": {"path": "/sys/class/drm", "exists": True, "entries": ["card1", "renderD128"]},
             f"{device}/uevent": {"path": f"{device}/uevent", "exists": True,
                                  "content": "DRIVER=amdgpu\nPCI_ID=1002:74A1\nPCI_SLOT_NAME=0000:0c:00.0\n"}}
    for name, value in (("gpu_busy_percent", busy), ("mem_info_vram_used", used), ("mem_info_vram_total", total),
                        ("power_dpm_force_performance_level", level)):
        files[f"{device}/{name}"] = {"path": f"{device}/{name}", "exists": True, "content": value + "\n"}
    return {"commands": {"nvidia-smi-query-gpu": command(["nvidia-smi"], "", error="not found"),
                         "amd-smi-metric-json": command(["amd-smi"], "", returncode=1),
                         "amd-smi-process-json": command(["amd-smi", "process", "--json"], process_text),
                         "rocm-smi-live-json": command(["rocm-smi"], "", error="not found")},
            "files": files, "probes": {"gpu.live.self": {"pid": DOCTOR}}}


MI300X_PROCESS = (FIXTURES / "amd-smi" / "linux-mi300x-process-text-name-na-rocm6.4.0.txt").read_text()


def test_amd_process_with_a_hidden_name_on_a_busy_gpu():
    run_case(Case(check="gpu-other-process", observations=amd(MI300X_PROCESS), expect={"gpu-other-process:0": "warn"},
                  text=["pid 2266127 (name not visible from here", "97% busy"]))
    run_case(Case(check="gpu-memory-held", observations=amd(MI300X_PROCESS), expect={"gpu-memory-held:0": "fail"},
                  text="held by no process listed here"))


def test_amd_forced_performance_level():
    run_case(Case(check="gpu-perf-level-forced", observations=amd(MI300X_PROCESS, level="low"),
                  expect={"gpu-perf-level-forced:0": "warn"}, text="forced to low"))
    run_case(Case(check="gpu-perf-level-forced", observations=amd(MI300X_PROCESS, level="high"),
                  expect={"gpu-perf-level-forced:0": "info"}))
    run_case(Case(check="gpu-perf-level-forced", observations=amd(MI300X_PROCESS), expect={"gpu-perf-level-forced": "ok"}))


def test_no_tool_at_all_skips_every_gpu_state_check_saying_why():
    observations = {"commands": {"nvidia-smi-query-gpu": command(["nvidia-smi"], "", error="not found")}}
    (finding,) = run_case(Case(check="gpu-memory-held", observations=observations, expect={"gpu-memory-held": "skip"}))
    assert "nvidia-smi not found on PATH" in finding.message
