"""The kernel log end to end: replayed snapshots whose kernel log holds real lines (tests/fixtures/dmesg), each with
the cause that comes first, what it explains and its plan; old snapshots that hold only `dmesg --level=err,warn`
still replay; the healthy machines raise nothing from these checks."""

import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
KERNEL_LOG_CHECKS = {"kernel-log-unreadable", "amdgpu-ring-timeout", "amdgpu-page-fault", "amdgpu-gpu-reset",
                     "amdgpu-init-failed", "nvidia-xid"}
HEALTHY = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy", "linux-2x-h200-cuda-torch2.11",
           "linux-h200-live-state-idle-healthy"]

# snapshot, {observation: fixture it holds verbatim}, first root cause, symptoms it explains (some), plan (step kinds)
SCENARIOS = [
    ("linux-2x-mi100-ring-sdma0-timeout-gpu-reset-kernel-hung",
     {"commands/journalctl-kernel": "dmesg/ryzen5700g-rocm5.7-opencl-ring-sdma0-timeout-mode2-reset-succeeded-"
                                    "excerpt.txt"},
     "amdgpu-ring-timeout", {"gpu-kernel-hang", "amdgpu-gpu-reset"}, []),
    ("linux-2x-mi100-gfxhub-page-fault-memory-access-fault-log",
     {"commands/journalctl-kernel": "dmesg/gfx1100-pytorch-rocm7.1-gfxhub-page-fault-python-journal-excerpt.txt",
      "probes/user.log": "errors/linux-gfx1100-pytorch-rocm7.1-memory-access-fault-by-gpu-node.txt"},
     "amdgpu-page-fault", {"known-error-signatures:hip-memory-access-fault"}, []),
    ("linux-h200-xid-79-fell-off-the-bus-torch-sees-no-gpu",
     {"commands/journalctl-kernel": "dmesg/arch-rtx5080-xid-79-fallen-off-the-bus-then-xid-154-recovery-action.txt"},
     "nvidia-xid:79", {"torch-cuda-unavailable", "nvidia-xid:154"}, ["advice"]),
    ("linux-h200-xid-31-mmu-fault-illegal-memory-access",  # reproduced on a real H200 (docs/measurements.md)
     {"commands/dmesg-kernel": "dmesg/h200-driver580-xid-31-mmu-fault-from-an-illegal-store.txt",
      "probes/user.log": "errors/linux-h200-triton-store-out-of-range-illegal-memory-access-torch2.11-cu130.txt"},
     "nvidia-xid:31", {"known-error-signatures:cuda-illegal-memory-access"}, []),
]



def observed(snapshot, where):
    kind, _, key = where.partition("/")
    record = snapshot["observations"][kind][key]
    return record["stdout"] if kind == "commands" else record["text"]


@pytest.mark.parametrize("name,verbatim,first,symptoms,plan", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_the_kernel_log_cause_comes_first(replayed, name, verbatim, first, symptoms, plan):
    snapshot = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
    for where, fixture in verbatim.items():
        assert observed(snapshot, where) == (FIXTURES / fixture).read_text(encoding="utf-8"), where
    document = replayed(name)
    roots = document["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == first, [(r["finding"], r["status"]) for r in roots]
    assert symptoms <= set(roots[0]["symptoms"])
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert [steps[i]["kind"] for i in roots[0]["plan"]] == plan


def test_the_runtime_message_confirms_the_page_fault(replayed):
    document = replayed("linux-2x-mi100-gfxhub-page-fault-memory-access-fault-log")
    fault = next(f for f in document["findings"] if f["id"] == "amdgpu-page-fault")
    assert fault["confirmed_by"][0]["kind"] == "error-message"
    assert "Memory access fault by GPU node-1" in fault["confirmed_by"][0]["detail"]
    assert "python (pid 91762)" in fault["message"]


def test_xid_79_says_what_to_do_first_and_records_what_was_read(replayed):
    document = replayed("linux-h200-xid-79-fell-off-the-bus-torch-sees-no-gpu")
    lost = next(f for f in document["findings"] if f["id"] == "nvidia-xid:79")
    assert lost["severity"] == "critical" and "Power the machine off completely" in lost["fix"][0]["text"]
    assert "torch-cuda-unavailable" in lost["explains"]
    read = next(f for f in document["findings"] if f["id"] == "kernel-log-unreadable")
    assert read["status"] == "ok" and read["data"]["source"] == "journalctl-kernel"
    assert read["data"]["command"].startswith("journalctl -k -b") and read["data"]["messages"] == 6


def test_a_recovery_action_is_explained_only_by_a_failing_xid_on_the_same_gpu():
    from rocm_doctor.checks.nvidia_xid import _recovery_after
    from rocm_doctor.engine.model import Finding, Status

    def xid(code, status, devices):
        return Finding(id=f"nvidia-xid:{code}", check="nvidia-xid", title="", status=status, message="",
                       data={"code": code, "devices": devices})

    recovery = xid(154, Status.WARN, ["0000:01:00"])
    assert _recovery_after(xid(79, Status.FAIL, ["0000:01:00"]), recovery)
    assert not _recovery_after(xid(79, Status.FAIL, ["0000:41:00"]), recovery)  # another GPU's loss
    assert not _recovery_after(xid(13, Status.WARN, ["0000:01:00"]), recovery)  # a warning breaks nothing
    assert not _recovery_after(xid(79, Status.FAIL, ["0000:01:00"]), xid(31, Status.FAIL, ["0000:01:00"]))


def test_an_old_snapshot_with_only_errors_and_warnings_still_replays(replayed):
    """The Strix Halo snapshot holds `dmesg --level=err,warn` as dmesg-warnings: its cause stays first, the init
    failure the log shows folds under it, and resets (info level) are said not to be in such a log."""
    document = replayed("linux-ubuntu24.04-strixhalo-gfx1151-firmware-missing-fatal-gpu-init")
    roots = document["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == "amdgpu-firmware-missing:0" and "amdgpu-init-failed" in roots[0]["symptoms"]
    by_id = {f["id"]: f for f in document["findings"]}
    assert by_id["amdgpu-gpu-reset"]["status"] == "skip" and "info level" in by_id["amdgpu-gpu-reset"]["message"]
    assert "errors and warnings only" in by_id["kernel-log-unreadable"]["message"]


@pytest.mark.parametrize("name", HEALTHY)
def test_no_false_alarm_on_healthy_machines(replayed, name):
    alarms = [(f["id"], f["status"]) for f in replayed(name)["findings"]
              if f["check"] in KERNEL_LOG_CHECKS and f["status"] in ("warn", "fail", "error")]
    assert alarms == []
