"""The slowest probe starts first, and the caller's work runs while the probes wait on their children: what keeps
`check` close to the time of the torch child alone."""

import sys
import threading

from rocm_doctor import probes
from rocm_doctor.probes import ProbeContext, torch_probe


def test_the_torch_probe_comes_first():
    modules = probes.probe_modules("linux", {})
    assert next(modules) is torch_probe
    assert torch_probe not in list(modules)


def test_meanwhile_runs_while_the_torch_probe_is_still_running(monkeypatch):
    caller_ran = threading.Event()
    seen = {}

    def slow_torch_probe(recorder):  # stands for the child importing torch
        seen["caller ran while this probe ran"] = caller_ran.wait(timeout=30)

    monkeypatch.setattr(torch_probe, "collect", slow_torch_probe)
    context = ProbeContext(python=sys.executable, python_reason="test", platform_os="linux", command_timeout_s=5)
    probes.collect(context, meanwhile=caller_ran.set)
    assert seen == {"caller ran while this probe ran": True}
