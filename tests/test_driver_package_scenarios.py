"""The driver and package checks end to end: replayed snapshots built from the real fixtures, each with the cause
that comes first and its plan; the healthy machines raise nothing from these checks."""

import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
CHECKS = {"amdgpu-driver-rocm-mismatch", "amdgpu-firmware-known-bad", "rocm-packages-mixed",
          "rocm-install-incomplete", "rocm-opt-link"}

# snapshot, {observation path: fixture it holds verbatim}, first root cause, symptoms it explains, its plan (argv)
SCENARIOS = [
    ("linux-amdgpu-30.20-dkms-driver-under-rocm6.0-userspace",
     {"commands/dkms-status": "dkms/ubuntu25.10-rocm7.1.1-amdgpu-6.16.6-installed-for-two-kernels.txt",
      "commands/hipconfig-version": "hipconfig/linux-rocm6.0-hipconfig-v-n-version.txt"},
     "amdgpu-driver-rocm-mismatch", {"rocm-device-access"}, [["sudo", "amdgpu-install", "--usecase=dkms"]]),
    ("linux-ubuntu22.04-rocm5.7.1-with-ubuntu-libhsa-runtime64-5.0",
     {"commands/dpkg-rocm-packages": "dpkg/ubuntu22.04-rocm5.7.1-plus-ubuntu-libhsa-runtime64-5.0-dpkg-l-grep-rocm.txt"},
     "rocm-packages-mixed", set(), [["sudo", "apt-get", "remove", "libhsa-runtime-dev", "libhsa-runtime64-1"]]),
    ("linux-ubuntu24.04-amdgpu-dkms-half-configured-after-failed-build", {},
     "rocm-install-incomplete", {"rocm-device-access"},
     [["sudo", "dpkg", "--configure", "-a"], ["sudo", "apt-get", "-f", "install"]]),
    ("linux-ubuntu24.04-opt-rocm-links-to-removed-rocm-6.1.3", {},
     "rocm-opt-link", set(), [["sudo", "update-alternatives", "--config", "rocm"]]),
]
HEALTHY = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy", "linux-2x-h200-cuda-torch2.11",
           "linux-h200-live-state-idle-healthy"]



@pytest.mark.parametrize("name,verbatim,first,symptoms,plan", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_the_cause_comes_first_with_its_plan(replayed, name, verbatim, first, symptoms, plan):
    snapshot = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
    for where, fixture in verbatim.items():
        kind, _, key = where.partition("/")
        assert snapshot["observations"][kind][key]["stdout"] == (FIXTURES / fixture).read_text(encoding="utf-8")
    document = replayed(name)
    roots = document["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == first, [(r["finding"], r["status"]) for r in roots]
    assert symptoms <= set(roots[0]["symptoms"])
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert [steps[i].get("argv") for i in roots[0]["plan"]] == plan


def test_mismatch_names_both_versions(replayed):
    document = replayed("linux-amdgpu-30.20-dkms-driver-under-rocm6.0-userspace")
    finding = next(f for f in document["findings"] if f["id"] == "amdgpu-driver-rocm-mismatch")
    assert "6.16.6 (AMD GPU Driver 30.20.x)" in finding["message"] and "ROCm is 6.0" in finding["message"]
    assert "dkms status: amdgpu/6.16.6-2255209.24.04, 6.17.0-8-generic" in " ".join(finding["evidence"])


@pytest.mark.parametrize("name", HEALTHY)
def test_no_false_alarm_on_healthy_machines(replayed, name):
    alarms = [(f["id"], f["status"]) for f in replayed(name)["findings"]
              if f["check"] in CHECKS and f["status"] in ("warn", "fail", "error")]
    assert alarms == []
