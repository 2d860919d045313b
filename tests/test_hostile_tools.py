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
