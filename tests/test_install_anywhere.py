"""rocm-doctor installed with pipx or `uv tool`, or diagnosing an environment uv made: which interpreter is
diagnosed and why, and an install step that works there (uv pip for a uv venv, never torch into the tool's own)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rocm_doctor.diagnose import replay
from rocm_doctor.engine import remedy as S
from rocm_doctor.facts import snapshot
from rocm_doctor.probes._target import choose_python, environment_of
from rocm_doctor.report import diagnosis_view

SNAPSHOTS = Path(__file__).parent / "snapshots"
LACKS_GFX = SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json"


def _tool_venv(root: Path, receipt: str) -> Path:
    prefix = root / "tool-env"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python3").write_text("")
    (prefix / "bin" / "python3").chmod(0o755)
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (prefix / receipt).write_text("{}")
    return prefix


def _users_python(root: Path) -> Path:
    folder = root / "usr-bin"
    folder.mkdir()
    python = folder / "python3"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    return python


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX layout")
@pytest.mark.parametrize("receipt, tool", [("pipx_metadata.json", "pipx"), ("uv-receipt.toml", "uv tool")])
def test_a_tool_install_diagnoses_the_python_on_path(tmp_path, monkeypatch, receipt, tool):
    prefix = _tool_venv(tmp_path, receipt)
    users = _users_python(tmp_path)
    monkeypatch.setattr(sys, "prefix", str(prefix))
    path, reason = choose_python(None, {"PATH": f"{prefix / 'bin'}:{users.parent}"})
    assert path == str(users)  # the tool's own python3 comes first on PATH and is passed over
    assert reason.startswith("python3 on PATH") and tool in reason and "--python" in reason


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX layout")
def test_a_tool_install_with_no_other_python_says_so(tmp_path, monkeypatch):
    prefix = _tool_venv(tmp_path, "pipx_metadata.json")
    monkeypatch.setattr(sys, "prefix", str(prefix))
    path, reason = choose_python(None, {"PATH": str(prefix / "bin")})
    assert path == sys.executable and "pipx" in reason and "--python" in reason


def test_an_active_environment_still_wins_over_the_path(tmp_path, monkeypatch):
    prefix = _tool_venv(tmp_path, "pipx_metadata.json")
    monkeypatch.setattr(sys, "prefix", str(prefix))
    venv = tmp_path / "project"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    path, reason = choose_python(None, {"VIRTUAL_ENV": str(venv), "PATH": str(_users_python(tmp_path).parent)})
    assert path == str(venv / "bin" / "python") and "VIRTUAL_ENV" in reason


def test_what_made_the_environment(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\nimplementation = CPython\nuv = 0.8.3\n")
    assert environment_of(str(tmp_path / "bin" / "python")) == {"venv": "uv"}
    (tmp_path / "uv-receipt.toml").write_text("")
    assert environment_of(str(tmp_path / "bin" / "python")) == {"venv": "uv", "tool": "uv tool"}
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "uv-receipt.toml").unlink()
    assert environment_of(str(tmp_path / "bin" / "python")) == {}


def _plan_with_target(**target):
    observations = snapshot.parse(LACKS_GFX.read_bytes(), str(LACKS_GFX))
    observations.target.update(target)
    report, _ = replay(observations, str(LACKS_GFX))
    return report


def test_a_uv_venv_gets_uv_pip_with_its_python():
    report = _plan_with_target(venv="uv")
    (item,) = report.diagnosis.plan.items
    assert isinstance(item.step, S.PipInstall)
    assert item.step.argv()[:5] == ["uv", "pip", "install", "--python", "/home/user/venv/bin/python"]
    lines = [c for root in diagnosis_view.build(report.to_dict()) for s in root.steps for c in s.commands]
    assert lines[0].startswith("uv pip install --python /home/user/venv/bin/python --force-reinstall")


def test_a_pip_step_keeps_its_id():
    """The installer field is new; a plain pip step has the id it always had (journals and docs name it)."""
    (item,) = _plan_with_target().diagnosis.plan.items
    assert item.id == "install-torch-device-gfx1032-265f20" and item.step.argv()[1:4] == ["-m", "pip", "install"]
    assert _plan_with_target(venv="uv").diagnosis.plan.items[0].id != item.id


def test_torch_is_never_planned_into_the_tools_own_environment():
    report = _plan_with_target(tool="pipx")
    steps = [item.step for item in report.diagnosis.plan.items]
    roots = report.to_dict()["diagnosis"]["root_causes"]
    alternatives = [s["step"]["kind"] for root in roots for alt in root["alternatives"] for s in alt["steps"]]
    assert not any(isinstance(s, S.PipInstall) for s in steps) and "pip_install" not in alternatives
    (advice,) = [s for s in steps if isinstance(s, S.Advice)]
    assert "pipx made for rocm-doctor itself" in advice.text and "--python" in advice.text


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX layout")
def test_check_from_a_pipx_install_names_the_interpreter_and_why(tmp_path, fake_python, isolated_env):
    """The CLI, in-process (sys.prefix pointed at a pipx environment), diagnosing a python3 on PATH."""
    from click.testing import CliRunner

    from rocm_doctor.cli.main import cli

    prefix = _tool_venv(tmp_path, "pipx_metadata.json")
    python = fake_python("raise ImportError('no torch here')", name="python3")
    env = dict(isolated_env, PATH=f"{prefix / 'bin'}:{python.parent}:/usr/bin:/bin", VIRTUAL_ENV=None, CONDA_PREFIX=None)
    monkey = pytest.MonkeyPatch()
    monkey.setattr(sys, "prefix", str(prefix))
    try:
        result = CliRunner().invoke(cli, ["check", "--json", "--no-gpu", "--no-history", "--only", "torch-not-installed"],
                                    env=env)
    finally:
        monkey.undo()
    target = json.loads(result.stdout)["target"]
    assert target["python"] == str(python) and "pipx" in target["reason"] and "--python" in target["reason"]
