"""The runner with real processes: missing tools, hangs, garbage, floods, crashes."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rocm_doctor.engine.runner import run


def test_success_captures_output():
    result = run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"])
    assert result.ok and result.returncode == 0
    assert result.stdout == "out\n" and result.stderr == "err\n"


def test_missing_executable_is_recorded_not_raised():
    result = run(["definitely-not-a-real-tool-xyz", "--full"])
    assert result.error == "not found" and result.returncode is None and not result.ok
    assert "could not run" in result.describe()


def test_timeout_kills_the_whole_process_tree(tmp_path):
    marker = tmp_path / "grandchild-alive"
    inner = f"import time; time.sleep(3); open({str(marker)!r}, 'w').write('x')"
    script = f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {inner!r}])\ntime.sleep(60)\n"
    started = time.monotonic()
    result = run([sys.executable, "-c", script], timeout=1.0)
    assert result.timed_out and not result.ok
    assert time.monotonic() - started < 10
    time.sleep(3.5)
    assert not marker.exists(), "the grandchild survived the timeout kill"


def test_invalid_utf8_is_replaced():
    result = run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'gfx\\xff\\xfe1032\\n')"])
    assert result.invalid_utf8
    assert "gfx" in result.stdout and "1032" in result.stdout and "\ufffd" in result.stdout


def test_output_is_capped():
    result = run(
        [sys.executable, "-c", "import sys; sys.stdout.write('x' * 5_000_000)"],
        output_cap=100_000,
    )
    assert len(result.stdout) == 100_000
    assert result.stdout_truncated_bytes == 4_900_000 and result.truncated


def test_signal_is_reported():
    result = run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    assert result.signal == signal.SIGSEGV
    assert "SIGSEGV" in result.describe()


def test_nonzero_exit_and_stdin():
    result = run([sys.executable, "-c", "import sys; d=sys.stdin.read(); sys.exit(len(d))"], stdin_data=b"abc")
    assert result.returncode == 3 and not result.ok


def test_round_trip_through_dict():
    from rocm_doctor.engine.runner import CommandResult

    result = run([sys.executable, "-c", "print(1)"])
    assert CommandResult.from_dict(result.to_dict()) == result


def test_a_tools_background_child_ends_with_the_tool(tmp_path):
    """A tool that starts a child in the background (`tool &`) and exits: the child is in the tool's process
    group, which is ended when the tool is done."""
    if sys.platform == "win32":
        return
    marker = tmp_path / "background-child-alive"
    inner = f"import time; time.sleep(2); open({str(marker)!r}, 'w').write('x')"
    script = (f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {inner!r}], stdout=subprocess.DEVNULL,"
              " stderr=subprocess.DEVNULL)\nprint('started')\n")
    result = run([sys.executable, "-c", script], timeout=10.0)
    assert result.ok and result.stdout == "started\n"
    time.sleep(3)
    assert not marker.exists(), "the background child outlived its tool"


# A tool that starts a child which calls setsid() (leaving the tool's process group and session) and sleeps; the
# child holds the tool's output pipes unless `quiet`. The tool then exits, or hangs.
_ESCAPING_TOOL = """import os, sys, time
mode, pidfile, quiet = sys.argv[1:4]
if os.fork() == 0:
    os.setsid()
    if quiet == "quiet":
        os.dup2(os.open(os.devnull, os.O_RDWR), 1)
        os.dup2(os.open(os.devnull, os.O_RDWR), 2)
    open(pidfile, "w").write(str(os.getpid()))
    time.sleep(60)
    os._exit(0)
while not os.path.exists(pidfile):
    time.sleep(0.01)
print("tool done", flush=True)
if mode == "hang":
    time.sleep(60)
"""
# The doctor's side, in a process of its own (it becomes a subreaper, which the test process must not). `beside`:
# another child runs on meanwhile, started by run() in a thread or by start().
_DOCTOR = """import json, os, sys, threading, time
from rocm_doctor.engine import runner

def state(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"

mode, pidfile, timeout, quiet, beside = sys.argv[1:6]
other = [sys.executable, "-c", "import time; time.sleep(2)"]
runner.stop_children_on_signals()
if beside == "run":
    thread = threading.Thread(target=runner.run, args=(other,))
    thread.start()
    time.sleep(0.3)
elif beside == "start":
    started = runner.start(other)
result = runner.run(["escaping-tool", mode, pidfile, quiet], timeout=float(timeout))
pid = int(open(pidfile).read())
now = state(pid)
if beside == "run":
    thread.join()
elif beside == "start":
    started.wait()
print(json.dumps({"stdout": result.stdout, "timed_out": result.timed_out, "now": now, "later": state(pid)}))
"""
ENDED = ("gone", "Z", "X")


def alive(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] not in ENDED
    except OSError:
        return False


# (tool, its timeout, whether its child holds the output, what else runs, when the child must have ended)
ESCAPES = [("exit", 20.0, "loud", "alone", "now"), ("hang", 2.0, "loud", "alone", "now"),
           ("exit", 20.0, "loud", "run", "now"),  # told apart by the output pipes it holds
           ("exit", 20.0, "quiet", "run", "later"),  # nothing ties it to its tool: once no other child runs
           ("exit", 20.0, "quiet", "start", "exit")]  # ... or when the doctor exits


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is Linux's")
@pytest.mark.parametrize("case", ESCAPES, ids=["-".join(case[::2] + case[3:4]) for case in ESCAPES])
def test_a_child_that_leaves_the_tools_process_group_ends_with_the_tool(tmp_path, case):
    """setsid() takes the child out of the process group the runner kills; adopted by the doctor as subreaper, it
    ends when its tool exits or times out, and the tool's output it held open is kept."""
    mode, timeout, quiet, beside, when = case
    tool = tmp_path / "escaping-tool"
    tool.write_text(f"#!{sys.executable}\n{_ESCAPING_TOOL}")
    tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    pidfile = tmp_path / "grandchild"
    done = subprocess.run([sys.executable, "-c", _DOCTOR, mode, str(pidfile), str(timeout), quiet, beside], env=env,
                          capture_output=True, text=True, timeout=60)
    pid = int(pidfile.read_text())
    try:
        seen = json.loads(done.stdout)
        assert (seen["stdout"], seen["timed_out"]) == ("tool done\n", mode == "hang"), done.stderr
        if when == "exit":
            assert not alive(pid), "the setsid child outlived the doctor"
        else:
            assert seen[when] in ENDED, "the setsid child outlived its tool"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
def test_the_wait_ends_with_the_child_or_says_it_ran_past_its_time(monkeypatch, pidfd):
    from rocm_doctor.engine import runner

    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            runner._wait_for_exit(slow, 0.05)
        assert slow.returncode is None
    finally:
        slow.kill()
        slow.wait()
    quick = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    runner._wait_for_exit(quick, 30)
    assert quick.returncode == 3
    runner._wait_for_exit(quick, 30)  # already reaped: nothing to wait for
    assert quick.returncode == 3
