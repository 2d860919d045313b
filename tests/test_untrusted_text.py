"""Text other users and programs control, made safe to show: every terminal control written visibly, every secret
form the report masks masked, and the parsers of kernel lines and process lists applying it to what they keep."""

from __future__ import annotations

import json

import pytest

from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import kernel_events
from rocm_doctor.parsers.amd_smi_live import parse_process
from rocm_doctor.parsers.gpu_events import parse_gpu_events, refusals
from rocm_doctor.parsers.kernel_log import parse_kernel_log
from rocm_doctor.parsers.live_files import parse_proc_status
from rocm_doctor.parsers.nvidia_smi import parse_compute_apps
from rocm_doctor.parsers.rocm_smi_live import parse_rocm_smi_live
from rocm_doctor.parsers.untrusted_text import neutral, shown, shown_all
from rocm_doctor.report.redact import redact

STEERING = {
    "ANSI colour": ("\x1b[31mred", "\\x1b[31mred"),
    "OSC window title": ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),
    "carriage return": ("ok\rFAIL", "ok\\x0dFAIL"),
    "backspace": ("abc\x08\x08", "abc\\x08\\x08"),
    "8-bit CSI": ("\x9b2J", "\\x9b2J"),
    "DEL": ("a\x7fb", "a\\x7fb"),
    "newline": ("one\ntwo", "one\\x0atwo"),
    "right-to-left override": ("\u202egnp.exe", "\\u202egnp.exe"),
    "bidi isolate": ("a\u2066b\u2069", "a\\u2066b\\u2069"),
    "line separator": ("a\u2028b", "a\\u2028b"),
    "tab": ("a\tb", "a b"),
}


@pytest.mark.parametrize("name", sorted(STEERING))
def test_terminal_control_is_written_visibly(name):
    raw, visible = STEERING[name]
    assert neutral(raw) == visible


def test_plain_text_and_other_scripts_pass_unchanged():
    for text in ("python3 train.py --epochs 3", "amdgpu 0000:03:00.0: ring gfx timeout", "進程 процесс é"):
        assert shown(text) == text


SECRETS = {
    "--password X": ("python train.py --password hunter2pass", "hunter2pass"),
    "--api-key=X": ("vllm serve --api-key=sk-live0123456789abcdefghij", "sk-live0123456789abcdefghij"),
    "mysql -pPASS": ("mysql -pTr0ub4dor3 -u root", "Tr0ub4dor3"),
    "URL credentials": ("git clone https://bob:pa55word@git.example.com/x", "pa55word"),
    "token in a URL": ("wget https://example.com/model?token=abcd1234efgh", "abcd1234efgh"),
    "API_KEY=": ("audit: API_KEY=abcd1234secret comm=python3", "abcd1234secret"),
    "bare token": ("python run.py hf_abcdefghijklmnopqrstuvwx12", "hf_abcdefghijklmnopqrstuvwx12"),
    "bearer header": ("curl -H 'Authorization: Bearer abcdefghijklmnop'", "abcdefghijklmnop"),
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_secret_form_is_masked_as_the_report_masks_it(name):
    text, secret = SECRETS[name]
    assert secret not in shown(text) and "<redacted>" in shown(text)
    assert secret not in json.dumps(redact({"line": text})[0])  # the report hides the same value


def test_secrets_hidden_behind_control_characters_are_still_masked():
    assert "hunter2pass" not in shown("\x1b[8mpython --password hunter2pass\x1b[0m")


def test_shown_all_reaches_every_string_and_keeps_the_rest():
    data = {"events": [{"line": "\x1b[2J --password abcdef12", "pid": 7, "ok": True}], "count": 1}
    assert shown_all(data) == {"events": [{"line": "\\x1b[2J --password <redacted>", "pid": 7, "ok": True}],
                               "count": 1}


def test_the_kernel_log_parsers_keep_lines_neutral_and_masked():
    log = ("[  1.0] amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1, emitted seq=3\n"
           "[  1.1] amdgpu 0000:03:00.0: amdgpu:  Process py\x1b[2J pid 42 thread py pid 42\n"
           "[  2.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=42, name=python3, API_KEY=abcd1234secret \u202eESR\n"
           "[  3.0] amdgpu 0000:03:00.0: Direct firmware load for amdgpu/x\x1b[31m.bin failed with error -2\n")
    events = parse_gpu_events(log)
    kept = json.dumps(events, ensure_ascii=False)
    assert "\x1b" not in kept and "\u202e" not in kept and "abcd1234secret" not in kept
    assert events["ring_timeouts"]["events"][0]["process"] == "py\\x1b[2J"
    assert events["xid"]["events"][0]["line"].endswith("API_KEY=<redacted> \\u202eESR")
    firmware = parse_kernel_log(log)
    assert firmware["firmware_missing"] == ["amdgpu/x\\x1b[31m.bin"] and "\x1b" not in json.dumps(firmware)
    assert refusals("dmesg: read kernel buffer failed: \x1b[2JPermission denied") == [
        "dmesg: read kernel buffer failed: \\x1b[2JPermission denied"]


def test_the_last_words_of_a_kernel_log_read_in_part_are_neutral_and_masked():
    """journalctl printed kernel lines, then failed: the stderr it stopped with goes into evidence, screened."""
    observations = Observations(platform={"os": "linux"})
    observations.add_command("journalctl-kernel", CommandResult(
        argv=["journalctl", "-k", "-b"], returncode=1,
        stdout="Jan 09 18:55:45 host kernel: amdgpu 0000:03:00.0: amdgpu: GPU reset begin!\n",
        stderr="Failed to iterate through journal: Bad message\x1b]0;owned\x07\nsee --password hunter2pass\u202e\n"))
    facts = Facts(observations)
    kernel_events.interpret(observations, facts)
    assert facts.get("linux.kernel_log_access")["stopped_with"] == [
        "Failed to iterate through journal: Bad message\\x1b]0;owned\\x07", "see --password <redacted>"]


def test_the_process_lists_keep_names_neutral_and_masked():
    nvidia = parse_compute_apps("GPU-1, 461, python3 x.py --password hunter2pass \x1b]0;t\x07, 100\n")
    amd = parse_process(json.dumps([{"gpu": 0, "process_list": [
        {"process_info": {"name": "mysql -pTr0ub4dor3\r\x08", "pid": 9, "memory_usage": {"vram_mem": 1}}}]}]))
    rocm = parse_rocm_smi_live(json.dumps({"system": {"PID5": "tool --token=abcd1234efgh\u202e, 1, 0, 0, 0"}}))
    status = parse_proc_status("Name:\tx\x1b[2J\nPid:\t5\nPPid:\t1\nUid:\t0\t0\t0\t0\n")
    names = [nvidia["processes"][0]["name"], amd[0]["name"], rocm["processes"][0]["name"], status["name"]]
    assert names == ["python3 x.py --password <redacted> \\x1b]0;t\\x07", "mysql -p<redacted>",
                     "tool --token=<redacted>", "x\\x1b[2J"]
