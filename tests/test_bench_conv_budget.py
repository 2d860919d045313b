"""The full preset's cudnn.benchmark pass under a time budget: the order its configurations run in, the records of
those it left out, and what the analysis says about them (child-side code loaded by path, no torch needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rocm_doctor.gpu.bench import plan
from rocm_doctor.gpu.bench.analysis import Analysis
from rocm_doctor.gpu.bench.conv import conv

BENCH = Path(__file__).resolve().parents[1] / "rocm_doctor" / "gpu" / "bench"


@pytest.fixture(scope="module")
def child_conv():
    saved = {name: sys.modules.get(name) for name in ("_doctor_childlib", "_doctor_bench_common",
                                                      "_doctor_bench_profile", "_doctor_bench_conv")}
    import importlib.util

    spec = importlib.util.spec_from_file_location("_doctor_childlib", BENCH.parents[1] / "_childlib.py")
    childlib = importlib.util.module_from_spec(spec)
    sys.modules["_doctor_childlib"] = childlib
    spec.loader.exec_module(childlib)
    for name in ("_bench_common.py", "_bench_profile.py"):
        childlib.load_sibling(str(BENCH / "_bench_child.py"), name)
    yield childlib.load_sibling(str(BENCH / "_bench_child.py"), "_bench_conv.py")
    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


def test_every_configuration_runs_once_and_any_first_few_span_the_shapes(child_conv):
    shapes = [{"name": s} for s in ("a", "b", "c", "d", "e")]
    order = child_conv.config_order(shapes, ["fp32", "fp16", "bf16"], ["nchw", "channels_last"])
    keys = [(s["name"], d, l) for s, d, l in order]
    assert len(keys) == 30 and len(set(keys)) == 30
    first = keys[:5]
    assert {k[0] for k in first} == {"a", "b", "c", "d", "e"} and len({k[1:] for k in first}) == 5
    assert keys[0] == ("a", "fp32", "nchw")  # the in-process first use keeps its first configuration


class _Ctx:
    is_cuda = False

    class torch:  # noqa: N801 - stands in for the module
        class backends:  # noqa: N801
            class cudnn:  # noqa: N801
                benchmark = False


def test_no_configuration_starts_after_the_budget_and_each_left_out_is_recorded(child_conv, monkeypatch):
    clock = iter(range(100))
    monkeypatch.setattr(child_conv.time, "monotonic", lambda: float(next(clock)))  # one second per look
    monkeypatch.setattr(child_conv, "one_config", lambda ctx, shape, d, l, params: {"shape": shape["name"]})
    monkeypatch.setattr(child_conv, "free_memory", lambda ctx: None)
    shapes = [{"name": "a"}, {"name": "b"}]
    records = list(child_conv.pass_records(_Ctx, {"shapes": shapes, "dtypes": ["fp32"], "layouts": ["nchw", "cl"],
                                                   "benchmark": True, "pass_budget_s": 1.5}))
    kinds = [kind for kind, _ in records]
    assert kinds == ["conv", "conv", "conv_unmeasured", "conv_unmeasured"]
    assert records[2][1] == {"shape": "a", "dtype": "fp32", "layout": "cl", "budget_s": 1.5}
    clock = iter(range(100))
    spent = list(child_conv.pass_records(_Ctx, {"shapes": shapes, "dtypes": ["fp32"], "layouts": ["nchw"],
                                                "pass_budget_s": 0.0}))
    assert [kind for kind, _ in spent] == ["conv", "conv_unmeasured"]  # the first always runs
    unbounded = list(child_conv.pass_records(_Ctx, {"shapes": shapes, "dtypes": ["fp32"], "layouts": ["nchw"]}))
    assert [kind for kind, _ in unbounded] == ["conv", "conv"]


def test_only_the_full_presets_benchmark_pass_has_a_budget():
    budgets = {preset: next(s for s in plan.build(preset) if s.name == "conv").params.get("benchmark_budget_s")
               for preset in ("full", "quick", "tiny")}
    assert budgets == {"full": plan.BENCHMARK_SEARCH_S, "quick": None, "tiny": None}


def _record(kind, pass_name, shape, median=None, first=None):
    rec = {"bench": kind, "pass_name": pass_name, "shape": shape, "dtype": "fp16", "layout": "nchw"}
    if kind == "conv":
        rec.update(median_ms=median, first_ms=first, second_ms=median)
    return rec


def test_the_speed_up_says_how_many_configurations_it_rests_on_and_which_were_left_out():
    recs = [{"bench": "conv_env"},
            _record("conv", "default", "3x3", 2.0, 10.0), _record("conv", "default", "1x1", 1.0, 5.0),
            _record("conv", "default", "depthwise", 1.0, 5.0),
            {"bench": "conv_pass", "pass_name": "default", "state": "ok", "process": "benchmark"},
            _record("conv", "benchmark", "3x3", 1.0, 900.0), _record("conv", "benchmark", "1x1", 1.0, 700.0),
            dict(_record("conv_unmeasured", "benchmark", "depthwise"), budget_s=15.0),
            {"bench": "conv_pass", "pass_name": "benchmark", "state": "ok", "import_s": 1.5}]
    analysis = Analysis({"sections": {"conv": {"records": recs}}, "header": {}})
    conv(analysis)
    lines = {line["key"]: line for line in analysis.lines}
    speedup = lines["conv.benchmark"]
    assert speedup["value"] == 2.0  # the median of the two configurations measured both ways
    assert "median of 2 configurations" in speedup["explanation"]
    assert "1 more were not measured with it on" in speedup["explanation"] and "15 s budget" in speedup["explanation"]
    assert analysis.values["conv"]["benchmark"]["not_measured"] == ["depthwise fp16 nchw"]
    assert lines["conv.pass.benchmark"]["explanation"].startswith("2 of 3 configurations, torch import 1.5 s")
    assert lines["conv.pass.benchmark"]["explanation"].endswith(
        "; none started after the pass's 15 s budget, so not measured: depthwise fp16 nchw")
    assert lines["conv.pass.default"]["explanation"].startswith("3 configurations")


@pytest.mark.parametrize("device, label", [
    ({"type": "cuda", "name": "NVIDIA H200"}, "first-call cost, fresh process, cudnn.benchmark off (the default)"),
    ({"type": "cpu"}, "first-call cost, fresh process"),  # no cuDNN or MIOpen behind a CPU convolution
])
def test_a_pass_names_the_library_switch_only_where_a_gpu_library_ran(device, label):
    recs = [_record("conv", "default", "3x3", 2.0, 10.0), {"bench": "conv_pass", "pass_name": "default", "state": "ok"}]
    analysis = Analysis({"sections": {"conv": {"records": recs}}, "header": {"device": dict(device, bench="device")}},
                        use_catalog=False)
    conv(analysis)
    assert {line["key"]: line for line in analysis.lines}["conv.pass.default"]["label"] == label
