"""The kernel log's GPU failures, parsed from real journalctl and dmesg outputs (tests/fixtures/dmesg, journalctl):
each class with its lines, count, device and process; every timestamp style; refusals and journalctl's hint."""

import pytest

from rocm_doctor.parsers.gpu_events import MAX_EVENTS, hint_groups, messages, parse_gpu_events, plain, refusals

CLASSES = ("ring_timeouts", "page_faults", "resets", "firmware", "init_failed", "xid", "nvidia_lost")


def counts(parsed):
    return {name: parsed[name]["count"] for name in CLASSES if parsed[name]["count"]}


@pytest.mark.parametrize("fixture,expected", [
    ("dmesg/ryzen5700g-rocm5.7-opencl-ring-sdma0-timeout-mode2-reset-succeeded-excerpt.txt",
     {"ring_timeouts": 1, "resets": 2}),
    ("dmesg/gfx1100-pytorch-rocm7.1-gfxhub-page-fault-python-journal-excerpt.txt", {"page_faults": 1}),
    ("dmesg/strixhalo-gfx1151-mes-0x83-firmware-mes-no-response-gpu-reset-excerpt.txt",
     {"ring_timeouts": 2, "resets": 1}),
    ("dmesg/rx9060xt-gfx1200-ring-gfx-timeout-ring-reset-failed-mode1-reset-excerpt.txt",
     {"ring_timeouts": 2, "resets": 1}),
    ("dmesg/mi210x4-psp-create-ring-failed-defective-infinity-fabric-bridge-dmesg-T.txt", {"firmware": 2}),
    ("dmesg/chromeos-skyrim-psp-13-0-8-toc-missing-sw-init-psp-failed-fatal-gpu-init.txt",
     {"firmware": 2, "init_failed": 2}),
    ("dmesg/psp-resume-failed-during-reset-gpu-reset-1-failed-excerpt.txt", {"firmware": 3, "resets": 1}),
    ("dmesg/arch-rtx5080-xid-79-fallen-off-the-bus-then-xid-154-recovery-action.txt", {"xid": 2, "nvidia_lost": 1}),
    ("dmesg/pytorch-multi-gpu-server-xid-43-and-xid-31-mmu-fault-dmesg-T-excerpt.txt", {"xid": 7}),
    ("dmesg/dell-xe9680-h100-xid-119-gsp-rpc-timeout-dmesg-T.txt", {"xid": 5}),
    ("dmesg/rx7900xtx-ring-gfx-timeout-process-information-after-amdgpu-mes-mode1-excerpt.txt",
     {"ring_timeouts": 2, "resets": 1}),
    ("dmesg/rx6000-healthy-init-kfd-added-device-rings-use-vm-inv-eng-excerpt.txt", {}),
    ("dmesg/ubuntu19.10-2x-radeonvii-vega20-ta-bin-missing-harmless.txt", {}),
    ("dmesg/h200-healthy-nvrm-open-kernel-module-580.159.04-excerpt.txt", {}),
    ("dmesg/gfx1201-page-fault-then-ring-gfx-timeout-soft-recovered-excerpt.txt",
     {"page_faults": 1, "ring_timeouts": 1}),
    ("dmesg/rx6900-healthy-init-smu-driver-if-version-not-matched-excerpt.txt", {"firmware": 1}),
    ("dmesg/rpi5-w7700-gfx1101-sdma-6.0.3-firmware-missing-excerpt.txt", {"firmware": 1, "init_failed": 2}),
    ("dmesg/ubuntu24.04-strixhalo-gfx1151-fatal-error-during-gpu-init-no-gc-firmware.txt", {"init_failed": 1}),
    ("dmesg/void-linux-5.4-navi14-gpu-info-firmware-missing.txt", {}),
    ("dmesg/fedora-rawhide-dmesg-restrict-read-kernel-buffer-operation-not-permitted.txt", {}),
    ("journalctl/centos7-unprivileged-hint-no-journal-files-opened.txt", {}),
    ("journalctl/debian-unprivileged-hint-not-seeing-system-messages-no-entries.txt", {}),
])
def test_every_fixture_gives_its_classes(fixture_text, fixture, expected):
    assert counts(parse_gpu_events(fixture_text(fixture))) == expected


def test_ring_timeout_names_ring_process_and_the_reset_after_it(fixture_text):
    parsed = parse_gpu_events(fixture_text("dmesg/rx9060xt-gfx1200-ring-gfx-timeout-ring-reset-failed-mode1-reset-"
                                           "excerpt.txt"))
    timeout, mes = parsed["ring_timeouts"]["events"]
    assert (timeout["kind"], timeout["ring"], timeout["device"]) == ("timeout", "gfx_0.0.0", "0000:45:00.0")
    assert (timeout["process"], timeout["pid"]) == ("glretrace", 12755)  # from the line after it
    assert (mes["kind"], mes["message"]) == ("mes", "REMOVE_QUEUE")
    assert parsed["ring_timeouts"]["ring_resets"][0]["ok"] is False
    resets = parsed["resets"]
    assert (resets["begun"], resets["succeeded"], resets["failed"], resets["methods"]) == (1, 0, 0, ["MODE1"])
    assert resets["events"][0]["source"] == "1"


def test_process_information_after_the_device_prefix_names_the_process(fixture_text):
    """"amdgpu: Process information: process sway pid 10947 …" (a real 6.x line): the process is sway, not
    "information: process sway"."""
    parsed = parse_gpu_events(fixture_text("dmesg/rx7900xtx-ring-gfx-timeout-process-information-after-amdgpu-"
                                           "mes-mode1-excerpt.txt"))
    timeout = parsed["ring_timeouts"]["events"][0]
    assert (timeout["ring"], timeout["device"], timeout["process"], timeout["pid"]) == ("gfx_0.0.0", "0000:0a:00.0",
                                                                                        "sway", 10947)


def test_old_style_timeout_with_unknown_process_and_a_reset_that_succeeded(fixture_text):
    parsed = parse_gpu_events(fixture_text("dmesg/ryzen5700g-rocm5.7-opencl-ring-sdma0-timeout-mode2-reset-"
                                           "succeeded-excerpt.txt"))
    (timeout,) = parsed["ring_timeouts"]["events"]
    assert timeout["ring"] == "sdma0" and "pid" not in timeout  # "process  pid 0": the kernel did not know it
    assert (parsed["resets"]["begun"], parsed["resets"]["succeeded"], parsed["resets"]["methods"]) == (1, 1, ["MODE2"])
    assert parsed["firmware"]["count"] == 0  # "optional ras ta ucode is not available", "SMU is resumed successfully!"


def test_page_fault_in_a_journal_with_other_programs_lines(fixture_text):
    parsed = parse_gpu_events(fixture_text("dmesg/gfx1100-pytorch-rocm7.1-gfxhub-page-fault-python-journal-"
                                           "excerpt.txt"))
    assert parsed["messages"] == 4  # systemd and systemd-coredump lines are not the kernel's
    (fault,) = parsed["page_faults"]["events"]
    assert (fault["hub"], fault["device"], fault["process"], fault["pid"]) == ("gfxhub", "0000:0b:00.0", "python",
                                                                               91762)
    assert fault["address"] == "0x00007f2a5318b000" and parsed["page_faults"]["suppressed"] == 632
    assert fault["line"].startswith("[Jan 09 18:55:45] amdgpu 0000:0b:00.0: amdgpu: [gfxhub] page fault")


def test_firmware_failures_at_init_and_during_a_reset(fixture_text):
    init = parse_gpu_events(fixture_text("dmesg/chromeos-skyrim-psp-13-0-8-toc-missing-sw-init-psp-failed-fatal-gpu-"
                                         "init.txt"))
    assert [(e["block"], e["phase"], e["error"]) for e in init["firmware"]["events"]] == [
        ("psp", "init", None), ("psp", "init", -2)]
    assert init["init_failed"]["devices"] == ["0000:04:00.0"]
    reset = parse_gpu_events(fixture_text("dmesg/psp-resume-failed-during-reset-gpu-reset-1-failed-excerpt.txt"))
    assert {e["phase"] for e in reset["firmware"]["events"]} == {"reset"}
    assert (reset["resets"]["failed"], reset["resets"]["devices"]) == (1, ["0000:0b:00.0"])
    sdma = parse_gpu_events(fixture_text("dmesg/rpi5-w7700-gfx1101-sdma-6.0.3-firmware-missing-excerpt.txt"))
    assert [(e["block"], e["error"]) for e in sdma["firmware"]["events"]] == [("sdma_v6_0", -19)]


def test_xid_lines_old_and_new_with_pid_name_and_text(fixture_text):
    h100 = parse_gpu_events(fixture_text("dmesg/dell-xe9680-h100-xid-119-gsp-rpc-timeout-dmesg-T.txt"))
    first = h100["xid"]["events"][0]
    assert (first["code"], first["device"], first["pid"], first["process"]) == (119, "0000:9b:00", 2024380,
                                                                                "nvidia-smi")
    assert first["text"].startswith("Timeout after 6s of waiting for RPC response from GPU4 GSP!")
    assert [e["process"] for e in h100["xid"]["events"]][-2:] == ["cache_mgr_main", "gpud"]
    server = parse_gpu_events(fixture_text("dmesg/pytorch-multi-gpu-server-xid-43-and-xid-31-mmu-fault-dmesg-T-"
                                           "excerpt.txt"))
    assert server["xid"]["counts"] == {"43": 4, "31": 3}
    assert server["xid"]["devices"] == ["0000:3d:00", "0000:db:00"]
    fault = server["xid"]["events"][-1]
    assert (fault["pid"], fault["process"]) == (33275, None) and "MMU Fault: ENGINE GRAPHICS" in fault["text"]
    lost = parse_gpu_events(fixture_text("dmesg/arch-rtx5080-xid-79-fallen-off-the-bus-then-xid-154-recovery-"
                                         "action.txt"))
    assert [(e["code"], e["pid"]) for e in lost["xid"]["events"]] == [(79, None), (154, None)]
    assert lost["xid"]["events"][1]["text"] == "GPU recovery action changed from 0x0 (None) to 0x1 (PF FLR)"
    assert lost["nvidia_lost"]["events"][0]["device"] == "0000:01:00.0"


def test_healthy_rings_and_harmless_firmware_are_not_failures(fixture_text):
    healthy = parse_gpu_events(fixture_text("dmesg/rx6000-healthy-init-kfd-added-device-rings-use-vm-inv-eng-"
                                            "excerpt.txt"))
    assert healthy["messages"] == 16 and counts(healthy) == {}


@pytest.mark.parametrize("prefix", ["[   87.854609] gpu-node-3 kernel: ", "Sep 03 21:38:54 gpu-node-3 kernel: ",
                                    "2026-09-03T21:38:54+0000 gpu-node-3 kernel: ", "maj 08 19:27:35 RX-78 kernel: ",
                                    "[Fri Jul 10 20:23:53 2026] ", "[Nov19 10:33] ", "[  +0.000388] ", ""])
def test_the_same_lines_under_every_timestamp_style(fixture_text, prefix):
    """journalctl's short-monotonic, short and short-iso headers, localized months, dmesg -T, -H and none."""
    lines = [message for _, message in messages(fixture_text(
        "dmesg/rx9060xt-gfx1200-ring-gfx-timeout-ring-reset-failed-mode1-reset-excerpt.txt"))]
    parsed = parse_gpu_events("\n".join(prefix + line for line in lines))
    assert counts(parsed) == {"ring_timeouts": 2, "resets": 1}
    assert parsed["ring_timeouts"]["events"][0]["pid"] == 12755
    assert "gpu-node-3" not in parsed["ring_timeouts"]["events"][0]["line"]  # the host is left out


def test_plain_gives_dmesg_shape_for_the_load_failure_parser(fixture_text):
    text = plain(fixture_text("dmesg/gfx1100-pytorch-rocm7.1-gfxhub-page-fault-python-journal-excerpt.txt"))
    assert text.splitlines()[0] == "[Jan 09 18:55:45] gmc_v11_0_process_interrupt: 632 callbacks suppressed"
    assert "alexpc" not in text and "systemd" not in text


def test_refusals_and_the_groups_the_hint_names(fixture_text):
    centos = fixture_text("journalctl/centos7-unprivileged-hint-no-journal-files-opened.txt")
    debian = fixture_text("journalctl/debian-unprivileged-hint-not-seeing-system-messages-no-entries.txt")
    dmesg = fixture_text("dmesg/fedora-rawhide-dmesg-restrict-read-kernel-buffer-operation-not-permitted.txt")
    assert refusals(centos)[-1] == "No journal files were opened due to insufficient permissions."
    assert refusals(dmesg) == ["dmesg: read kernel buffer failed: Operation not permitted"]
    assert hint_groups(centos) == ["systemd-journal"] and hint_groups(debian) == ["adm", "systemd-journal"]
    assert messages(centos) == messages(debian) == messages(dmesg) == []


def test_a_flood_is_counted_but_bounded(fixture_text):
    line = fixture_text("dmesg/gfx1100-pytorch-rocm7.1-gfxhub-page-fault-python-journal-excerpt.txt").splitlines()[1]
    parsed = parse_gpu_events("\n".join([line] * 500))
    assert parsed["page_faults"]["count"] == 500 and len(parsed["page_faults"]["events"]) == MAX_EVENTS


def test_garbage_never_raises():
    assert counts(parse_gpu_events("\x00\ufffd[ ] kernel: NVRM: Xid (PCI:zz): x\n[gfxhub] page fault (\n")) == {}
    assert parse_gpu_events(None)["messages"] == 0
