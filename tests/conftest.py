"""Shared fixtures: run the real CLI in a subprocess, fake tools on PATH, fake target interpreters."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import struct
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixture_text():
    def read(relative: str) -> str:
        return (FIXTURES / relative).read_text(encoding="utf-8", errors="replace")

    return read


def make_executable(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_bin(tmp_path):
    """A folder for fake tools; `add(name, script)` writes an executable shell script into it."""
    folder = tmp_path / "bin"
    folder.mkdir()

    class FakeBin:
        path = folder

        def add(self, name: str, script: str) -> Path:
            return make_executable(folder / name, "#!/bin/sh\n" + textwrap.dedent(script))

        def add_output(self, name: str, fixture: str) -> Path:
            """A tool that prints a recorded real output."""
            return self.add(name, f"cat '{FIXTURES / fixture}'\n")

    return FakeBin()


@pytest.fixture
def fake_python(tmp_path):
    """A target interpreter whose `import torch` finds a fake torch package written by the test."""

    def build(torch_init: str, name: str = "fakepy") -> Path:
        site = tmp_path / f"{name}-site"
        (site / "torch").mkdir(parents=True)
        (site / "torch" / "__init__.py").write_text(textwrap.dedent(torch_init), encoding="utf-8")
        return make_executable(
            tmp_path / name,
            f"#!/bin/sh\nPYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n",
        )

    return build


@pytest.fixture
def isolated_env(tmp_path, fake_bin):
    """An environment with only the fake tools and the system basics on PATH, and no GPU variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("VISIBLE_DEVICES") and not k.startswith(("HSA_", "HIP_", "ROCM_", "VIRTUAL_ENV", "CONDA"))
    }
    env["PATH"] = f"{fake_bin.path}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env["HOME"] = str(tmp_path / "home")
    env["ROCM_DOCTOR_STATE_DIR"] = str(tmp_path / "state")  # the run history and fix journal stay in the test
    env.pop("NO_COLOR", None)
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


@pytest.fixture
def doctor(tmp_path, isolated_env):
    """Run `rocm-doctor ARGS` as a real process (from a neutral folder, so the installed package is what runs)."""

    def run(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rocm_doctor", *args],
            cwd=tmp_path,
            env=env if env is not None else isolated_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


@pytest.fixture
def report_schema():
    from importlib import resources

    return json.loads(resources.files("rocm_doctor.data").joinpath("report.schema.json").read_text())


SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture
def replayed(doctor):
    """The JSON report of `rocm-doctor check --from tests/snapshots/NAME.json --json [EXTRA...]`, run as a user
    runs it; the exit code must be 0 or 1 (a finding), never an error."""

    def run(name: str, *extra: str) -> dict:
        result = doctor("check", "--from", str(SNAPSHOTS / f"{name}.json"), "--json", *extra)
        assert result.returncode in (0, 1), result.stderr
        return json.loads(result.stdout)

    return run


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def terminal():
    """Run a command with a real terminal of a given width (a pty), as a user sees it: where rich wraps and where
    the progress line is drawn. Returns (what the terminal showed, exit code, when each chunk of output came)."""
    return _run_in_pty


def _run_in_pty(argv: list[str], env: dict, width: int, cwd: Path, stderr_too: bool = False,
                timeout: float = 120) -> tuple[str, int, list[float]]:
    """(what the terminal showed, exit code, seconds from start at which each chunk of output arrived). With
    `stderr_too` standard error goes to the terminal as well (the progress line), else to /dev/null."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=slave, stderr=slave if stderr_too else subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    os.close(slave)
    chunks, times = [], []
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
        times.append(time.monotonic() - start)
    code = proc.wait(timeout=60)
    os.close(master)
    shown = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    return shown.replace("\r\n", "\n").replace("\r", "\n"), code, times
