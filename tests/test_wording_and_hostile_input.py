"""Report wording, missing-fact reasons, and hostile input (bad env, NUL bytes, unwritable outputs) that must not
become tracebacks."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from rocm_doctor.cli.main import cli
from rocm_doctor.engine import runner
from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import derive_again, interpret
from rocm_doctor.probes._target import TargetError, choose_python
from rocm_doctor.report.human import render
from rocm_doctor.report.model import Report

REGISTRY = load_registry(include_plugins=False)
FLEET = Path(__file__).parent / "fixtures" / "fleet"
REASON = "the active virtual environment (VIRTUAL_ENV=/home/u/venv)"


def _facts(values: dict, os_name: str = "linux") -> Facts:
    facts = Facts(Observations())
    facts.set("platform.os", os_name)
    for key, value in values.items():
        facts.set(key, value)
    derive_again(facts, values)  # gpu.targets from the GPUs
    return facts


def test_header_has_no_nested_parentheses():
    console = Console(record=True, width=200, no_color=True)
    report = Report(findings=[], target={"python": "/home/u/venv/bin/python", "reason": REASON})
    render(report, console)
    text = console.export_text()
    assert f"Diagnosing /home/u/venv/bin/python — {REASON}" in text
    assert "))" not in text


def test_python_version_message_keeps_the_reason_in_evidence():
    facts = _facts({"python.target": {"python": "/home/u/venv/bin/python", "reason": REASON},
                    "python.target.version": "3.12.1"})
    [finding] = run_one(REGISTRY.by_id("python-version"), facts)
    assert finding.message == "Python 3.12.1 at /home/u/venv/bin/python"
    assert f"chosen as: {REASON}" in finding.evidence


def test_bench_checks_say_how_to_run_the_benchmark():
    facts = interpret(Observations(platform={"os": "linux"}))
    assert "rocm-doctor check --bench" in facts.why_missing("bench.results")


def test_cpu_torch_arch_list_reason():
    probe = "\n".join(json.dumps(r) for r in (
        {"stage": "start", "python": "3.12.1"},
        {"stage": "import", "ok": True, "version": "2.13.0+cpu", "hip": None, "cuda": None},
        {"stage": "available", "available": False, "error": None, "warnings": []},
        {"stage": "done"},
    ))
    observations = Observations(platform={"os": "linux"})
    observations.add_command("torch-probe", runner.CommandResult(argv=["python"], returncode=0, stdout=probe))
    facts = interpret(observations)
    assert facts.why_missing("torch.arch_list") == "torch is a CPU build: it has no GPU targets"


def test_windows_torch_unavailable_points_at_hipinfo_cause():
    facts = _facts({"torch.available": False, "torch.flavour": "rocm",
                    "windows.hipinfo": {"devices": [], "error": None, "timed_out": False}}, os_name="windows")
    [finding] = run_one(REGISTRY.by_id("torch-cuda-unavailable"), facts)
    assert finding.status is Status.FAIL
    assert "ROCm build" in finding.message and "lists no GPU (hipInfo), so the cause is below torch" in finding.message
    # elsewhere the message is as before
    [linux] = run_one(REGISTRY.by_id("torch-cuda-unavailable"), _facts({"torch.available": False, "torch.flavour": "rocm"}))
    assert "hipInfo" not in linux.message


def test_inventory_does_not_call_an_unknown_gpu_discrete():
    gpu = {"index": 0, "gfx": None, "name": None, "igpu": None, "sources": {"pci": None}}
    [finding] = run_one(REGISTRY.by_id("gpu-inventory"), _facts({"gpu.inventory": [gpu]}, os_name="windows"))
    assert "(discrete)" not in " ".join(finding.evidence)
    assert "unknown" in finding.evidence[0]


def test_runner_stdin_to_a_child_that_never_reads_keeps_the_timeout():
    started = time.monotonic()
    result = runner.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1.5,
                        stdin_data=b"x" * (4 << 20))
    assert result.timed_out
    assert time.monotonic() - started < 15


def test_runner_nul_byte_is_a_result_not_an_exception():
    result = runner.run([sys.executable, "-c", "pass", "a\0b"])
    assert result.error and "invalid" in result.error


def test_bad_virtual_env_is_not_a_traceback(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    python, reason = choose_python(None, {"VIRTUAL_ENV": str(loop)})
    assert python == sys.executable and "VIRTUAL_ENV is set but holds no usable Python" in reason
    python, _ = choose_python(None, {"VIRTUAL_ENV": "/x/" + "a" * 5000})
    assert python == sys.executable
    try:
        choose_python("/x/" + "a" * 5000, {})
    except TargetError as exc:
        assert "--python" in str(exc)
    else:
        raise AssertionError("expected TargetError")


def test_fleet_diff_unwritable_output_and_malformed_report(tmp_path):
    node = str(FLEET / "gpu-node-01.json")
    result = CliRunner().invoke(cli, ["fleet", "diff", node, "-o", str(tmp_path / "missing" / "fleet.json")])
    assert result.exit_code == 2 and "cannot write" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": 1, "findings": [5], "platform": 7}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["fleet", "diff", str(bad), node])
    assert result.exit_code == 2 and "malformed report" in result.output and result.exception is not None
    assert isinstance(result.exception, SystemExit)
    other = tmp_path / "list.json"
    other.write_text("[]", encoding="utf-8")
    result = CliRunner().invoke(cli, ["fleet", "diff", str(other), node])
    assert "is not a node, fleet or check report; ignored" in result.output


def test_kernels_render_when_the_child_never_said_hello():
    from rich.console import Console

    from rocm_doctor.report.kernels_view import render as render_kernels

    console = Console(record=True, width=120, no_color=True)
    stage = {"python": "/p", "suite": {"device": "cuda", "fatal": {"stage": "device", "error": "no GPU"}, "counts": {}}}
    render_kernels(console, stage, [Finding(id="x", check="x", status=Status.FAIL, title="t", message="m")])
    out = console.export_text()
    assert "torch None" not in out and "no case ran" in out


def test_own_error_evidence_drops_caret_lines():
    from rocm_doctor.engine.engine import _own_error

    text = 'Traceback (most recent call last):\n  File "x.py", line 1, in f\n    g()\n    ^^^\nValueError: bad\n'
    finding = _own_error("probe-failed", "x", "t", "m", text)
    assert all(line.strip(" ^~") for line in finding.evidence)
    assert finding.evidence[-1] == "ValueError: bad"
