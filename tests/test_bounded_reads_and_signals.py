"""Inputs read bounded (files, pipes, FIFOs, devices), children ended by a signal to the doctor, temporary files
of killed runs swept, and the data folder reset from any state."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rocm_doctor import inputfile, safefile
from rocm_doctor.fix import journal
from rocm_doctor.knowledge import update


# -- inputfile ----------------------------------------------------------------------------------------------------
def test_a_file_is_read_whole_and_refused_past_the_limit(tmp_path):
    path = tmp_path / "snap.json"
    path.write_bytes(b"x" * 1000)
    assert inputfile.read(path) == b"x" * 1000
    with pytest.raises(inputfile.InputError, match="is more than the 0 MiB an input may have"):
        inputfile.read(path, limit=999)


def test_the_tail_of_a_file_and_of_a_pipe():
    data = bytes(range(256)) * 40
    read_end, write_end = os.pipe()

    def writer():
        with os.fdopen(write_end, "wb") as handle:
            for i in range(0, len(data), 777):
                handle.write(data[i:i + 777])
                handle.flush()

    thread = threading.Thread(target=writer)
    thread.start()
    tail, truncated = inputfile.read_tail(f"/dev/fd/{read_end}", 1000)
    thread.join()
    os.close(read_end)
    assert (tail, truncated) == (data[-1000:], True)


def test_a_file_tail_is_read_from_its_end(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(b"a" * 5000 + b"the end")
    assert inputfile.read_tail(path, 7) == (b"the end", True)
    assert inputfile.read_tail(path, 10_000) == (b"a" * 5000 + b"the end", False)


def test_a_pipe_without_an_end_is_refused_after_the_limit():
    read_end, write_end = os.pipe()
    stop = threading.Event()

    def writer():
        with os.fdopen(write_end, "wb") as handle:
            while not stop.is_set():
                try:
                    handle.write(b"y" * 65536)
                except BrokenPipeError:
                    return

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        with pytest.raises(inputfile.InputError, match="without an end"):
            inputfile.read_tail(f"/dev/fd/{read_end}", 100, limit=1 << 20)
        with pytest.raises(inputfile.InputError, match="more than the 1 MiB"):
            inputfile.read(f"/dev/fd/{read_end}", limit=1 << 20)
    finally:
        stop.set()
        os.close(read_end)


def test_a_pipe_that_never_ends_is_refused_at_the_deadline(monkeypatch):
    monkeypatch.setattr(inputfile, "STREAM_TIMEOUT_S", 0.5)
    read_end, write_end = os.pipe()
    started = time.monotonic()
    try:
        with pytest.raises(inputfile.InputError, match="no end of input within 0.5 s"):
            inputfile.read(f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
        os.close(write_end)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("make, message", [
    (lambda p: os.mkfifo(p), "is a named pipe (FIFO)"),
    (lambda p: p.mkdir(), "is a folder, not a file"),
    (lambda p: None, "no such file"),
])
def test_what_is_refused_at_once(tmp_path, make, message):
    path = tmp_path / "input"
    make(path)
    started = time.monotonic()
    with pytest.raises(inputfile.InputError, match=re.escape(message)):
        inputfile.read(path)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_is_refused(device):
    with pytest.raises(inputfile.InputError, match="is a device, not a file or a pipe"):
        inputfile.read_tail(device, 100)


# -- signals ------------------------------------------------------------------------------------------------------
def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum, message", [(signal.SIGTERM, "rocm-doctor: stopped by SIGTERM"),
                                             (signal.SIGINT, "rocm-doctor: interrupted")])
def test_a_signal_to_the_doctor_ends_its_children(tmp_path, isolated_env, fake_bin, signum, message):
    pid_file = tmp_path / "hipconfig.pid"
    fake_bin.add("hipconfig", f"echo $$ > '{pid_file}'\nexec sleep 600\n")
    proc = subprocess.Popen([sys.executable, "-m", "rocm_doctor", "check", "--no-history", "--command-timeout", "300"],
                            cwd=tmp_path, env=isolated_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        child = int(pid_file.read_text())
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, err
    assert err.strip().splitlines()[-1] == message and "Traceback" not in err
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(child), "the probe's child outlived the doctor"


# -- temporary files of killed runs -------------------------------------------------------------------------------
def _leftover(folder: Path, target: str, age_s: float, hexname: str = "0123456789ab") -> Path:
    path = folder / f".{target}.{hexname}{safefile.TMP_SUFFIX}"
    path.write_text("the whole new file")
    os.utime(path, (time.time() - age_s, time.time() - age_s))
    return path


def test_the_next_write_sweeps_what_a_killed_write_left(tmp_path):
    old = _leftover(tmp_path, "out.md", safefile.STALE_S + 60)
    fresh = _leftover(tmp_path, "out.md", 1, "ba9876543210")  # a concurrent run may be writing it
    other = _leftover(tmp_path, "other.md", safefile.STALE_S + 60)
    link = tmp_path / f".out.md.aaaaaaaaaaaa{safefile.TMP_SUFFIX}"
    link.symlink_to(tmp_path / "victim")
    safefile.write(tmp_path / "out.md", "report")
    assert not old.exists() and fresh.exists() and other.exists() and link.is_symlink()
    assert (tmp_path / "out.md").read_text() == "report"


def test_fix_sweeps_beside_every_file_its_journal_names(tmp_path, isolated_env):
    home, state = Path(isolated_env["HOME"]), Path(isolated_env["ROCM_DOCTOR_STATE_DIR"])
    rc = home / ".bashrc"
    rc.write_text("export HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    run = journal.Journal.create(state, {"findings": []})
    run.append({"event": "intent", "seq": 1, "target": {"type": "file", "path": str(rc)}, "summary": "edit"})
    left = _leftover(home, ".bashrc", safefile.STALE_S + 60)
    assert journal.sweep_leftovers(state) == [left] and not left.exists()
    again = _leftover(home, ".bashrc", safefile.STALE_S + 60)
    proc = subprocess.run([sys.executable, "-m", "rocm_doctor", "fix", "--history"], cwd=tmp_path, env=isolated_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert not again.exists() and rc.read_text() == "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n"


# -- data reset ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("state", ["current is a folder", "current is a dangling link", "bundles is a file",
                                   "leftover temporary pointer", "bundles is a link"])
def test_data_reset_recovers_from_any_state(tmp_path, state):
    data = tmp_path / "data"
    data.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not ours")
    if state == "current is a folder":
        (data / "current" / "x").mkdir(parents=True)
    elif state == "current is a dangling link":
        (data / "current").symlink_to(tmp_path / "nowhere")
    elif state == "bundles is a file":
        (data / "bundles").write_text("?")
        (data / "current").write_text("abc")
    elif state == "leftover temporary pointer":
        _leftover(data, "current", 5)
    else:
        (data / "bundles").symlink_to(outside)
    assert update.installed(data) is None
    assert update.uninstall(data) is True
    assert os.listdir(data) == [] and (outside / "keep.txt").exists()
    assert update.uninstall(data) is False


def test_data_reset_when_the_data_folder_is_a_file(tmp_path):
    path = tmp_path / "data"
    path.write_text("a file")
    with pytest.raises(update.UpdateError, match="is not a folder"):
        update.uninstall(path)
    assert path.read_text() == "a file" and update.installed(path) is None


def test_data_reset_command_in_each_state(tmp_path, isolated_env):
    (tmp_path / "a" / "current").mkdir(parents=True)
    (tmp_path / "b").write_text("file")
    results = {}
    for name in ("a", "b"):
        env = dict(isolated_env, ROCM_DOCTOR_DATA_DIR=str(tmp_path / name))
        proc = subprocess.run([sys.executable, "-m", "rocm_doctor", "data", "reset"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
        results[name] = (proc.returncode, (proc.stdout + proc.stderr).strip())
    assert results["a"] == (0, "downloaded data removed; using the embedded data")
    assert results["b"][0] == 2 and results["b"][1].startswith("rocm-doctor: error: data reset: ")
    assert json.loads(subprocess.run([sys.executable, "-m", "rocm_doctor", "data", "show", "--json"], cwd=tmp_path,
                                     env=dict(isolated_env, ROCM_DOCTOR_DATA_DIR=str(tmp_path / "b")),
                                     capture_output=True, text=True, timeout=60).stdout)["active"]["origin"] == "embedded"


def test_a_signal_inside_the_import_machinery_lands_again_outside_it(monkeypatch):
    from rocm_doctor.engine import runner

    delivered = []
    monkeypatch.setattr(runner, "stop_children", lambda: None)
    monkeypatch.setattr(runner, "_signalled", [])
    monkeypatch.setattr(signal, "raise_signal", delivered.append)
    scope: dict = {}
    exec(compile("import sys\nframe = sys._getframe()", "<frozen importlib._bootstrap>", "exec"), scope)
    runner._on_signal(signal.SIGINT, scope["frame"])  # no exception inside importlib: it could keep its lock held
    deadline = time.monotonic() + 5
    while not delivered and time.monotonic() < deadline:
        time.sleep(0.01)
    # Kept for the exit too, should its Interrupted never reach the command.
    assert delivered == [signal.SIGINT] and runner.signalled() == signal.SIGINT
    with pytest.raises(runner.Interrupted):
        runner._on_signal(signal.SIGINT, sys._getframe())
