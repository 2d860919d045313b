"""The layer interpreters on recorded real outputs: os-release, ldd and container marks become os.* facts;
mokutil, dkms, modinfo, modprobe.d, the firmware folders and dmesg become linux.* facts."""

from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.observations import FileRecord, Observations
from rocm_doctor.interpret import interpret


def observations(fixture_text, os="linux", commands=None, files=None, platform=None, env=None):
    obs = Observations(platform=dict({"os": os, "release": "6.8.0-45-generic"}, **(platform or {})), env=env or {})
    for key, (argv, fixture, code) in (commands or {}).items():
        obs.add_command(key, CommandResult(argv=argv, returncode=code, stdout=fixture_text(fixture) if fixture else ""))
    for path, spec in (files or {}).items():
        record = FileRecord(path=path, exists=spec is not None)
        if isinstance(spec, list):
            record.entries = spec
        elif isinstance(spec, str):
            record.content = fixture_text(spec) if spec.endswith((".txt", ".conf", ".list", ".repo")) else spec
        obs.add_file(record)
    return obs


def test_os_facts_from_real_files(fixture_text):
    obs = observations(fixture_text, commands={"ldd-version": (["ldd", "--version"], "ldd/gentoo-glibc-2.43-r2.txt", 0)},
                       files={"/etc/os-release": "os-release/ubuntu-24.04.3-noble.txt", "/.dockerenv": "",
                              "/run/.containerenv": None,
                              "/proc/1/cgroup": "cgroup/docker-cgroup-v1-proc-1-cgroup.txt"})
    facts = interpret(obs)
    assert facts["os.release"]["point_release"] == "24.04.3" and facts["os.release"]["source"] == "/etc/os-release"
    assert facts["os.kernel"]["series"] == "6.8" and facts["os.kernel"]["flavour"] == "generic"
    assert facts["os.glibc"]["version"] == "2.43"
    assert facts["os.container"] == {"in_container": True, "engine": "docker", "evidence": [
        "/.dockerenv exists (docker)", "/proc/1/cgroup names docker"]}


def test_os_facts_fall_back_and_say_why(fixture_text):
    old = interpret(Observations(platform={"os": "linux", "release": "6.8.0-45-generic", "os_release": {
        "ID": "ubuntu", "VERSION_ID": "24.04", "PRETTY_NAME": "Ubuntu 24.04.3 LTS"}}))
    assert old["os.release"]["id"] == "ubuntu" and old.why_missing("os.glibc") == "ldd --version was not run"
    assert old.why_missing("os.container") == "the container marks were not looked at"
    host = interpret(observations(fixture_text, files={"/etc/os-release": None, "/usr/lib/os-release":
                                                       "os-release/fedora-42.txt", "/.dockerenv": None,
                                                       "/proc/1/cgroup": "0::/init.scope\n"}))
    assert host["os.release"]["id"] == "fedora" and host["os.container"]["in_container"] is False
    podman = interpret(observations(fixture_text, files={"/.dockerenv": None, "/run/.containerenv": ""},
                                    env={"container": "podman"}))
    assert podman["os.container"]["engine"] == "podman" and len(podman["os.container"]["evidence"]) == 2
    windows = interpret(Observations(platform={"os": "windows"}))
    assert windows.why_missing("os.release") == "not collected on windows"


def test_driver_facts_from_real_outputs(fixture_text):
    obs = observations(fixture_text, commands={
        "mokutil-sb-state": (["mokutil", "--sb-state"], "mokutil/sb-state-enabled.txt", 0),
        "dkms-status": (["dkms", "status"], "dkms/centos7-elrepo-amdgpu-added-and-installed-original-module-exists.txt", 0),
        "modinfo-amdgpu": (["modinfo", "amdgpu"], "modinfo/centos7-elrepo-5.0.8-amdgpu-extra-dkms-excerpt.txt", 0),
        "dmesg-warnings": (["dmesg", "--level=err,warn"], "dmesg/rpi5-w7700-gfx1101-sdma-6.0.3-firmware-missing-excerpt.txt", 0)},
        files={"/etc/modprobe.d": ["blacklist-amdgpu.conf", "README"],
               "/etc/modprobe.d/blacklist-amdgpu.conf": "modprobe.d/blacklist-amdgpu.conf",
               "/usr/lib/modprobe.d": ["optimus-manager.conf"],
               "/usr/lib/modprobe.d/optimus-manager.conf": "modprobe.d/usr-lib-optimus-manager.conf",
               "/proc/cmdline": "BOOT_IMAGE=/vmlinuz ro quiet nomodeset\n",
               "/lib/firmware/amdgpu": ["gc_11_0_3_pfp.bin.zst", "sdma_6_0_3.bin.zst"],
               "/lib/firmware/updates/amdgpu": None})
    facts = interpret(obs)
    assert facts["linux.secure_boot"]["enforcing"] is True
    assert [r["state"] for r in facts["linux.dkms_amdgpu"]] == ["added", "installed"]
    assert facts["linux.amdgpu_modinfo"]["origin"] == "dkms" and facts["linux.amdgpu_modinfo"]["found"]
    blocks = facts["linux.amdgpu_blocks"]
    assert [(b["file"], b["line_no"]) for b in blocks["modprobe"]] == [("/etc/modprobe.d/blacklist-amdgpu.conf", 1)]
    assert blocks["cmdline"] == ["nomodeset"]
    assert facts["linux.firmware"]["names"] == ["gc_11_0_3_pfp.bin.zst", "sdma_6_0_3.bin.zst"]
    assert facts["linux.firmware"]["folders"] == {"/lib/firmware/updates/amdgpu": None, "/lib/firmware/amdgpu": 2}
    assert facts["linux.kernel_log"]["init_failed"] is True


def test_driver_facts_missing_with_reasons(fixture_text):
    obs = Observations(platform={"os": "linux", "release": "6.8.0-45-generic"})
    obs.add_command("mokutil-sb-state", CommandResult(argv=["mokutil", "--sb-state"], error="not found"))
    obs.add_command("dmesg-warnings", CommandResult(argv=["dmesg"], returncode=1,
                                                    stderr="dmesg: read kernel buffer failed: Operation not permitted"))
    obs.add_command("modinfo-amdgpu", CommandResult(argv=["modinfo", "amdgpu"], returncode=1,
                                                    stderr="modinfo: ERROR: Module amdgpu not found.\n"))
    facts = interpret(obs)
    assert "not found" in facts.why_missing("linux.secure_boot")
    assert "Operation not permitted" in facts.why_missing("linux.kernel_log")
    assert facts["linux.amdgpu_modinfo"] == {"found": False, "error": "modinfo: ERROR: Module amdgpu not found."}
    assert facts.why_missing("linux.firmware") == "the firmware folders were not listed"
    wsl = interpret(Observations(platform={"os": "wsl", "release": "5.15.167.4-microsoft-standard-WSL2"}))
    assert wsl.why_missing("linux.secure_boot") == "not collected on wsl" and wsl["os.kernel"]["wsl"]


def test_repo_facts_from_real_files(fixture_text):
    obs = observations(fixture_text, files={
        "/etc/apt/sources.list.d": ["rocm.list", "ubuntu.sources"],
        "/etc/apt/sources.list.d/rocm.list": "repos/ubuntu16.04-rocm.list-rocm-3.5.1.list",
        "/etc/apt/sources.list.d/ubuntu.sources": "Types: deb\nURIs: http://archive.ubuntu.com/ubuntu\n",
        "/etc/yum.repos.d": None, "/opt": ["containerd", "rocm", "rocm-3.5.1", "rocm-3.3.0"]})
    repos = interpret(obs)["rocm.repos"]
    assert [(e["file"], e["release"]) for e in repos["entries"]] == [("/etc/apt/sources.list.d/rocm.list", "3.5.1")]
    assert repos["opt_rocm"] == ["rocm-3.3.0", "rocm-3.5.1"]
    assert interpret(Observations(platform={"os": "linux"})).why_missing("rocm.repos") == (
        "the package repository folders were not read")
