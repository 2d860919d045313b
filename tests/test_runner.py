"""The runner with real processes: missing tools, hangs, garbage, floods, crashes."""

import signal
import sys
import time

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
