"""Hostile tools, end to end: every GPU and system tool the doctor runs hangs, and two of them leave a child behind
that calls setsid(). `check --no-gpu` must take one tool timeout, not one per tool, report each hung tool, and
leave no descendant of any tool running when it returns (docs/security.md)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

TIMEOUT_S = 2.0
HUNG = ("nvidia-smi", "amd-smi", "rocm-smi", "hipconfig", "rocm_agent_enumerator", "amdgpu-arch",
        "lspci", "dkms", "mokutil", "journalctl", "dmesg", "dpkg-query", "rpm")
# rocminfo hangs after starting a setsid() child; modinfo starts one and exits at once.
ESCAPING = """#!{python}
import os, sys, time
if os.fork() == 0:
    os.setsid()
    open({pidfile!r}, "w").write(str(os.getpid()))
    time.sleep(120)
    os._exit(0)
while not os.path.exists({pidfile!r}):
    time.sleep(0.01)
if {hang}:
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux probes and /proc")
def test_every_tool_hung_costs_one_timeout_and_leaves_nothing_running(tmp_path, isolated_env, fake_bin):
    for name in HUNG:
        fake_bin.add(name, "exec sleep 600\n")
    pidfiles = {}
    for name, hang in (("rocminfo", True), ("modinfo", False)):
        pidfiles[name] = tmp_path / f"{name}-child"
        tool = fake_bin.path / name
        tool.write_text(ESCAPING.format(python=sys.executable, pidfile=str(pidfiles[name]), hang=hang))
        tool.chmod(0o755)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "rocm_doctor", "check", "--no-gpu", "--json", "--command-timeout",
                           str(TIMEOUT_S)], cwd=tmp_path, env=isolated_env, capture_output=True, text=True,
                          timeout=120)
    took = time.monotonic() - started
    children = {name: int(path.read_text()) for name, path in pidfiles.items() if path.exists()}
    try:
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
        assert set(children) == {"rocminfo", "modinfo"}, "a fake tool did not run"
        assert [name for name, pid in children.items() if _alive(pid)] == [], "a setsid child outlived the doctor"
        said = " ".join(" ".join([f["message"], *f["evidence"]]) for f in json.loads(done.stdout)["findings"])
        not_reported = [name for name in (*HUNG, "rocminfo") if not re.search(rf"(?<![\w-]){name}(?![\w-])", said)]
        assert not_reported == [] and f"did not finish within {TIMEOUT_S:g} s" in said
        # One after the other, the eight ROCm tools of one probe alone took 8 timeouts (16 s); side by side under
        # one deadline the whole run is one timeout plus the doctor's own start and the torch probe.
        assert took < 4 * TIMEOUT_S + 4, f"check took {took:.1f} s with every tool hung"
    finally:
        for pid in children.values():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


# What other users and programs control, as hostile as it gets: GPU processes whose names carry a password,
# terminal escapes and a bidi override; kernel lines that quote a process's secret and an API key.
ESC_TITLE, CLEAR, RLO = "\x1b]0;owned\x07", "\x1b[2J\x08\x9b1m", "\u202e"  # a CR would end the tool's line
PLANTED = ("hunter2pass", "sk-live0123456789abcdefghij", "Tr0ub4dor3", "abcd1234secret")
PROCESSES = (f"461, python3 train.py --password hunter2pass {ESC_TITLE}{CLEAR}{RLO}exe.txt, 123882",
             "462, mysql -pTr0ub4dor3, 100")
KERNEL = "\n".join([
    "[  812.100001] node kernel: amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=10, emitted seq=12",
    f"[  812.100002] node kernel: amdgpu 0000:03:00.0: amdgpu:  Process python3 "
    f"--api-key=sk-live0123456789abcdefghij {ESC_TITLE} pid 4242 thread python3 pid 4242",
    f"[  813.200000] node kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python3{CLEAR}, "
    f"Graphics Exception: API_KEY=abcd1234secret {RLO}ESR 0x404600=0x80000002",
])


def _control_characters(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f
                   or c in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"})


def _strings(data) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for value in data.values() for s in _strings(value)]
    if isinstance(data, list):
        return [s for item in data for s in _strings(item)]
    return []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux probes")
def test_checks_screen_shows_other_users_text_neutral_and_without_its_secrets(tmp_path, isolated_env, fake_bin):
    nv = os.path.join(os.path.dirname(__file__), "fixtures", "nvidia-smi")
    uuid = "GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0"
    (tmp_path / "apps.txt").write_text("".join(f"{uuid}, {row}\n" for row in PROCESSES))
    (tmp_path / "kernel.txt").write_text(KERNEL + "\n")
    fake_bin.add("nvidia-smi", f"""case "$*" in
      *query-gpu*) cat '{nv}/linux-h200-driver580-query-gpu-busy-other-process.txt' ;;
      *query-compute-apps*) cat '{tmp_path / "apps.txt"}' ;;
      -L) cat '{nv}/linux-h200-driver580-list.txt' ;;
    esac
    """)
    fake_bin.add("journalctl", f"cat '{tmp_path / 'kernel.txt'}'\n")
    shown = {}
    for form in ((), ("--json",), ("-v",)):
        done = subprocess.run([sys.executable, "-m", "rocm_doctor", "check", "--no-gpu", *form], cwd=tmp_path,
                              env=isolated_env, capture_output=True, text=True, timeout=120)
        assert done.returncode in (0, 1), done.stderr
        shown[form] = done.stdout
    strings = _strings(json.loads(shown[("--json",)]))
    assert [_control_characters(text) for text in (*shown.values(), *strings) if _control_characters(text)] == []
    assert [secret for secret in PLANTED if any(secret in text for text in shown.values())] == []
    # what was planted is shown, visibly: the processes, the Xid line and the kernel's quote of a process
    for text in (shown[()], shown[("-v",)], "\n".join(strings)):
        assert "--password <redacted>" in text and "\\x1b]0;owned\\x07" in text and "\\u202e" in text
        assert "API_KEY=<redacted>" in text and "mysql -p<redacted>" in text
    # and the screen says in words what is not screened: the user's own environment, with the copy to share
    for text in (shown[()], shown[("-v",)]):
        assert ("Not redacted: this shows values of your own environment as they are set. To share it, "
                "rocm-doctor report writes a redacted copy.") in text
    assert json.loads(shown[("--json",)])["redacted"] is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux tools")
def test_a_live_gpu_sample_with_every_tool_hung_costs_one_timeout(fake_bin):
    """The sampler taken around each stage: nvidia-smi and rocm-smi hang; one after the other they would take three
    timeouts (the GPU query, the process query, rocm-smi), side by side under one deadline they take one."""
    from rocm_doctor.probes.gpu_sample import sampler

    for name in ("nvidia-smi", "rocm-smi"):
        fake_bin.add(name, "exec sleep 600\n")
    started = time.monotonic()
    taken = sampler({"PATH": f"{fake_bin.path}{os.pathsep}/usr/bin{os.pathsep}/bin"}, "linux", timeout_s=1.0)()
    took = time.monotonic() - started
    commands = taken["commands"]
    assert sorted(commands) == ["nvidia-smi-compute-apps", "nvidia-smi-query-gpu", "rocm-smi-live-json"]
    assert all(record["timed_out"] for record in commands.values())
    assert took < 2.5, f"one sample took {took:.1f} s"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux kernel log")
@pytest.mark.parametrize("journal", ["reads", "hangs"])
def test_dmesg_runs_beside_journalctl_and_is_kept_only_when_the_journal_failed(fake_bin, journal):
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.probes import ProbeContext, Recorder
    from rocm_doctor.probes import kernel_log

    line = "[    5.100000] node kernel: amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!"
    fake_bin.add("journalctl", f"echo '{line}'\n" if journal == "reads" else "exec sleep 600\n")
    fake_bin.add("dmesg", "echo '[    5.100000] amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!'\n")
    env = dict(os.environ, PATH=f"{fake_bin.path}{os.pathsep}/usr/bin{os.pathsep}/bin")
    context = ProbeContext(python=sys.executable, python_reason="", platform_os="linux", env=env,
                           command_timeout_s=1.0, deadline=time.monotonic() + 1.0)
    observations = Observations()
    old_path, os.environ["PATH"] = os.environ["PATH"], env["PATH"]  # the probe runs them by name
    try:
        started = time.monotonic()
        kernel_log.collect(Recorder(observations, context))
        took = time.monotonic() - started
    finally:
        os.environ["PATH"] = old_path
    if journal == "reads":
        assert sorted(observations.commands) == ["journalctl-kernel"]
    else:  # the fallback ran beside the hung journal, not after it
        assert observations.command("dmesg-kernel").ok and took < 1.8
