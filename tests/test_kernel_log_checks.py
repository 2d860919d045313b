"""The kernel-log checks through rocm_doctor.testing: real logs in (tests/fixtures/dmesg, journalctl), findings out;
the probe's fallback from journalctl to dmesg; old snapshots with only `dmesg --level=err,warn`; and which runtime
failures each finding explains."""

import os
import sys

import pytest

from rocm_doctor.engine import diagnosis, relations
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret
from rocm_doctor.knowledge import xid
from rocm_doctor.probes import kernel_log
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.testing import Case, facts_for, run_case

CHECK = {"hip-unspecified-launch-failure": "amdgpu-ring-timeout", "hip-memory-access-fault": "amdgpu-page-fault",
         "cuda-illegal-memory-access": "nvidia-xid", "hip-invalid-device-function": "gfx-not-in-torch-arch-list"}
EVENT_CHECKS = ("amdgpu-ring-timeout", "amdgpu-page-fault", "amdgpu-gpu-reset", "amdgpu-init-failed",
                "amdgpu-firmware-not-answering", "nvidia-xid")


def journal(fixture_text, fixture, key="journalctl-kernel"):
    argv = kernel_log.JOURNAL[1] if key == "journalctl-kernel" else ["dmesg"]
    return {"commands": {key: {"argv": argv, "returncode": 0, "stdout": fixture_text(fixture)}}}


def case(fixture_text, check, fixture, expect, text=(), key="journalctl-kernel", **kw):
    return run_case(Case(check=check, observations=journal(fixture_text, fixture, key), expect=expect,
                         text=list(text), **kw))


@pytest.mark.parametrize("fixture", ["dmesg/rx6000-healthy-init-kfd-added-device-rings-use-vm-inv-eng-excerpt.txt",
                                     "dmesg/rx6900-healthy-init-smu-driver-if-version-not-matched-excerpt.txt",
                                     "dmesg/h200-healthy-nvrm-open-kernel-module-580.159.04-excerpt.txt"])
@pytest.mark.parametrize("check", EVENT_CHECKS)
def test_a_healthy_log_raises_nothing(fixture_text, fixture, check):
    findings = case(fixture_text, check, fixture, {})
    assert [f.status.value for f in findings] in (["ok"], ["info"])


def test_ring_timeout_names_ring_process_and_reset(fixture_text):
    (finding,) = case(fixture_text, "amdgpu-ring-timeout",
                      "dmesg/rx9060xt-gfx1200-ring-gfx-timeout-ring-reset-failed-mode1-reset-excerpt.txt",
                      {"amdgpu-ring-timeout": "fail"},
                      ["on ring gfx_0.0.0", "glretrace (pid 12755)", "followed by a GPU reset",
                       "Ring gfx_0.0.0 reset failed", "MES, the GPU's scheduler firmware"])
    assert finding.data["devices"] == ["0000:45:00.0"] and finding.data["processes"] == ["glretrace (pid 12755)"]


def test_mes_hang_on_strix_halo_points_at_the_firmware(fixture_text):
    case(fixture_text, "amdgpu-ring-timeout",
         "dmesg/strixhalo-gfx1151-mes-0x83-firmware-mes-no-response-gpu-reset-excerpt.txt",
         {"amdgpu-ring-timeout": "fail"}, ["2 GPU job timeouts or scheduler hangs", "MES 0x83"])


def test_a_soft_recovered_timeout_is_a_warning(fixture_text):
    (finding,) = case(fixture_text, "amdgpu-ring-timeout",
                      "dmesg/gfx1201-page-fault-then-ring-gfx-timeout-soft-recovered-excerpt.txt",
                      {"amdgpu-ring-timeout": "warn"}, ["recovered without a GPU reset"])
    assert finding.severity.value == "medium"


def test_page_fault_names_process_address_and_the_rate_limit(fixture_text):
    (finding,) = case(fixture_text, "amdgpu-page-fault",
                      "dmesg/gfx1100-pytorch-rocm7.1-gfxhub-page-fault-python-journal-excerpt.txt",
                      {"amdgpu-page-fault": "fail"},
                      ["PCI 0000:0b:00.0", "python (pid 91762)", "0x00007f2a5318b000", "632 more fault messages",
                       "AMD_SERIALIZE_KERNEL=3"])
    assert finding.data["processes"] == ["python (pid 91762)"]
    (second,) = case(fixture_text, "amdgpu-page-fault",
                     "dmesg/gfx1201-page-fault-then-ring-gfx-timeout-soft-recovered-excerpt.txt",
                     {"amdgpu-page-fault": "fail"}, ["a process (pid 1641209)", "client SQC (inst) (0x9)"])
    assert "status 0x006012B0" in " ".join(second.evidence)


def test_resets_succeeded_failed_and_unseen_in_an_old_snapshot(fixture_text):
    case(fixture_text, "amdgpu-gpu-reset",
         "dmesg/ryzen5700g-rocm5.7-opencl-ring-sdma0-timeout-mode2-reset-succeeded-excerpt.txt",
         {"amdgpu-gpu-reset": "warn"}, ["once this boot (MODE2), it succeeded"])
    (failed,) = case(fixture_text, "amdgpu-gpu-reset",
                     "dmesg/psp-resume-failed-during-reset-gpu-reset-1-failed-excerpt.txt",
                     {"amdgpu-gpu-reset": "fail"}, ["stays unusable until the machine reboots", "PSP resume failed"])
    assert [step.kind for step in failed.fix] == ["advice"]
    (old,) = case(fixture_text, "amdgpu-gpu-reset",
                  "dmesg/psp-resume-failed-during-reset-gpu-reset-1-failed-excerpt.txt",
                  {"amdgpu-gpu-reset": "skip"}, ["errors and warnings only", "info level"], key="dmesg-warnings")
    assert old.status is Status.SKIP


def test_firmware_that_stops_answering_after_boot(fixture_text):
    (found,) = case(fixture_text, "amdgpu-firmware-not-answering",
                    "dmesg/steamdeck-vangogh-amdgpu-reloaded-ib-test-failed-smu-not-done-gfxoff-excerpt.txt",
                    {"amdgpu-firmware-not-answering": "warn"},
                    ["SMU firmware failed 2 times this boot on PCI 0000:04:00.0 after the GPU came up",
                     "I'm not done with your previous command", "Reloading amdgpu without a reboot"], key="dmesg-kernel")
    assert [step.kind for step in found.fix] == ["advice"]
    case(fixture_text, "amdgpu-firmware-not-answering",  # init-time failures belong to amdgpu-init-failed
         "dmesg/chromeos-skyrim-psp-13-0-8-toc-missing-sw-init-psp-failed-fatal-gpu-init.txt",
         {"amdgpu-firmware-not-answering": "ok"})


def test_init_failures_missing_file_non_fatal_and_harmless(fixture_text):
    (missing,) = case(fixture_text, "amdgpu-init-failed",
                      "dmesg/chromeos-skyrim-psp-13-0-8-toc-missing-sw-init-psp-failed-fatal-gpu-init.txt",
                      {"amdgpu-init-failed": "fail"}, ["PSP failed", "amdgpu/psp_13_0_8_toc.bin"],
                      facts={"os.release": {"id": "ubuntu", "id_like": ["debian"], "version_id": "24.04"}})
    assert [step.argv() for step in missing.fix] == [["sudo", "apt-get", "install", "linux-firmware"],
                                                   ["sudo", "update-initramfs", "-u"]]
    case(fixture_text, "amdgpu-init-failed",
         "dmesg/mi210x4-psp-create-ring-failed-defective-infinity-fabric-bridge-dmesg-T.txt",
         {"amdgpu-init-failed": "warn"}, ["PSP failed", "PSP create ring failed!"])
    case(fixture_text, "amdgpu-init-failed", "dmesg/rx6900-healthy-init-smu-driver-if-version-not-matched-excerpt.txt",
         {"amdgpu-init-failed": "info"}, ["SMU driver if version not matched"])


def test_xid_findings_by_code_with_the_catalog(fixture_text):
    lost, recovery = case(fixture_text, "nvidia-xid",
                          "dmesg/arch-rtx5080-xid-79-fallen-off-the-bus-then-xid-154-recovery-action.txt",
                          {"nvidia-xid:79": "fail", "nvidia-xid:154": "warn"},
                          ["GPU has fallen off the bus", "PCI 0000:01:00", "RESTART_BM", "It asks for: 0x1 (PF FLR)"])
    assert (lost.severity.value, lost.data["effect"], lost.data["fault"]) == ("critical", "gpu-lost", "hardware")
    assert lost.fix[0].text.startswith("Power the machine off completely") and not recovery.fix
    app, stopped = case(fixture_text, "nvidia-xid",
                        "dmesg/pytorch-multi-gpu-server-xid-43-and-xid-31-mmu-fault-dmesg-T-excerpt.txt",
                        {"nvidia-xid:31": "fail", "nvidia-xid:43": "info"},
                        ["Xid 31 (GPU memory page fault) was logged 3 times", "pid 13641", "First to look at: the "
                         "program that used the GPU"])
    assert app.data["effect"] == "app-killed" and not app.fix and stopped.severity.value == "low"
    (gsp,) = case(fixture_text, "nvidia-xid", "dmesg/dell-xe9680-h100-xid-119-gsp-rpc-timeout-dmesg-T.txt",
                  {"nvidia-xid:119": "fail"}, ["5 times", "nvidia-smi (pid 2024380)", "gpud (pid 1240590)"])
    assert gsp.data["devices"] == ["0000:9b:00"]


def test_an_unknown_xid_code_is_said_unknown_with_its_line():
    line = "[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 999, pid=1, name=x, something new"
    (finding,) = run_case(Case(check="nvidia-xid", observations={"commands": {"dmesg-kernel": {
        "argv": ["dmesg"], "returncode": 0, "stdout": line + "\n"}}}, expect={"nvidia-xid:999": "warn"},
        text=["does not list this code", line]))
    assert finding.data["effect"] is None and xid.code(999) is None


def test_every_code_the_brief_names_is_in_the_table():
    for code in (13, 31, 32, 38, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120, 121, 140,
                 143, 154):
        row = xid.code(code)
        assert row and row["meaning"] and row["first"] and row["status"] in ("fail", "warn", "info"), code
        assert row["effect"] in ("gpu-lost", "app-killed", "link", "degraded", "informational"), code


def test_unreadable_is_said_once_and_the_event_checks_skip(fixture_text):
    refused = {"commands": {
        "journalctl-kernel": {"argv": kernel_log.JOURNAL[1], "returncode": 1, "stderr": fixture_text(
            "journalctl/centos7-unprivileged-hint-no-journal-files-opened.txt")},
        "dmesg-kernel": {"argv": ["dmesg"], "returncode": 1, "stderr": fixture_text(
            "dmesg/fedora-rawhide-dmesg-restrict-read-kernel-buffer-operation-not-permitted.txt")}}}
    (finding,) = run_case(Case(check="kernel-log-unreadable", observations=refused,
                               expect={"kernel-log-unreadable": "info"},
                               text=["for want of permission", "No journal files were opened",
                                     "read kernel buffer failed"]))
    assert finding.fix[0].groups == ["systemd-journal"]
    for check in EVENT_CHECKS:
        (skipped,) = run_case(Case(check=check, observations=refused, expect={check: "skip"},
                                   text="this boot's kernel log could not be read"))
        assert "Operation not permitted" in skipped.message


def test_a_snapshot_without_any_kernel_log_skips_everything():
    facts = facts_for(Case(check="nvidia-xid", observations={}, expect={}))
    assert "not read" in facts.why_missing("linux.kernel_log_access")
    (finding,) = run_case(Case(check="kernel-log-unreadable", observations={},
                               expect={"kernel-log-unreadable": "skip"}))
    assert "snapshot without it" in finding.message


def test_the_load_failure_fact_reads_the_same_log(fixture_text):
    facts = facts_for(Case(check="amdgpu-init-failed", expect={}, observations=journal(
        fixture_text, "dmesg/chromeos-skyrim-psp-13-0-8-toc-missing-sw-init-psp-failed-fatal-gpu-init.txt")))
    assert facts["linux.kernel_log"]["required_missing"] == ["amdgpu/psp_13_0_8_toc.bin"]
    assert facts["linux.kernel_log"]["init_failed"] is True
    assert facts["linux.kernel_log_access"]["source"] == "journalctl-kernel"


def test_probe_reads_dmesg_only_when_the_journal_has_no_kernel_line(fake_bin, monkeypatch):
    fake_bin.add_output("journalctl", "journalctl/debian-unprivileged-hint-not-seeing-system-messages-no-entries.txt")
    fake_bin.add_output("dmesg", "dmesg/rx9060xt-gfx1200-ring-gfx-timeout-ring-reset-failed-mode1-reset-excerpt.txt")
    monkeypatch.setenv("PATH", f"{fake_bin.path}{os.pathsep}{os.environ.get('PATH', '')}")
    observations = Observations(platform={"os": "linux", "release": "6.8.0-45-generic"})
    recorder = Recorder(observations, ProbeContext(python=sys.executable, python_reason="test", platform_os="linux"))
    kernel_log.collect(recorder)
    assert observations.command("journalctl-kernel").argv == kernel_log.JOURNAL[1]
    assert "-b" in kernel_log.JOURNAL[1] and observations.command("dmesg-kernel").argv == ["dmesg"]
    facts = interpret(observations)
    assert facts["linux.gpu_events"]["source"] == "dmesg-kernel"
    assert facts["linux.gpu_events"]["ring_timeouts"]["count"] == 2
    fake_bin.add_output("journalctl", "dmesg/rx9060xt-gfx1200-ring-gfx-timeout-ring-reset-failed-mode1-reset-"
                                      "excerpt.txt")
    again = Observations(platform={"os": "linux", "release": "6.8.0-45-generic"})
    kernel_log.collect(Recorder(again, recorder.context))
    assert again.command("dmesg-kernel") is None  # the journal had the kernel's lines


def finding(fid, status="fail", **data):
    return Finding(id=fid, check=fid.split(":")[0], status=Status(status), title=fid, message=fid, data=data)


def said(signature):
    """The known-error-signatures finding of a message, pointing where the signature table points."""
    return finding(f"known-error-signatures:{signature}", "warn", signature=signature, check=CHECK[signature])


@pytest.mark.parametrize("cause,symptoms", [
    (finding("amdgpu-ring-timeout"), [finding("gpu-kernel-hang"), finding("amdgpu-gpu-reset", "warn"),
                                      said("hip-unspecified-launch-failure")]),
    (finding("amdgpu-page-fault"), [finding("gpu-kernel-crash"), finding("bench-section-failed"),
                                    said("hip-memory-access-fault")]),
    (finding("amdgpu-gpu-reset"), [finding("torch-cuda-unavailable"), finding("gpu-kernels-failed")]),
    (finding("amdgpu-init-failed"), [finding("rocm-kernel-driver"), finding("torch-cuda-unavailable")]),
    (finding("nvidia-xid:79", effect="gpu-lost", code=79), [finding("torch-cuda-unavailable"),
                                                            finding("gpu-kernels-failed"),
                                                            finding("collective-hang")]),
    (finding("nvidia-xid:31", effect="app-killed", code=31), [
        finding("gpu-kernel-crash"), said("cuda-illegal-memory-access")]),
    (finding("nvidia-xid:48", effect="gpu-lost", code=48), [finding("gpu-ecc-errors:0")]),
    (finding("amdgpu-firmware-missing:0"), [finding("amdgpu-init-failed")]),
])
def test_each_cause_folds_its_symptoms(cause, symptoms):
    findings = symptoms + [cause]
    relations.link(findings, load_registry(include_plugins=False).checks)
    found = diagnosis.build(findings)
    assert [r.finding.id for r in found.root_causes] == [cause.id]
    assert sorted(found.root_causes[0].symptoms) == sorted(s.id for s in symptoms)


@pytest.mark.parametrize("cause,symptom", [
    (finding("amdgpu-gpu-reset", "warn"), finding("torch-cuda-unavailable")),  # a reset that succeeded
    (finding("nvidia-xid:31", effect="app-killed"), finding("torch-cuda-unavailable")),  # the GPU still works
    (finding("nvidia-xid:43", "info", effect="informational"), finding("gpu-kernel-crash")),
    (finding("amdgpu-page-fault"), said("hip-invalid-device-function")),
])
def test_what_a_finding_does_not_explain(cause, symptom):
    findings = [cause, symptom]
    relations.link(findings, load_registry(include_plugins=False).checks)
    assert symptom.caused_by == []
