"""`check` starts the kernel suite's one child before the probes (it imports torch while they run) and uses it
when the stage runs with the same interpreter and environment, else ends it; the library-log child runs where its
log can show a problem. Several children computing on one GPU at once were measured slower than one after the other,
so only the one child starts early."""

import sys
import time

import pytest

from rocm_doctor.gpu.kernels import stage as kernel_stage

PY = sys.executable


class NoFacts:
    """What a kernel stage reads of the facts: the environment {"A": "1"} on Linux, every fact missing."""

    env = {"A": "1"}
    os = "linux"

    def get(self, key, default=None):
        return default


@pytest.fixture
def gpu_node(monkeypatch, tmp_path):
    """A GPU device node, so the stage starts its suite early."""
    node = tmp_path / "kfd"
    node.write_text("")
    monkeypatch.setattr(kernel_stage, "GPU_NODES", (str(node),))


def test_a_cancelled_child_is_ended_at_once_and_says_why():
    import threading as _threading

    from rocm_doctor.engine import runner

    cancel = _threading.Event()
    _threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = runner.run([PY, "-c", "import time; time.sleep(30)"], timeout=60, cancel=cancel)
    assert time.monotonic() - started < 5
    assert result.error.startswith("cancelled") and not result.timed_out


def test_the_suite_started_early_is_used_when_the_stage_runs_with_the_same_interpreter(monkeypatch, gpu_node):
    started, stopped, ran_now, released = [], [], [], []

    class FakeBackground:
        def __init__(self, python, options, hold=False):
            self.python, self.env, self.hold = python, dict(options.env), hold
            started.append(self)

        def release(self):
            released.append(self)

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

    stage = kernel_stage.KernelStage(kernel_stage.ConfirmOptions(python=PY, override_ab=False))
    stage.start_early(PY, {"A": "1"})
    assert started[0].hold and not released  # it holds its first case while the probes run ...
    stage.probes_done()
    assert released == [started[0]]  # ... and computes once they have ended
    assert stage.run(NoFacts())["suite"]["from"] is started[0] and not stopped and not ran_now

    stage.start_early(PY, {"A": "2"})  # another environment than the facts': ended, and the suite runs anew
    assert stage.run(NoFacts())["suite"]["from"] == "now" and stopped == [started[1]]

    stage.start_early(PY, {"A": "1"})
    stage.discard_early()  # the stage was skipped
    assert stopped == [started[1], started[2]]


def test_the_sample_before_an_early_suite_is_taken_before_its_first_case_and_reused(monkeypatch, gpu_node):
    events = []

    class FakeBackground:
        def __init__(self, python, options, hold=False):
            self.python, self.env = python, dict(options.env)

        def release(self):
            events.append("released")

        def result(self):
            events.append("result")
            return {"hello": {"vendor": "cpu"}, "fatal": None, "results": [], "children": []}

        def stop(self):
            pass

    def sample():
        events.append("sampled")
        return {"commands": {}, "n": len(events)}

    monkeypatch.setattr(kernel_stage, "BackgroundSuite", FakeBackground)
    monkeypatch.setattr(kernel_stage, "run_suite", lambda python, options: FakeBackground(python, options).result())
    monkeypatch.setattr(kernel_stage, "analyse", lambda suite, log: {})

    stage = kernel_stage.KernelStage(kernel_stage.ConfirmOptions(python=PY, override_ab=False))
    stage.start_early(PY, {"A": "1"})
    stage.probes_done(sample)
    assert events == ["sampled", "released"]  # no GPU query beside the suite's first cases
    live = stage.run_watched(NoFacts(), None, sample)["live"]["samples"]
    assert events == ["sampled", "released", "result", "sampled"]
    assert [s["marks"] for s in live] == [["before"], ["after"]] and live[0]["n"] == 1
    assert stage.run_watched(NoFacts(), None, sample)["live"]["samples"][0]["marks"] == ["before"]  # taken anew
    assert events[-3:] == ["sampled", "result", "sampled"]


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


def test_a_request_lets_its_early_work_compute_once_the_probes_have_ended(monkeypatch):
    import types

    from rocm_doctor import diagnose as diagnose_module
    from rocm_doctor.engine.pipeline import Stage

    calls = []

    class Recording(Stage):
        name, probe_key, provides = "recording", "recording", ()

        def start_early(self, python, env):
            calls.append("start_early")

        def probes_done(self, sample=None):
            calls.append("probes_done")

        def discard_early(self):
            calls.append("discard_early")

    seen = types.SimpleNamespace(platform={"os": "linux"})

    def observe(options, meanwhile):
        meanwhile()
        calls.append("observe")
        return seen

    monkeypatch.setattr(diagnose_module, "observe", observe)
    monkeypatch.setattr(diagnose_module, "_judge", lambda observations, *rest: calls.append("judge") or observations)
    monkeypatch.setattr(diagnose_module, "load_registry", lambda: types.SimpleNamespace(checks=[]))
    monkeypatch.setattr(diagnose_module, "interpreter_modules", lambda known: None)
    assert diagnose_module.diagnose(diagnose_module.Options(stages=[Recording()])) is seen
    assert calls == ["start_early", "observe", "probes_done", "judge", "discard_early"]
