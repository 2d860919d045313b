"""The layer under ROCm end to end: replayed snapshots built from the real fixtures, each with the cause that
comes first, what it explains, and its plan; the healthy machines raise nothing from these checks."""

import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
LAYER_CHECKS = {"os-support-matrix", "wsl-distro-support", "secure-boot-blocks-amdgpu", "amdgpu-dkms-not-built",
                "amdgpu-blocked", "amdgpu-firmware-missing", "container-gpu-devices", "rocm-repos-mixed"}

# snapshot, {observation path: fixture it holds verbatim}, first root cause, its symptoms (some), its plan (argv)
SCENARIOS = [
    ("linux-ubuntu24.04-rx7900xtx-secure-boot-refuses-dkms-amdgpu",
     {"commands/mokutil-sb-state": "mokutil/sb-state-enabled.txt",
      "commands/rocminfo": "rocminfo/linux-rock-module-not-loaded-rocminfo-issue-42.txt",
      "files//etc/os-release": "os-release/ubuntu-24.04.3-noble.txt"},
     "secure-boot-blocks-amdgpu", {"rocm-kernel-driver", "torch-cuda-unavailable"},
     [["sudo", "mokutil", "--import", "/var/lib/shim-signed/mok/MOK.der"], None]),
    ("linux-ubuntu24.04-rx7900xtx-amdgpu-blacklisted-in-modprobe-d",
     {"files//etc/modprobe.d/blacklist-amdgpu.conf": "modprobe.d/blacklist-amdgpu.conf",
      "commands/mokutil-sb-state": "mokutil/sb-state-disabled-setup-mode.txt"},
     "amdgpu-blocked", {"rocm-kernel-driver", "torch-cuda-unavailable"},
     [["sudo", "sed", "-i", "-E", r"s/^\s*(blacklist|install)\s+amdgpu\b/# &/", "/etc/modprobe.d/blacklist-amdgpu.conf"],
      ["sudo", "update-initramfs", "-u"]]),
    ("linux-ubuntu24.04-strixhalo-gfx1151-firmware-missing-fatal-gpu-init",
     {"commands/dmesg-warnings": "dmesg/ubuntu24.04-strixhalo-gfx1151-fatal-error-during-gpu-init-no-gc-firmware.txt"},
     "amdgpu-firmware-missing:0", {"rocm-device-access", "torch-cuda-unavailable"},
     [["sudo", "apt-get", "install", "linux-firmware"], ["sudo", "update-initramfs", "-u"]]),
    ("linux-ubuntu24.04-rx7900xtx-dkms-tree-lost-its-dkms-conf",
     {"commands/dkms-status": "dkms/ubuntu22.04-stale-amdgpu-6.7.0-tree-dkms-conf-missing.txt"},
     "amdgpu-dkms-not-built", {"rocm-kernel-driver", "torch-cuda-unavailable"},
     [["sudo", "rm", "-r", "/var/lib/dkms/amdgpu/6.7.0-1787201.22.04"],
      ["sudo", "apt-get", "install", "--reinstall", "amdgpu-dkms"]]),
    ("linux-docker-container-rx7900xtx-started-without-dev-kfd",
     {"files//proc/1/cgroup": "cgroup/docker-cgroup-v1-proc-1-cgroup.txt"},
     "container-gpu-devices", {"rocm-device-access", "torch-cuda-unavailable"}, [None]),
    ("linux-ubuntu26.04-rocm7.2-not-on-the-os-list-dkms-not-built",
     {"files//etc/os-release": "os-release/ubuntu-26.04.txt"},
     "os-support-matrix:distro", {"amdgpu-dkms-not-built", "rocm-kernel-driver"}, []),
    ("linux-rhel9.6-mi300x-rocm-repo-names-7.1-installed-7.2",
     {"files//etc/yum.repos.d/rocm.repo": "repos/rockylinux9.6-rocm.repo-rocm-7.1-and-graphics-7.1.repo",
      "files//etc/os-release": "os-release/rhel-9.6-plow.txt"},
     "rocm-repos-mixed", set(), []),
]
HEALTHY = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy", "linux-2x-h200-cuda-torch2.11",
           "linux-h200-live-state-idle-healthy"]



def observed(snapshot: dict, where: str) -> str:
    kind, _, key = where.partition("/")
    record = snapshot["observations"][kind][key]
    return (record["stdout"] or record["stderr"]) if kind == "commands" else record["content"]


@pytest.mark.parametrize("name,verbatim,first,symptoms,plan", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_the_layer_cause_comes_first_with_its_plan(replayed, name, verbatim, first, symptoms, plan):
    snapshot = json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))
    for where, fixture in verbatim.items():
        assert observed(snapshot, where) == (FIXTURES / fixture).read_text(encoding="utf-8"), where
    document = replayed(name)
    roots = document["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == first, [(r["finding"], r["status"]) for r in roots]
    assert symptoms <= set(roots[0]["symptoms"])
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert [steps[i].get("argv") for i in roots[0]["plan"]] == plan


def test_secure_boot_plan_is_the_same_for_fix_dry_run(doctor, replayed):
    name = "linux-ubuntu24.04-rx7900xtx-secure-boot-refuses-dkms-amdgpu"
    document = replayed(name)
    dry = doctor("fix", "--dry-run", "--json", "--from", str(SNAPSHOTS / f"{name}.json"))
    assert [s["id"] for s in json.loads(dry.stdout)["steps"]] == [i["id"] for i in document["diagnosis"]["plan"]]
    (mokutil,) = [i["step"] for i in document["diagnosis"]["plan"] if i["step"]["kind"] == "run_command"]
    assert mokutil["apply"] == "print-only" and mokutil["after"] == "reboot"
    finding = next(f for f in document["findings"] if f["id"] == "secure-boot-blocks-amdgpu")
    assert any("signer: DKMS module signing key" in e for e in finding["evidence"])
    assert any(a["workaround"] for a in finding["alternatives"])


def test_unsupported_os_says_which_versions_to_use(replayed):
    document = replayed("linux-ubuntu26.04-rocm7.2-not-on-the-os-list-dkms-not-built")
    finding = next(f for f in document["findings"] if f["id"] == "os-support-matrix:distro")
    assert finding["status"] == "warn" and "ROCm 7.2 supports ubuntu 24.04, 22.04" in finding["remediation"][0]
    dkms = next(f for f in document["findings"] if f["id"] == "amdgpu-dkms-not-built")
    assert "os-support-matrix:distro" in dkms["caused_by"]


@pytest.mark.parametrize("name", HEALTHY)
def test_no_false_alarm_on_healthy_machines(replayed, name):
    alarms = [(f["id"], f["status"]) for f in replayed(name)["findings"]
              if f["check"] in LAYER_CHECKS and f["status"] in ("warn", "fail", "error")]
    assert alarms == []
