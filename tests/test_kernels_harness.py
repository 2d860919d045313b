"""The kernel suite end to end on the CPU device, with real child processes, and its fault handling."""

import os
import sys
import textwrap

import pytest

from rocm_doctor.gpu.kernels.harness import BackgroundSuite, SuiteOptions, run_suite

pytestmark = pytest.mark.slow

PY = sys.executable
REQUIRED_CATEGORIES = {
    "memory", "elementwise", "reduction", "matmul", "linear", "conv", "norm", "pooling", "softmax", "embedding",
    "index", "sort", "fft", "rng", "sdpa", "autocast", "jit", "streams", "devices",
}
GPU_ONLY = {"pinned-async-copy", "jiterator-float32", "jiterator-float16", "stream-event-timing", "event-query",
            "device-0"}

FAULTY = textwrap.dedent('''
    import os, signal, time
    from _doctor_cases import case

    def _segv(ctx):
        os.kill(os.getpid(), signal.SIGSEGV)

    def _hang(ctx):
        time.sleep(120)

    def _wrong(ctx):
        a = ctx.randn(1000)
        return ctx.dev(a) * 1.01, a

    def _nan(ctx):
        a = ctx.randn(1000)
        out = ctx.dev(a).clone()
        out[3] = float("nan")
        return out, a

    def _raises(ctx):
        raise RuntimeError("HIP error: invalid device function")

    def _good(ctx):
        a = ctx.randn(1000)
        return ctx.dev(a) * 2 + 1, a * 2 + 1

    CASES = [
        case("fault", "good-1", "float32", _good),
        case("fault", "segfault", "float32", _segv),
        case("fault", "good-2", "float32", _good),
        case("fault", "hang", "float32", _hang),
        case("fault", "good-3", "float32", _good),
        case("fault", "wrong", "float32", _wrong),
        case("fault", "nan", "float32", _nan),
        case("fault", "raises", "float32", _raises),
        case("fault", "good-4", "float32", _good),
    ]
''')


@pytest.fixture(scope="module")
def cpu_suite():
    return run_suite(PY, SuiteOptions(device="cpu", case_timeout_s=60))


def test_suite_covers_the_categories_with_60_cases(cpu_suite):
    results = cpu_suite["results"]
    assert len(results) >= 60
    assert REQUIRED_CATEGORIES <= {r["category"] for r in results}
    assert cpu_suite["fatal"] is None
    assert len(cpu_suite["children"]) == 1 and cpu_suite["children"][0]["state"] == "ok"


def test_the_cpu_references_leave_half_the_cores_to_the_rest_of_the_machine(cpu_suite):
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert cpu_suite["hello"]["cpu_threads"] == max(1, min(8, usable // 2))


def test_every_cpu_case_is_ok_or_unavailable_with_a_reason(cpu_suite):
    for record in cpu_suite["results"]:
        assert record["outcome"] in ("ok", "unavailable"), record
        if record["outcome"] == "unavailable":
            assert record["reason"], record
        else:
            assert record["rel_err"] is not None and record["rel_err"] <= record["tol"]


def test_gpu_only_cases_are_unavailable_on_cpu(cpu_suite):
    by_name = {r["case"]: r for r in cpu_suite["results"]}
    for name in GPU_ONLY:
        assert by_name[name]["outcome"] == "unavailable"
        assert "CPU device" in by_name[name]["reason"]


def test_sdpa_backends_report_why_they_are_unavailable(cpu_suite):
    sdpa = {r["case"]: r for r in cpu_suite["results"] if r["category"] == "sdpa"}
    assert {"sdpa-flash-float16", "sdpa-efficient-float16", "sdpa-cudnn-float16", "sdpa-math-float16",
            "sdpa-default-float16"} <= set(sdpa)
    assert sdpa["sdpa-math-float16"]["outcome"] == "ok"
    assert sdpa["sdpa-efficient-float16"]["outcome"] == "unavailable"
    assert "EFFICIENT_ATTENTION not usable here" in sdpa["sdpa-efficient-float16"]["reason"]
    # The profiler's aten ops say which backend really ran.
    assert "math (unfused)" in sdpa["sdpa-math-float16"]["attribution"]["backends"]
    assert sdpa["sdpa-default-float16"]["info"]["chosen"]


def test_tolerances_follow_the_dtype(cpu_suite):
    by_name = {r["case"]: r for r in cpu_suite["results"]}
    assert by_name["mm-float32"]["tol"] == pytest.approx(1e-4)  # no TF32 on the CPU
    assert by_name["mm-float16"]["tol"] == pytest.approx(1e-2)
    assert by_name["mm-bfloat16"]["tol"] == pytest.approx(3e-2)
    assert by_name["int-arith"]["tol"] == 0.0
    assert by_name["randn-normal"]["info"]["n"] > 1_000_000


def test_faults_lose_one_case_each(tmp_path):
    module = tmp_path / "faulty_cases.py"
    module.write_text(FAULTY)
    suite = run_suite(PY, SuiteOptions(device="cpu", only=["fault"], extra_modules=[str(module)], case_timeout_s=4))
    by_name = {r["case"]: r for r in suite["results"]}
    assert [r["case"] for r in suite["results"]][:2] == ["good-1", "segfault"]
    assert by_name["segfault"]["outcome"] == "crashed"
    assert "SIGSEGV" in by_name["segfault"]["detail"]
    assert by_name["hang"]["outcome"] == "hung"
    assert "4 s" in by_name["hang"]["detail"]
    assert by_name["wrong"]["outcome"] == "wrong"
    assert by_name["wrong"]["rel_err"] == pytest.approx(0.01, rel=1e-3)
    assert by_name["nan"]["outcome"] == "wrong" and by_name["nan"]["rel_err"] is None
    assert "non-finite" in by_name["nan"]["notes"][0]
    assert by_name["raises"]["outcome"] == "error"
    assert "invalid device function" in by_name["raises"]["error"]
    for name in ("good-1", "good-2", "good-3", "good-4"):
        assert by_name[name]["outcome"] == "ok", by_name[name]
    # One child per fault that kills the process, plus the last one that finishes.
    assert [c["state"] for c in suite["children"]] == ["crashed", "hung", "ok"]
    assert suite["counts"]["ok"] == 4 and suite["counts"]["crashed"] == 1 and suite["counts"]["hung"] == 1


def test_a_torch_that_aborts_on_import_is_fatal_not_a_hang(fake_python):
    python = fake_python("import os\nos.abort()\n")
    suite = run_suite(str(python), SuiteOptions(device="cpu", case_timeout_s=5, startup_timeout_s=30))
    assert suite["results"] == []
    assert suite["fatal"]["stage"] == "startup"
    assert "SIGABRT" in suite["fatal"]["error"]
    assert len(suite["children"]) == 1


def test_no_gpu_visible_is_reported_by_the_child(fake_python):
    python = fake_python("""
        __version__ = "9.9"
        class cuda:
            @staticmethod
            def is_available():
                return False
    """)
    suite = run_suite(str(python), SuiteOptions(device="cuda", startup_timeout_s=30))
    assert suite["fatal"]["stage"] == "device"
    assert "no GPU visible" in suite["fatal"]["error"]


def test_missing_interpreter_is_not_run():
    suite = run_suite("/nonexistent/python3", SuiteOptions(device="cpu"))
    assert suite["fatal"]["state"] == "not-run"


ATTRIBUTED = textwrap.dedent('''
    import os, signal
    from _doctor_cases import case

    def _conv(ctx, scale):
        x, w = ctx.randn(1, 2, 8, 8), ctx.randn(3, 2, 3, 3)
        out = ctx.F.conv2d(ctx.dev(x), ctx.dev(w)) * scale
        return out, ctx.F.conv2d(x, w)

    def _softmax(ctx):
        x = ctx.randn(4, 16)
        return ctx.torch.softmax(ctx.dev(x), -1), ctx.torch.softmax(x, -1)

    def _segv(ctx):
        os.kill(os.getpid(), signal.SIGSEGV)

    CASES = [
        case("attributed", "conv-ok", "float32", lambda ctx: _conv(ctx, 1.0), profile=True),
        case("attributed", "softmax-unattributed", "float32", _softmax),
        case("attributed", "conv-wrong", "float32", lambda ctx: _conv(ctx, 1.5), profile=True),
        case("attributed", "segfault", "float32", _segv, profile=True),
        case("attributed", "conv-after", "float32", lambda ctx: _conv(ctx, 1.0), profile=True),
    ]
''')


def test_attribution_is_split_by_case_and_survives_a_later_crash(tmp_path):
    module = tmp_path / "attributed_cases.py"
    module.write_text(ATTRIBUTED)
    suite = run_suite(PY, SuiteOptions(device="cpu", only=["attributed"], extra_modules=[str(module)]))
    by_name = {r["case"]: r for r in suite["results"]}
    assert by_name["conv-wrong"]["outcome"] == "wrong" and by_name["segfault"]["outcome"] == "crashed"
    # One profiler session per child, split by case: each attributed case names its own convolution op ...
    for name in ("conv-ok", "conv-wrong", "conv-after"):
        assert by_name[name]["profile"]["ops"], by_name[name]
        assert by_name[name]["attribution"]["backends"], by_name[name]
    # ... a case outside the attribution gets none, and the failed case's kernels were read before the crash.
    assert "profile" not in by_name["softmax-unattributed"]
    assert by_name["conv-wrong"]["child"] == 0 and by_name["conv-after"]["child"] == 1


def test_the_child_computes_from_its_work_folder_whatever_folder_the_doctor_started_in(tmp_path, monkeypatch):
    (tmp_path / "where_cases.py").write_text(textwrap.dedent('''
        import os
        from _doctor_cases import case

        def _where(ctx):
            a = ctx.randn(4)
            return {"pairs": [(ctx.dev(a), a)], "info": {"cwd": os.getcwd()}}

        CASES = [case("where", "where", "float32", _where)]
    '''))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(tmp_path)
    # A case file named relative to the folder the doctor started in still loads once the child has moved.
    suite = run_suite(PY, SuiteOptions(device="cpu", only=["where"], extra_modules=["where_cases.py"],
                                       workdir=str(work)))
    (record,) = suite["results"]
    assert record["outcome"] == "ok"
    assert record["info"]["cwd"] == os.path.realpath(work)


def test_the_work_folder_is_the_users_alone_and_none_on_the_cpu_device(tmp_path, monkeypatch):
    from rocm_doctor.engine.child import work_folder

    monkeypatch.setenv("ROCM_DOCTOR_STATE_DIR", str(tmp_path / "state"))
    folder = work_folder("cuda")
    assert folder == str(tmp_path / "state" / "gpu-work") and (os.stat(folder).st_mode & 0o777) == 0o700
    assert work_folder("cpu") is None
    os.chmod(folder, 0o777)  # others may write to it: a library planted there could be loaded from it
    assert work_folder("cuda") is None


def test_an_early_suite_holds_its_first_case_until_released_or_its_startup_time_is_up():
    suite = BackgroundSuite(PY, SuiteOptions(device="cpu", only=["devices"], startup_timeout_s=6), hold=True)
    result = suite.future.result()
    # Never released: it waited its whole startup allowance, then ran its cases.
    assert result["hello"]["held_s"] >= 5.5
    assert result["fatal"] is None and result["results"]
    released = BackgroundSuite(PY, SuiteOptions(device="cpu", only=["devices"]), hold=True)
    assert released.result()["hello"]["held_s"] < 5


def test_a_profiler_failure_under_a_case_is_not_the_operators(tmp_path):
    (tmp_path / "profiler_cases.py").write_text(textwrap.dedent('''
        from _doctor_cases import case

        calls = []

        def _first_call_fails_in_the_profiler(ctx):
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("Kineto profiler failed to collect activity")
            a = ctx.randn(8)
            return ctx.dev(a) * 2, a * 2

        CASES = [case("profiler", "flaky-profiler", "float32", _first_call_fails_in_the_profiler, profile=True),
                 case("profiler", "after-it", "float32", _first_call_fails_in_the_profiler, profile=True)]
    '''))
    suite = run_suite(PY, SuiteOptions(device="cpu", only=["profiler"],
                                       extra_modules=[str(tmp_path / "profiler_cases.py")]))
    by_name = {r["case"]: r for r in suite["results"]}
    # Run again without attribution: the operator is fine, and the attribution says why it is missing.
    assert by_name["flaky-profiler"]["outcome"] == "ok"
    assert "Kineto" in by_name["flaky-profiler"]["profile"]["error"]
    assert by_name["after-it"]["outcome"] == "ok" and "Kineto" in by_name["after-it"]["profile"]["error"]
