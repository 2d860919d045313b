"""The layer probes run the real commands through the runner (fake mokutil, dkms, modinfo, dmesg and ldd on PATH
printing recorded outputs) and record what they read, so the interpreters see the same as on a live machine."""

import os
import sys

from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret
from rocm_doctor.probes import kernel_driver, kernel_log, os_layer, package_repos
from rocm_doctor.probes._base import ProbeContext, Recorder


def test_probes_record_commands_and_files(fake_bin, monkeypatch):
    fake_bin.add_output("mokutil", "mokutil/sb-state-enabled.txt")
    fake_bin.add_output("dkms", "dkms/deepin25-two-kernels-nvidia-installed.txt")
    fake_bin.add_output("modinfo", "modinfo/ubuntu18.04-kernel-4.15-rock-dkms-19.10-updates-dkms-excerpt.txt")
    fake_bin.add_output("dmesg", "dmesg/ubuntu19.10-2x-radeonvii-vega20-ta-bin-missing-harmless.txt")
    fake_bin.add_output("journalctl", "journalctl/debian-unprivileged-hint-not-seeing-system-messages-no-entries.txt")
    fake_bin.add_output("ldd", "ldd/fedora-22-gnu-libc-2.21.txt")
    monkeypatch.setenv("PATH", f"{fake_bin.path}{os.pathsep}{os.environ.get('PATH', '')}")
    observations = Observations(platform={"os": "linux", "release": "4.15.0-43-generic"})
    recorder = Recorder(observations, ProbeContext(python=sys.executable, python_reason="test", platform_os="linux"))
    kernel_driver.collect(recorder)
    kernel_log.collect(recorder)
    os_layer.collect(recorder)
    package_repos.collect(recorder)
    assert observations.command("mokutil-sb-state").stdout == "SecureBoot enabled\n"
    assert observations.command("dmesg-kernel").argv == ["dmesg"]  # the journal showed no kernel line
    assert all(observations.file(d) is not None for d in kernel_driver.MODPROBE_DIRS + kernel_driver.FIRMWARE_DIRS)
    assert observations.file("/proc/1/cgroup") is not None and observations.file("/.dockerenv") is not None
    assert observations.file("/etc/yum.repos.d") is not None and observations.file("/opt") is not None
    facts = interpret(observations)
    assert facts["linux.secure_boot"]["enforcing"] and facts["linux.amdgpu_modinfo"]["origin"] == "dkms"
    assert facts["linux.dkms_amdgpu"] == [] and facts["os.glibc"]["version"] == "2.21"
    assert facts["linux.kernel_log"]["firmware_missing"] == ["amdgpu/vega20_ta.bin"]


def test_probe_platforms():
    assert kernel_driver.PLATFORMS == ("linux",) and os_layer.PLATFORMS == package_repos.PLATFORMS == ("linux", "wsl")
