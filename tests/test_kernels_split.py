"""`check` starts the kernel suite's one child before the probes (it imports torch while they run) and uses it
when the stage runs with the same interpreter and environment, else ends it; the library-log child runs where its
log can show a problem. Several children computing on one GPU at once were measured slower than one after the other,
so only the one child starts early."""

import sys
import time

import pytest

from rocm_doctor.gpu.kernels import stage as kernel_stage

PY = sys.executable


def test_a_cancelled_child_is_ended_at_once_and_says_why():
    import threading as _threading

    from rocm_doctor.engine import runner

    cancel = _threading.Event()
    _threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = runner.run([PY, "-c", "import time; time.sleep(30)"], timeout=60, cancel=cancel)
    assert time.monotonic() - started < 5
    assert result.error.startswith("cancelled") and not result.timed_out


def test_the_suite_started_early_is_used_when_the_stage_runs_with_the_same_interpreter(monkeypatch, tmp_path):
    node = tmp_path / "kfd"
    node.write_text("")
    monkeypatch.setattr(kernel_stage, "GPU_NODES", (str(node),))
    started, stopped, ran_now = [], [], []

    class FakeBackground:
        def __init__(self, python, options):
            self.python, self.env = python, dict(options.env)
            started.append(self)

        def result(self):
            return {"hello": {"vendor": "cpu"}, "fatal": None, "results": [], "children": [], "from": self}

        def stop(self):
            stopped.append(self)

    def run_now(python, options):
        ran_now.append(options)
        return {"hello": {"vendor": "cpu"}, "fatal": None, "results": [], "children": [], "from": "now"}

    monkeypatch.setattr(kernel_stage, "BackgroundSuite", FakeBackground)
    monkeypatch.setattr(kernel_stage, "run_suite", run_now)
    monkeypatch.setattr(kernel_stage, "analyse", lambda suite, log: {})

    class Facts:
        env = {"A": "1"}
        os = "linux"

        def get(self, key, default=None):
            return default

    stage = kernel_stage.KernelStage(kernel_stage.ConfirmOptions(python=PY, override_ab=False))
    stage.start_early(PY, {"A": "1"})
    assert stage.run(Facts())["suite"]["from"] is started[0] and not stopped and not ran_now

    stage.start_early(PY, {"A": "2"})  # another environment than the facts': ended, and the suite runs anew
    assert stage.run(Facts())["suite"]["from"] == "now" and stopped == [started[1]]

    stage.start_early(PY, {"A": "1"})
    stage.discard_early()  # the stage was skipped
    assert stopped == [started[1], started[2]]


@pytest.mark.parametrize("when,vendor,outcome,runs", [
    ("needed", "amd", "ok", True),      # rocBLAS/MIOpen log fallbacks even when every case passes
    ("needed", "nvidia", "ok", False),  # cuBLAS/cuDNN: nothing a passing suite would report
    ("needed", "nvidia", "wrong", True),
    ("always", "nvidia", "ok", True),
    ("never", "amd", "crashed", False),
    ("always", "cpu", "ok", False),
])
def test_the_library_log_child_runs_where_its_log_can_show_a_problem(when, vendor, outcome, runs):
    suite = {"fatal": None, "results": [{"case": "mm-float32", "outcome": outcome}]}
    assert (kernel_stage.logs_not_needed(when, vendor, suite) is None) is runs


def test_nothing_starts_early_without_a_gpu_device_node(monkeypatch, tmp_path):
    monkeypatch.setattr(kernel_stage, "GPU_NODES", (str(tmp_path / "absent"),))
    stage = kernel_stage.KernelStage()
    stage.start_early(PY, {})
    assert stage._early is None
    stage.discard_early()
