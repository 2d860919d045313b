"""A kernel log read only in part: a journalctl or dmesg that printed kernel lines and then failed (exit status,
signal, timeout) is judged on those lines and kernel-log-unreadable says once how it ended; a log longer than the
recorder's cap keeps its newest lines (the runner's keep_tail) and says how many of the oldest bytes were not read.
Fake tools on PATH print real outputs (tests/fixtures); replayed snapshots carry the same records."""

import json
import os
import sys
from pathlib import Path

import pytest

from rocm_doctor.engine import runner
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.observations import Observations
from rocm_doctor.probes import kernel_log
from rocm_doctor.probes._base import ProbeContext, Recorder
from rocm_doctor.testing import Case, run_case

FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOTS = Path(__file__).parent / "snapshots"
RESET = "dmesg/psp-resume-failed-during-reset-gpu-reset-1-failed-excerpt.txt"
XID_31 = "dmesg/h200-driver580-xid-31-mmu-fault-from-an-illegal-store.txt"
BAD_MESSAGE = "journalctl/journal-damaged-failed-to-iterate-bad-message.txt"
REFUSED = "dmesg/fedora-rawhide-dmesg-restrict-read-kernel-buffer-operation-not-permitted.txt"
NO_ENTRIES = "journalctl/debian-unprivileged-hint-not-seeing-system-messages-no-entries.txt"
PART_SCENARIO = "linux-2x-mi100-journal-bad-message-after-a-failed-gpu-reset-read-in-part"
CUT_SCENARIO = "linux-h200-dmesg-past-the-output-cap-newest-lines-hold-xid-31"


def collected(fake_bin, monkeypatch) -> Observations:
    """What the kernel-log probe records with the fake tools first on PATH."""
    monkeypatch.setenv("PATH", f"{fake_bin.path}{os.pathsep}{os.environ.get('PATH', '')}")
    observations = Observations(platform={"os": "linux", "release": "6.8.0-45-generic"})
    kernel_log.collect(Recorder(observations, ProbeContext(python=sys.executable, python_reason="test",
                                                           platform_os="linux")))
    return observations


def judged(observations: Observations, check: str) -> list:
    raw = observations.to_dict()
    return run_case(Case(check=check, observations={"commands": raw["commands"]}, expect={}))


def one(observations: Observations, check: str):
    (finding,) = judged(observations, check)
    return finding


def lines_of(fixture: str) -> int:
    return len([line for line in (FIXTURES / fixture).read_text(encoding="utf-8").splitlines() if line.strip()])


# ---- the runner keeps the tail when asked ------------------------------------------------------------------------

def test_the_runner_keeps_the_newest_whole_lines_when_asked():
    script = "import sys\nfor i in range(200): print(f'line {i:03d} ' + 'x' * 20)\nprint('the last line')"
    total = sum(len(f"line {i:03d} " + "x" * 20) + 1 for i in range(200)) + len("the last line\n")
    tail = runner.run([sys.executable, "-c", script], output_cap=100, keep_tail=True)
    assert tail.stdout.endswith("the last line\n") and tail.stdout.startswith("line ")  # no half line first
    assert tail.kept_tail and tail.stdout_truncated_bytes == total - len(tail.stdout.encode())
    assert len(tail.stdout.encode()) <= 100
    head = runner.run([sys.executable, "-c", script], output_cap=100)
    assert head.stdout == ("line 000 " + "x" * 20 + "\n" + "line 001 " + "x" * 20 + "\n" + "line 002 " + "x" * 20
                           + "\n" + "line 003 " + "x" * 20 + "\n")[:100]
    assert not head.kept_tail and head.stdout_truncated_bytes == total - 100


def test_one_line_longer_than_the_cap_keeps_its_end():
    tail = runner.run([sys.executable, "-c", "import sys; sys.stdout.write('a' * 300000 + 'END')"],
                      output_cap=1000, keep_tail=True)
    assert tail.stdout == "a" * 997 + "END" and tail.stdout_truncated_bytes == 300003 - 1000


def test_a_short_output_is_kept_whole_in_either_mode():
    for keep_tail in (False, True):
        result = runner.run([sys.executable, "-c", "print('one'); print('two')"], keep_tail=keep_tail)
        assert result.stdout == "one\ntwo\n" and result.stdout_truncated_bytes == 0


# ---- a dmesg longer than the cap ------------------------------------------------------------------------------

def test_a_dmesg_past_the_cap_keeps_its_newest_lines(fake_bin, monkeypatch):
    """1.6 MB of old lines, then the real Xid 31 lines last: those are what the checks judge."""
    fake_bin.add_output("journalctl", NO_ENTRIES)
    fake_bin.add("dmesg", f"""\
        yes '[    1.000000] an old line that fills the ring buffer ............................' | head -n 20000
        cat '{FIXTURES / XID_31}'
        """)
    observations = collected(fake_bin, monkeypatch)
    record = observations.command("dmesg-kernel")
    fixture = (FIXTURES / XID_31).read_text(encoding="utf-8")
    printed = 20000 * len("[    1.000000] an old line that fills the ring buffer " + "." * 28 + "\n") + len(
        fixture.encode())
    assert record.kept_tail and record.stdout.endswith(fixture)
    assert record.stdout.startswith("[    1.000000] an old line")
    assert record.stdout_truncated_bytes == printed - len(record.stdout.encode()) > 0
    unreadable = one(observations, "kernel-log-unreadable")
    assert unreadable.status.value == "info"
    assert f"the oldest {record.stdout_truncated_bytes:,} bytes were not read" in unreadable.message
    assert "amdgpu's firmware and init failures are among the oldest lines" in unreadable.message
    (xid,) = [f for f in judged(observations, "nvidia-xid") if f.status.value == "fail"]
    assert xid.id == "nvidia-xid:31" and any(line.endswith("read in part") for line in xid.evidence)
    tools = judged(observations, "external-tool-misbehaved")
    assert not [f for f in tools if f.id.endswith(":dmesg-kernel")]  # a long log is no misbehaving tool


# ---- a command that printed lines and then failed -----------------------------------------------------------------

def test_a_journal_that_stops_with_a_bad_message_is_judged_and_said_in_part(fake_bin, monkeypatch):
    fake_bin.add("journalctl", f"cat '{FIXTURES / RESET}'\ncat '{FIXTURES / BAD_MESSAGE}' >&2\nexit 1\n")
    fake_bin.add("dmesg", f"cat '{FIXTURES / REFUSED}' >&2\nexit 1\n")
    observations = collected(fake_bin, monkeypatch)
    assert observations.command("journalctl-kernel").returncode == 1
    assert observations.command("dmesg-kernel") is not None  # the journal stopped early: dmesg is tried too
    unreadable = one(observations, "kernel-log-unreadable")
    said = f"journalctl exited with status 1 after printing {lines_of(RESET)} lines"
    assert unreadable.status.value == "info" and said in unreadable.message
    assert "in what it did not print cannot be told" in unreadable.message
    assert "it ended with: Failed to iterate through journal: Bad message" in unreadable.evidence
    assert unreadable.data["stopped"] == said and unreadable.data["source"] == "journalctl-kernel"
    reset = one(observations, "amdgpu-gpu-reset")
    assert reset.status.value == "fail" and "PSP resume failed" in " ".join(reset.evidence)
    clean = one(observations, "amdgpu-page-fault")
    assert clean.status.value == "ok" and "only part of the log" in clean.message
    everything = [f for check in load_registry(include_plugins=False).checks if check.area == "kernel-log"
                  for f in judged(observations, check.id)]
    assert sum("exited with status 1" in f.message for f in everything) == 1  # said once


@pytest.mark.parametrize("ending,words", [
    ("exit 3", "dmesg exited with status 3 after printing {n} lines"),
    ("kill -9 $$", "dmesg was killed by signal SIGKILL (9) after printing {n} lines"),
])
def test_how_dmesg_ended_is_kept(fake_bin, monkeypatch, ending, words):
    fake_bin.add_output("journalctl", NO_ENTRIES)
    fake_bin.add("dmesg", f"cat '{FIXTURES / XID_31}'\n{ending}\n")
    observations = collected(fake_bin, monkeypatch)
    unreadable = one(observations, "kernel-log-unreadable")
    assert words.format(n=lines_of(XID_31)) in unreadable.message
    assert [f.id for f in judged(observations, "nvidia-xid") if f.status.value == "fail"] == ["nvidia-xid:31"]


def test_a_complete_dmesg_is_read_instead_of_a_journal_read_in_part(fake_bin, monkeypatch):
    fake_bin.add("journalctl", f"cat '{FIXTURES / RESET}'\ncat '{FIXTURES / BAD_MESSAGE}' >&2\nexit 1\n")
    fake_bin.add_output("dmesg", XID_31)
    observations = collected(fake_bin, monkeypatch)
    unreadable = one(observations, "kernel-log-unreadable")
    assert unreadable.status.value == "ok" and unreadable.data["source"] == "dmesg-kernel"
    assert any(line.endswith(f"exited with status 1 after printing {lines_of(RESET)} lines")
               for line in unreadable.evidence)


def record(argv, **fields):
    return {"argv": argv, "returncode": 0, "stdout": "", "stderr": "", **fields}


def test_a_journal_that_timed_out_after_printing_lines_is_read_in_part(fixture_text):
    commands = {"journalctl-kernel": record(kernel_log.JOURNAL[1], returncode=-9, timed_out=True, timeout_s=10.0,
                                            stdout=fixture_text(RESET)),
                "dmesg-kernel": record(["dmesg"], returncode=1, stderr=fixture_text(REFUSED))}
    run_case(Case(check="kernel-log-unreadable", observations={"commands": commands},
                  expect={"kernel-log-unreadable": "info"},
                  text=f"journalctl did not finish within 10 s after printing {lines_of(RESET)} lines"))
    run_case(Case(check="amdgpu-gpu-reset", observations={"commands": commands}, expect={"amdgpu-gpu-reset": "fail"}))


def test_an_older_snapshot_cut_at_its_end_says_the_newest_bytes_were_not_read(fixture_text):
    commands = {"dmesg-kernel": record(["dmesg"], stdout=fixture_text(XID_31), stdout_truncated_bytes=5000)}
    run_case(Case(check="kernel-log-unreadable", observations={"commands": commands},
                  expect={"kernel-log-unreadable": "info"},
                  text=["the newest 5,000 bytes were not read", "the GPU failures logged most recently"]))


def test_a_whole_log_is_ok_and_its_record_reads_back(fixture_text):
    commands = {"journalctl-kernel": record(kernel_log.JOURNAL[1], stdout=fixture_text(XID_31), kept_tail=True)}
    (finding,) = run_case(Case(check="kernel-log-unreadable", observations={"commands": commands},
                               expect={"kernel-log-unreadable": "ok"}))
    assert finding.data["stopped"] is None and finding.data["not_read"] is None


# ---- replayed --------------------------------------------------------------------------------------------------

def commands_of(name: str) -> dict:
    return json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))["observations"]["commands"]


def test_replayed_journal_read_in_part_puts_the_failed_reset_first(replayed):
    journal = commands_of(PART_SCENARIO)["journalctl-kernel"]
    assert journal["stdout"] == (FIXTURES / RESET).read_text(encoding="utf-8")
    assert journal["stderr"] == (FIXTURES / BAD_MESSAGE).read_text(encoding="utf-8") and journal["returncode"] == 1
    document = replayed(PART_SCENARIO)
    first = document["diagnosis"]["root_causes"][0]
    assert first["finding"] == "amdgpu-gpu-reset"
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert [steps[i]["kind"] for i in first["plan"]] == ["advice"] and "Reboot" in steps[first["plan"][0]]["text"]
    read = next(f for f in document["findings"] if f["id"] == "kernel-log-unreadable")
    assert read["status"] == "info"
    assert read["message"].startswith("This boot's kernel log was read only in part: journalctl exited with status 1 "
                                      f"after printing {lines_of(RESET)} lines.")
    assert read["data"]["stopped_with"] == ["Failed to iterate through journal: Bad message"]


def test_replayed_dmesg_past_the_cap_judges_its_newest_lines(replayed):
    dmesg = commands_of(CUT_SCENARIO)["dmesg-kernel"]
    assert dmesg["stdout"] == (FIXTURES / XID_31).read_text(encoding="utf-8") and dmesg["kept_tail"] is True
    document = replayed(CUT_SCENARIO)
    first = document["diagnosis"]["root_causes"][0]
    assert first["finding"] == "nvidia-xid:31" and first["plan"] == []
    read = next(f for f in document["findings"] if f["id"] == "kernel-log-unreadable")
    assert read["status"] == "info" and "the oldest 2,411,532 bytes were not read" in read["message"]
    assert not [f["id"] for f in document["findings"] if f["id"] == "external-tool-misbehaved:dmesg-kernel"]
