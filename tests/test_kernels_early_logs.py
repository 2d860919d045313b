"""`rocm-doctor kernels` starts the library-log child beside the suite's: it imports torch and waits at its gate,
touching the GPU only once the suite is done; the stage opens the gate when the log is wanted and ends it otherwise."""

import sys
import time

import pytest

from rocm_doctor.gpu.kernels import liblogs
from rocm_doctor.gpu.kernels import stage as kernel_stage
from rocm_doctor.gpu.kernels.harness import CHILD, MARKER, SuiteOptions
from rocm_doctor.engine.child import run_child

PY = sys.executable


@pytest.mark.parametrize("nodes,vendor", [
    ({"/dev/nvidiactl"}, "nvidia"), ({"/dev/kfd"}, "amd"), (set(), None), ({"/dev/nvidiactl", "/dev/kfd"}, None),
])
def test_the_device_node_names_the_vendor_only_when_there_is_one(nodes, vendor):
    assert liblogs.vendor_of_nodes(exists=nodes.__contains__) == vendor


@pytest.mark.slow
def test_a_child_whose_gate_never_opens_touches_nothing_and_says_why(tmp_path):
    payload = SuiteOptions(device="cpu", cases=["alloc-fill"]).payload(["alloc-fill"])
    payload.update(gate=str(tmp_path / "go"), gate_s=0.2)
    run = run_child(PY, CHILD, payload, timeout=120, marker=MARKER)
    kinds = [r[MARKER] for r in run.records]
    assert "fatal" in kinds and "begin" not in kinds and "hello" not in kinds
    assert next(r for r in run.records if r[MARKER] == "fatal")["stage"] == "gate"


@pytest.mark.slow
def test_the_early_log_child_runs_its_cases_once_the_gate_opens_and_a_stopped_one_ends():
    early = liblogs.Early(PY, "nvidia", {}, "cpu", timeout=120)
    time.sleep(0.5)
    assert not early.future.done()  # waiting at its gate
    logs = early.go()
    assert logs["ran"] and logs["state"] == "ok" and logs["variables"] == liblogs.NVIDIA_LOG_ENV
    assert set(logs["cases"]) == set(liblogs.LOG_CASES) and set(logs["cases"].values()) == {"ok"}

    stopped = liblogs.Early(PY, "nvidia", {}, "cpu", timeout=120)
    started = time.monotonic()
    stopped.stop()
    assert stopped.future.result(timeout=30)["state"] != "ok" and time.monotonic() - started < 30


def test_the_stage_opens_the_gate_for_its_vendor_and_ends_it_otherwise(monkeypatch):
    made = []

    class FakeEarly:
        def __init__(self, python, vendor, env, device, timeout):
            self.vendor, self.opened, self.stopped = vendor, False, False
            made.append(self)

        def go(self):
            self.opened = True
            return {"ran": True, "early": True}

        def stop(self):
            self.stopped = True

    def suite_of(vendor, outcome="ok"):
        return lambda python, options: {"hello": {"vendor": vendor}, "fatal": None,
                                        "results": [{"case": "mm-float32", "outcome": outcome}], "children": []}

    monkeypatch.setattr(liblogs, "Early", FakeEarly)
    monkeypatch.setattr(liblogs, "vendor_of_nodes", lambda: "nvidia")
    monkeypatch.setattr(liblogs, "capture", lambda *a, **k: {"ran": True, "early": False})
    monkeypatch.setattr(kernel_stage, "analyse", lambda suite, log: {})
    options = kernel_stage.ConfirmOptions(python=PY, override_ab=False, env={}, platform_os="linux")

    monkeypatch.setattr(kernel_stage, "run_suite", suite_of("nvidia"))
    assert kernel_stage.confirm(None, options)["library_logs"]["early"] and made[-1].opened

    monkeypatch.setattr(kernel_stage, "run_suite", suite_of("amd"))  # another vendor than the node said
    logs = kernel_stage.confirm(None, options)["library_logs"]
    assert logs["early"] is False and made[-1].stopped and not made[-1].opened

    needed = kernel_stage.ConfirmOptions(python=PY, override_ab=False, env={}, platform_os="linux",
                                         library_logs="needed")
    monkeypatch.setattr(kernel_stage, "run_suite", suite_of("nvidia"))
    count = len(made)
    assert kernel_stage.confirm(None, needed)["library_logs"]["ran"] is False and len(made) == count


@pytest.mark.parametrize("when,vendor,starts", [
    ("always", "nvidia", True), ("needed", "amd", True), ("needed", "nvidia", False), ("never", "amd", False),
])
def test_the_log_child_starts_early_only_where_its_log_is_wanted_whatever_the_outcomes(monkeypatch, when, vendor,
                                                                                      starts):
    monkeypatch.setattr(liblogs, "vendor_of_nodes", lambda: vendor)
    monkeypatch.setattr(liblogs, "Early", lambda *args: args[1])
    options = kernel_stage.ConfirmOptions(python=PY, library_logs=when)
    assert (kernel_stage.start_logs(options, PY, {}, 60.0) == vendor) is starts
