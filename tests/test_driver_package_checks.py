"""The driver and package checks as facts in, findings out (the states the fix cases do not cover), the
interpreters on recorded real outputs, and the probe running its commands through the runner."""

import json
import os
import sys
from pathlib import Path

import pytest

from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.observations import FileRecord, Observations
from rocm_doctor.interpret import interpret
from rocm_doctor.probes import rocm_packages
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.testing import Case, run_case

FIX = json.loads((Path(__file__).parent / "cases" / "driver-fix-cases.json").read_text())["cases"]
FIXTURES = Path(__file__).parent / "fixtures"
MISMATCH, MES, MIXED = "driver-30.20-under-rocm-6.1", "strix-halo-mes-0x83", "two-releases-upgrade-the-older"
DANGLING, OTHER = "opt-rocm-dangling", "opt-rocm-points-at-another-release"
AFTER_LINK = FIX["opt-rocm-dangling"]["after"]["run_command"]


def facts_of(name, **changes):
    facts = dict(FIX[name]["facts"], **changes)
    return {k: v for k, v in facts.items() if v is not None}


def driver(**changes):
    return dict(FIX[MISMATCH]["facts"]["linux.amdgpu_driver"], **changes)


def hip(text):
    return {"text": text, "source": "hipconfig --version"}


FEDORA = dict(FIX[MISMATCH]["facts"]["os.release"], id="fedora", id_like=[], version_id="43", point_release="43")
APU = [{"index": 0, "gfx": "gfx1151", "igpu": True, "node": 1, "name": "AMD Radeon 8060S", "uuid": None,
        "device_id": None, "sources": {"kfd": "gfx1151"}}]
INBOX = {"kind": "inbox", "module_version": None, "module_source": "", "package": None, "package_version": None,
         "package_release": None, "package_status": None, "kernel": "6.17.0-1011-oem", "loaded": True}
ROWS = FIX[MIXED]["facts"]["rocm.packages"]["rows"]


def pk(rows, manager="dpkg"):
    return {"manager": manager, "rows": rows}


CASES = [
    Case(name="driver-supports-the-release", check="amdgpu-driver-rocm-mismatch",
         facts=facts_of(MISMATCH, **{"hip.version": hip("7.1.25414")}),
         expect={"amdgpu-driver-rocm-mismatch": "ok"}, text="AMD GPU Driver 30.20.x) supports ROCm 7.1"),
    Case(name="module-version-alone-names-the-line", check="amdgpu-driver-rocm-mismatch",
         facts=facts_of(MISMATCH, **{"linux.amdgpu_driver": driver(package=None, package_version=None,
                                                                     package_release=None, module_version="6.12.12"),
                                     "hip.version": hip("6.4.43482")}),
         expect={"amdgpu-driver-rocm-mismatch": "ok"}, text="the amdgpu driver 6.12.12 (AMD GPU Driver 6.4.x)"),
    Case(name="driver-not-in-the-table", check="amdgpu-driver-rocm-mismatch",
         facts=facts_of(MISMATCH, **{"linux.amdgpu_driver": driver(module_version="6.19.0", package_release="31.20.0")}),
         expect={"amdgpu-driver-rocm-mismatch": "info"}, text="could not be told"),
    Case(name="rocm-release-unknown", check="amdgpu-driver-rocm-mismatch", facts=facts_of(MISMATCH, **{"hip.version": None}),
         expect={"amdgpu-driver-rocm-mismatch": "skip"}),
    Case(name="which-driver-unknown", check="amdgpu-driver-rocm-mismatch",
         facts=facts_of(MISMATCH, **{"linux.amdgpu_driver": dict(INBOX, kind=None)}),
         expect={"amdgpu-driver-rocm-mismatch": "skip"}),
    Case(name="inbox-driver-on-a-discrete-gpu", check="amdgpu-driver-rocm-mismatch",
         facts=facts_of(MISMATCH, **{"linux.amdgpu_driver": INBOX, "hip.version": hip("7.2.53211")}),
         expect={"amdgpu-driver-rocm-mismatch": "info"},
         text=["AMD GPU Driver 31.50.x, 31.40.x, 30.30.x", "not an AMD support option today", "could not be told"]),
    Case(name="inbox-driver-documented-for-ryzen-apus", check="amdgpu-driver-rocm-mismatch",
         facts=facts_of(MISMATCH, **{"linux.amdgpu_driver": INBOX, "hip.version": hip("7.12.0"), "gpu.inventory": APU}),
         expect={"amdgpu-driver-rocm-mismatch": "ok"}, text="Ryzen APUs with ROCm 7.12 on ubuntu 24.04"),
    Case(name="inbox-driver-on-an-unlisted-distribution", check="amdgpu-driver-rocm-mismatch",
         facts=facts_of(MISMATCH, **{"linux.amdgpu_driver": INBOX, "hip.version": hip("7.12.0"), "gpu.inventory": APU,
                                     "os.release": FEDORA}),
         expect={"amdgpu-driver-rocm-mismatch": "info"}, text="ubuntu 24.04 only"),
    Case(name="no-amd-gpu", check="amdgpu-driver-rocm-mismatch", facts=facts_of(MISMATCH, **{"gpu.pci": []}),
         expect={"amdgpu-driver-rocm-mismatch": "skip"}),
    Case(name="mes-0x80-is-good", check="amdgpu-firmware-known-bad",
         facts=facts_of(MES, **{"gpu.firmware": FIX[MES]["after"]["advice"]["gpu.firmware"]}),
         expect={"amdgpu-firmware-known-bad:0": "ok"}, text="MES 0x00000080, none of the versions known to be bad"),
    Case(name="amd-smi-shows-no-mes", check="amdgpu-firmware-known-bad", facts=facts_of(MES, **{"gpu.firmware": [
        {"index": 0, "source": "amd-smi firmware", "unsupported": [],
         "versions": {"CP_MEC1": "166", "RLC": "65", "PM": "04.85.103.184"}}]}),
         expect={"amdgpu-firmware-known-bad:0": "info"},
         text=["amd-smi firmware does not show the MES firmware", "could not be told"]),
    Case(name="firmware-of-a-gpu-without-known-issues", check="amdgpu-firmware-known-bad",
         facts=facts_of(MES, **{"gpu.inventory": [dict(APU[0], gfx="gfx1100", igpu=False, sources={"kfd": "gfx1100"})]}),
         expect={"amdgpu-firmware-known-bad:0": "info"}, text="knows no bad version for gfx1100"),
    Case(name="one-release", check="rocm-packages-mixed", facts=facts_of(MIXED, **{"rocm.packages": pk(ROWS[:4])}),
         expect={"rocm-packages-mixed": "ok"}, text="3 ROCm packages, all of release 6.2.0"),
    Case(name="versioned-multi-install", check="rocm-packages-mixed", facts=facts_of(MIXED, **{"rocm.packages": pk([
        dict(ROWS[0], name="rocm-core6.2.0", versioned="6.2.0"), dict(ROWS[0], name="rocm-core6.3.0", versioned="6.3.0",
                                                                      release="6.3.0")])}),
         expect={"rocm-packages-mixed": "info"}, text="ROCm 6.2.0, 6.3.0 are installed as versioned packages"),
    Case(name="versioned-beside-non-versioned", check="rocm-packages-mixed", facts=facts_of(MIXED, **{"rocm.packages": pk(
        ROWS[:3] + [dict(ROWS[0], name="rocm-core6.3.0", versioned="6.3.0", release="6.3.0")])}),
         expect={"rocm-packages-mixed": "info"}, text="AMD recommends not to combine"),
    Case(name="only-driver-packages", check="rocm-packages-mixed", facts=facts_of(MIXED, **{"rocm.packages": pk(ROWS[3:4])}),
         expect={"rocm-packages-mixed": "skip"}),
    Case(name="rpm-has-no-unfinished-state", check="rocm-install-incomplete",
         facts=facts_of(MIXED, **{"rocm.packages": pk(ROWS, "rpm")}), expect={"rocm-install-incomplete": "skip"}),
    Case(name="removed-packages-keep-config", check="rocm-install-incomplete",
         facts=facts_of(MIXED, **{"rocm.packages": pk(ROWS[:3] + [dict(ROWS[4], status="rc")])}),
         expect={"rocm-install-incomplete": "info"}, text="harmless"),
    Case(name="everything-installed", check="rocm-install-incomplete", facts=facts_of(MIXED),
         expect={"rocm-install-incomplete": "ok"}),
    Case(name="link-to-the-installed-release", check="rocm-opt-link", facts=facts_of(DANGLING, **AFTER_LINK),
         expect={"rocm-opt-link": "ok"}, text="/opt/rocm → /opt/rocm-6.2.0, the installed ROCm 6.2.0"),
    Case(name="version-file-of-another-release", check="rocm-opt-link", facts=facts_of(
        DANGLING, **dict(AFTER_LINK, **{"rocm.paths": dict(AFTER_LINK["rocm.paths"], installs=[dict(
            AFTER_LINK["rocm.paths"]["installs"][0], version="6.1.0-82")])})),
         expect={"rocm-opt-link": "warn"}, text=".info/version says 6.1.0-82"),
    Case(name="ls-listed-nothing", check="rocm-opt-link", facts=facts_of(DANGLING, **{"rocm.opt_link": {
        "entries": {"/opt/rocm": None, "/etc/alternatives/rocm": None}, "missing": [], "lines": []}}),
         expect={"rocm-opt-link": "skip"}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_driver_and_package_checks(case):
    run_case(case)


def _argv(findings, finding_id):
    (finding,) = [f for f in findings if f.id == finding_id]
    return [step.argv() for step in finding.fix], [[s.argv() for s in a.steps] for a in finding.alternatives]


def test_the_commands_the_steps_print():
    def case(name):
        return Case(**{k: v for k, v in FIX[name].items() if k in ("check", "facts", "expect")}, name=name)
    fix, alternatives = _argv(run_case(case(MISMATCH)), "amdgpu-driver-rocm-mismatch")
    assert fix == [["sudo", "amdgpu-install", "--usecase=dkms"]] and alternatives == [[["sudo", "apt-get", "install",
                                                                                          "amdgpu-dkms"]]]
    fix, alternatives = _argv(run_case(case(MIXED)), "rocm-packages-mixed")
    assert fix == [["sudo", "apt-get", "install", "--only-upgrade", "rocprofiler-register", "hsa-rocr-dev"]]
    assert alternatives == [[["sudo", "apt-get", "remove", "rocprofiler-register", "hsa-rocr-dev"]]]
    fix, alternatives = _argv(run_case(case(DANGLING)), "rocm-opt-link")
    assert fix == [["sudo", "update-alternatives", "--config", "rocm"]]
    assert alternatives == [[["sudo", "ln", "-sfn", "/opt/rocm-6.2.0", "/opt/rocm"]]]
    fix, _ = _argv(run_case(case(OTHER)), "rocm-opt-link")
    assert fix == [["sudo", "update-alternatives", "--set", "rocm", "/opt/rocm-6.2.0"]]
    rhel = Case(check="rocm-packages-mixed", name="rhel", expect={"rocm-packages-mixed": "warn"},
                facts=dict(FIX[MIXED]["facts"], **{"rocm.packages": pk(FIX[MIXED]["facts"]["rocm.packages"]["rows"], "rpm"),
                                                   "os.release": dict(FEDORA, id="rhel", id_like=["fedora"])}))
    fix, _ = _argv(run_case(rhel), "rocm-packages-mixed")
    assert fix == [["sudo", "dnf", "upgrade", "rocprofiler-register", "hsa-rocr-dev"]]


def _observations(commands=None, files=None, release="6.17.0-8-generic"):
    obs = Observations(platform={"os": "linux", "release": release})
    for key, (argv, fixture, code) in (commands or {}).items():
        text = (FIXTURES / fixture).read_text(encoding="utf-8") if fixture.endswith(".txt") else fixture
        obs.add_command(key, CommandResult(argv=argv, returncode=code, stdout=text))
    for path, entries in (files or {}).items():
        obs.add_file(FileRecord(path=path, exists=entries is not None, entries=entries))
    return obs


def test_interpreters_on_real_outputs():
    facts = interpret(_observations(commands={
        "dpkg-rocm-packages": (["dpkg-query"], "dpkg/ubuntu22.04-rocm5.7.1-plus-ubuntu-libhsa-runtime64-5.0-dpkg-l-grep-rocm.txt", 0),
        "dkms-status": (["dkms", "status"], "dkms/ubuntu25.10-rocm7.1.1-amdgpu-6.16.6-installed-for-two-kernels.txt", 0),
        "rocm-smi-showfwinfo": (["rocm-smi", "--showfwinfo"], "rocm-smi/linux-raphael-igpu-0x164e-showfwinfo-firmware-block-excerpt.txt", 0),
        "ls-opt-rocm": (["ls", "-ld"], "lrwxrwxrwx 1 root root 22 Mar 18 01:34 /opt/rocm -> /etc/alternatives/rocm\n", 0)},
        files={"/sys/module/amdgpu": []}))
    packages = facts["rocm.packages"]
    assert packages["manager"] == "dpkg" and len(packages["rows"]) == 38
    assert {r["name"] for r in packages["rows"] if r["built_by"] == "distribution"} == {"libhsa-runtime-dev",
                                                                                       "libhsa-runtime64-1"}
    driver = facts["linux.amdgpu_driver"]
    assert (driver["kind"], driver["module_version"]) == ("dkms", "6.16.6")
    assert driver["module_source"] == "dkms status: amdgpu/6.16.6-2255209.24.04, 6.17.0-8-generic"
    assert facts["gpu.firmware"][0]["versions"]["VCN"] == "0x02118000"
    assert facts["rocm.opt_link"]["entries"]["/opt/rocm"]["target"] == "/etc/alternatives/rocm"


def test_removed_packages_of_a_real_listing_are_harmless_leftovers():
    """ROCm/ROCm#1436: rock-dkms 4.1 installed after amdgpu-pro 20.45, amdgpu-dkms removed (rc)."""
    facts = interpret(_observations(commands={"dpkg-rocm-packages": (
        ["dpkg-query"], "dpkg/ubuntu20.04-rock-dkms-4.1-plus-amdgpu-pro-20.45-dpkg-l-grep-gpu-rc-amdgpu-dkms.txt", 0)}))
    rows = {r["name"]: r for r in facts["rocm.packages"]["rows"]}
    assert (rows["amdgpu-dkms"]["status"], rows["amdgpu-dkms"]["kind"]) == ("rc", "driver")
    assert (rows["rock-dkms"]["status"], rows["rocm-dbgapi"]["release"]) == ("ii", "4.1.0")
    [finding] = run_case(Case(name="real-rc", check="rocm-install-incomplete", facts={"rocm.packages": facts["rocm.packages"]},
                              expect={"rocm-install-incomplete": "info"}, text="harmless"))
    assert finding.evidence[:2] == ["rc  amdgpu-dkms 1:5.6.20.906300-1164792", "rc  rocm-amdgpu-pro-icd 17.50-552542"]


def test_firmware_from_amd_smi_where_rocm_smi_is_missing():
    facts = interpret(_observations(commands={
        "rocm-smi-showfwinfo": (["rocm-smi", "--showfwinfo"], "", None),
        "amd-smi-firmware": (["amd-smi", "firmware"], "amd-smi/linux-rocky9.5-4x-mi300a-gfx942-firmware-amd-smi-24.7.1-rocm6.3.3.txt", 0)}))
    firmware = facts["gpu.firmware"]
    assert [g["index"] for g in firmware] == [0, 1, 2, 3] and {g["source"] for g in firmware} == {"amd-smi firmware"}
    assert firmware[3]["versions"]["PM"] == "04.85.103.184"
    neither = interpret(_observations(commands={"rocm-smi-showfwinfo": (["rocm-smi", "--showfwinfo"], "", 0)}))
    assert neither.why_missing("gpu.firmware").endswith("; amd-smi firmware was not run")


def test_interpreters_fall_back_and_say_why():
    rpm = interpret(_observations(commands={
        "dpkg-rocm-packages": (["dpkg-query"], "", None), "rpm-rocm-packages": (["rpm", "-qa"], "rocm-core 6.2.0.60200-66.el9\n", 0)}))
    assert rpm["rocm.packages"]["manager"] == "rpm" and rpm["rocm.packages"]["rows"][0]["release"] == "6.2.0"
    old = interpret(Observations(platform={"os": "linux", "release": "6.8.0-45-generic"}))
    assert old.why_missing("rocm.packages") == "the package lists were not read (an older snapshot)"
    assert old.why_missing("linux.amdgpu_driver").startswith("neither the loaded module")
    assert interpret(Observations(platform={"os": "windows"})).why_missing("rocm.opt_link") == "not collected on windows"
    inbox = interpret(_observations(commands={"dkms-status": (["dkms", "status"], "", 0)}, files={"/sys/module/amdgpu": []}))
    assert inbox["linux.amdgpu_driver"]["kind"] == "inbox"


def test_probe_runs_its_commands(fake_bin, monkeypatch):
    fake_bin.add_output("dpkg-query", "dpkg/ubuntu22.04-rocm5.7.1-plus-ubuntu-libhsa-runtime64-5.0-dpkg-l-grep-rocm.txt")
    fake_bin.add_output("rocm-smi", "rocm-smi/linux-raphael-igpu-0x164e-showfwinfo-firmware-block-excerpt.txt")
    monkeypatch.setenv("PATH", f"{fake_bin.path}{os.pathsep}{os.environ.get('PATH', '')}")
    observations = Observations(platform={"os": "linux", "release": "6.2.0-36-generic"})
    recorder = Recorder(observations, ProbeContext(python=sys.executable, python_reason="test", platform_os="linux",
                                                   env=dict(os.environ)))
    rocm_packages.collect(recorder)
    assert observations.command("dpkg-rocm-packages").argv[:4] == ["dpkg-query", "-W", "-f", rocm_packages.DPKG_FORMAT]
    assert observations.command("ls-opt-rocm").argv == ["ls", "-ld", "/opt/rocm", "/etc/alternatives/rocm"]
    assert observations.command("rocm-smi-showfwinfo").argv[1:] == ["--showfwinfo"]
    assert observations.command("amd-smi-firmware") is None  # rocm-smi answered
    facts = interpret(observations)
    assert len(facts["rocm.packages"]["rows"]) == 38 and facts["gpu.firmware"][0]["index"] == 0
    assert rocm_packages.PLATFORMS == ("linux", "wsl")


def test_probe_asks_amd_smi_where_rocm_smi_fails(fake_bin, monkeypatch):
    fake_bin.add_output("amd-smi", "amd-smi/linux-ubuntu24.04-rx9070xt-gfx1201-firmware-amd-smi-26.0.2-rocm7.0.2.txt")
    fake_bin.add("rocm-smi", "exit 1\n")
    path = f"{fake_bin.path}{os.pathsep}{os.environ.get('PATH', '')}"
    monkeypatch.setenv("PATH", path)
    observations = Observations(platform={"os": "linux", "release": "6.8.0-85-generic"})
    rocm_packages.collect(Recorder(observations, ProbeContext(python=sys.executable, python_reason="test",
                                                              platform_os="linux", env={"PATH": path})))
    assert observations.command("rocm-smi-showfwinfo").returncode == 1
    assert observations.command("amd-smi-firmware").argv[1:] == ["firmware"]
    assert interpret(observations)["gpu.firmware"][0]["versions"]["CP_MEC1"] == "2800"
