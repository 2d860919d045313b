"""torch-bytecode-not-cached: the torch probe's count of torch modules with compiled bytecode, and the check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import torch_facts
from rocm_doctor.engine.model import Status

from rocm_doctor.checks.torch_bytecode import TorchBytecodeNotCached

CHILD = Path(__file__).resolve().parents[1] / "rocm_doctor" / "probes" / "_torch_child.py"
STATE = {"modules": 700, "cached": 700, "dont_write_bytecode": False, "variable": None, "pycache_prefix": None,
         "folder": "/venv/lib/python3.12/site-packages/torch", "folder_writable": True, "import_s": 1.6}


def _facts(**values) -> Facts:
    facts = Facts(Observations())
    for key, value in values.items():
        facts.set(key, value)
    return facts


def _run(state):
    return TorchBytecodeNotCached().run(_facts(**{"torch.bytecode": state}))


def test_cached_bytecode_is_ok_and_says_the_import_time():
    finding = _run(STATE)
    assert finding.status == Status.OK
    assert "700 of 700" in finding.message and "1.6 s" in finding.message


def test_no_bytecode_with_the_variable_set_names_it_and_prints_compileall():
    finding = _run(dict(STATE, cached=3, dont_write_bytecode=True, variable="1", import_s=4.2))
    assert finding.status == Status.WARN
    assert "697 of the 700" in finding.message and "PYTHONDONTWRITEBYTECODE=1" in finding.message
    assert "4.2 s" in finding.message
    step = finding.fix[0]
    assert step.argv()[1:5] == ["-m", "compileall", "-q", "-j"] and step.argv()[-1] == STATE["folder"]
    assert not step.needs_admin


def test_a_folder_the_user_cannot_write_needs_admin():
    finding = _run(dict(STATE, cached=0, folder_writable=False))
    assert finding.status == Status.WARN and "cannot write to" in finding.message
    assert finding.fix[0].needs_admin


def test_a_cache_prefix_is_named_instead_of_torchs_folder():
    finding = _run(dict(STATE, cached=0, folder_writable=False, pycache_prefix="/cache/pyc"))
    assert "/cache/pyc (PYTHONPYCACHEPREFIX)" in finding.message and "cannot write to" not in finding.message
    assert not finding.fix[0].needs_admin  # compileall writes under the prefix too


def test_python_minus_b_is_named_when_the_variable_is_not_set():
    finding = _run(dict(STATE, cached=0, dont_write_bytecode=True, variable=None))
    assert "-B" in finding.message


def test_no_source_module_is_a_skip():
    assert _run(dict(STATE, modules=0, cached=0)).status == Status.SKIP


def _interpret(stdout: str) -> Facts:
    observations = Observations()
    observations.add_command(torch_facts.COMMAND_KEY, CommandResult(
        argv=["python", "_torch_child.py"], returncode=0, stdout=stdout))
    facts = Facts(observations)
    torch_facts.interpret(observations, facts)
    return facts


def test_an_older_probe_without_the_count_leaves_the_fact_missing():
    lines = [{"stage": "start", "python": "3.12.3"}, {"stage": "import", "ok": True, "seconds": 2.0, "version": "2.4.0"},
             {"stage": "done", "seconds": 2.1}]
    facts = _interpret("".join(json.dumps(line) + "\n" for line in lines))
    assert facts.get("torch.version") == "2.4.0"
    assert "did not report" in facts.why_missing("torch.bytecode")


@pytest.mark.skipif(sys.platform == "win32", reason="the child's environment handling is the same; one run is enough")
def test_the_real_child_sees_no_bytecode_under_an_empty_cache_prefix(tmp_path):
    pytest.importorskip("torch")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=str(tmp_path))
    proc = subprocess.run([sys.executable, str(CHILD)], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    facts = _interpret(proc.stdout)
    state = facts.get("torch.bytecode")
    assert state["modules"] > 100 and state["cached"] == 0 and state["variable"] == "1"
    finding = TorchBytecodeNotCached().run(facts)
    assert finding.status == Status.WARN and "PYTHONDONTWRITEBYTECODE=1" in finding.message
