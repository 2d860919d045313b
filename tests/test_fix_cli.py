"""`rocm-doctor fix`: --dry-run touches nothing, consent is required, apply/verify/history/undo end to end.

The diagnosis is replaced by canned findings (the real one is tested elsewhere); everything after it is real:
plan, rendering, rc files under a temporary HOME, the journal under ROCM_DOCTOR_STATE_DIR, and (in one test) the
verification child process.
"""

import json
import os
import sys

import pytest
from click.testing import CliRunner

from rocm_doctor.cli.app import App
import rocm_doctor.diagnose as diagnose_mod
from rocm_doctor.cli.main import cli
from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Finding, Severity, Status
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.fix import rcfile
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.steps import FLAG
from rocm_doctor.report.model import Report

INDEX = "https://download.pytorch.org/whl/rocm6.4"


def _finding(fid, status, *steps, message="the problem", severity=Severity.MEDIUM):
    return Finding(id=fid, check=fid.split(":")[0], status=status, title="t", message=message, fix=list(steps),
                   severity=severity)


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """HOME, state folder, shell and a canned diagnosis; `findings` can be replaced by a test."""
    home = tmp_path / "home"
    home.mkdir()
    state = tmp_path / "state"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SHELL", "/bin/bash")
    monkeypatch.setenv("ROCM_DOCTOR_STATE_DIR", str(state))
    monkeypatch.setenv("HSA_OVERRIDE_GFX_VERSION", "11.0.0")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("HIP_VISIBLE_DEVICES", raising=False)

    class Box:
        pass

    box = Box()
    box.home, box.state, box.rc = home, state, home / ".bashrc"
    box.python = sys.executable
    box.findings = [
        _finding("hsa-override-wrong", Status.FAIL, S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"),
                 message="HSA_OVERRIDE_GFX_VERSION=11.0.0 does not match gfx1032", severity=Severity.CRITICAL),
        _finding("rocm-bin-not-on-path", Status.WARN, S.path_prepend("/opt/rocm/bin")),
        _finding("gpu-device-access", Status.FAIL, S.add_to_group()),
        _finding("torch-build-mismatch", Status.FAIL, S.pip_install(box.python, "torch", INDEX, ["--force-reinstall"])),
        _finding("all-good", Status.OK, S.set_env("NEVER", "1")),
    ]

    def fake_diagnose(options):
        facts = Facts(Observations(env=dict(os.environ)))
        facts.set("platform.os", "linux")
        facts.set("torch.version", "2.13.0+cpu")
        return Report(findings=list(box.findings), target={"python": box.python},
                      platform={"os": "linux"}), facts

    monkeypatch.setattr(diagnose_mod, "diagnose", fake_diagnose)
    monkeypatch.setattr(App, "interactive", property(lambda app: False))

    def run(*args, input=None):
        return CliRunner().invoke(cli, ["fix", *args], input=input, catch_exceptions=False)

    box.run = run
    return box


def _snapshot(folder):
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.rglob("*") if p.is_file()}


def test_dry_run_shows_the_numbered_plan_and_touches_nothing(sandbox):
    sandbox.rc.write_bytes(b"# mine\n")
    before = _snapshot(sandbox.home)
    result = sandbox.run("--dry-run")
    assert result.exit_code == 0, result.output
    out = result.output
    assert " 1. set HSA_OVERRIDE_GFX_VERSION=10.3.0 (user)  [will apply]" in out
    assert "HSA_OVERRIDE_GFX_VERSION: current '11.0.0' -> new '10.3.0'" in out
    assert "~/.bashrc (rocm-doctor block) adds: export HSA_OVERRIDE_GFX_VERSION=10.3.0" in out
    assert "PATH: current '/usr/bin:/bin' -> new '/opt/rocm/bin:/usr/bin:/bin'" in out
    assert "sudo usermod -aG render,video $USER" in out and "print only: needs sudo" in out
    assert f"{sys.executable} -m pip install --force-reinstall torch --index-url {INDEX}" in out
    assert "needs --allow-install" in out
    assert "torch: current 'torch 2.13.0+cpu'" in out
    assert "NEVER" not in out  # ok findings contribute nothing
    assert "nothing was changed" in out
    assert _snapshot(sandbox.home) == before
    assert not sandbox.state.exists()


@pytest.mark.parametrize("shell,expected", [
    ("powershell", "$env:HSA_OVERRIDE_GFX_VERSION = '10.3.0'"),
    ("fish", "set -gx HSA_OVERRIDE_GFX_VERSION '10.3.0'"),
    ("zsh", "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
])
def test_dry_run_speaks_the_users_shell(sandbox, shell, expected):
    result = sandbox.run("--dry-run", "--shell", shell, "--only", "hsa-override-wrong")
    assert result.exit_code == 0, result.output
    assert expected in result.output
    assert "1 step;" in result.output


def test_unknown_shell_and_unknown_only_are_usage_errors(sandbox):
    assert sandbox.run("--dry-run", "--shell", "tcsh").exit_code == 2
    result = sandbox.run("--dry-run", "--only", "no-such-finding")
    assert result.exit_code == 2 and "no-such-finding" in result.output


def test_dry_run_json(sandbox):
    result = sandbox.run("--dry-run", "--json")
    plan = json.loads(result.output)
    assert plan["dry_run"] is True and plan["shell"] == "bash"
    assert [s["number"] for s in plan["steps"]] == [1, 2, 3, 4]
    first = plan["steps"][0]
    assert first["action"] == "apply" and first["step"]["kind"] == "set_env"
    assert first["variable"] == {"name": "HSA_OVERRIDE_GFX_VERSION", "current": "11.0.0", "new": "10.3.0"}
    assert first["change"]["type"] == "rc-file" and first["change"]["new"] == "export HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert plan["steps"][2]["action"] == "needs-flag" and plan["steps"][2]["step"]["flag"] == "--allow-install"
    assert not sandbox.state.exists()


def test_refuses_without_yes_when_not_interactive(sandbox):
    sandbox.rc.write_bytes(b"# mine\n")
    result = sandbox.run()
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "--yes" in result.output
    assert sandbox.rc.read_bytes() == b"# mine\n" and not sandbox.state.exists()


def test_refuses_for_real_when_stdin_is_not_a_tty(doctor, tmp_path):
    state = tmp_path / "state"
    env_home = tmp_path / "home"
    env_home.mkdir(exist_ok=True)
    (env_home / ".bashrc").write_text('export CUDA_VISIBLE_DEVICES=""\n', encoding="utf-8")  # a change to apply
    proc = doctor("fix", "--no-gpu", env={**os.environ, "HOME": str(env_home), "ROCM_DOCTOR_STATE_DIR": str(state),
                                          "SHELL": "/bin/bash", "CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("rocm-doctor: error: refusing to change anything in a non-interactive run "
                                   "without --yes (preview with --dry-run)")
    assert not state.exists()


def test_interactive_confirmation(sandbox, monkeypatch):
    monkeypatch.setattr(App, "interactive", property(lambda app: True))
    declined = sandbox.run("--no-verify", input="n\n")
    assert declined.exit_code == 1 and "Nothing was changed" in declined.output
    assert not sandbox.rc.exists()
    accepted = sandbox.run("--no-verify", "--only", "hsa-override-wrong", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert b"export HSA_OVERRIDE_GFX_VERSION=10.3.0" in sandbox.rc.read_bytes()


def test_apply_history_again_and_undo(sandbox):
    original = b"# mine\r\nexport EDITOR=vim"
    sandbox.rc.write_bytes(original)
    first = sandbox.run("--yes", "--no-verify")
    assert first.exit_code == 1, first.output  # print-only steps remain
    assert "[applied] 1. set HSA_OVERRIDE_GFX_VERSION=10.3.0 (user)" in first.output
    assert "[applied] 4. put /opt/rocm/bin first in PATH (user)" in first.output
    assert "[skipped] 2." in first.output and "[skipped] 3." in first.output
    assert "fix --undo" in first.output
    changed = sandbox.rc.read_bytes()
    assert changed.startswith(original + b"\r\n" + rcfile.BEGIN.encode())

    second = sandbox.run("--yes", "--no-verify", "--only", "hsa-override-wrong", "--only", "rocm-bin-not-on-path")
    assert second.exit_code == 0, second.output
    assert "[already-applied] 1." in second.output and "[already-applied] 2." in second.output
    assert sandbox.rc.read_bytes() == changed

    history = sandbox.run("--history")
    assert history.exit_code == 0
    lines = history.output.splitlines()
    assert "applied" in lines[0] and "0 change(s)" in lines[0]  # newest first: the no-op run
    assert any("2 change(s)" in line for line in lines)
    runs = json.loads(sandbox.run("--history", "--json").output)["runs"]
    assert [r["applied"] for r in runs] == [2, 0]

    assert sandbox.run("--undo").exit_code == 2  # not interactive, no --yes
    undo = sandbox.run("--undo", "--yes")
    assert undo.exit_code == 0, undo.output
    assert "[restored]" in undo.output
    assert sandbox.rc.read_bytes() == original
    again = sandbox.run("--undo", runs[0]["run"], "--yes")
    assert "already undone" in again.output
    nothing = sandbox.run("--undo", "--yes")
    assert nothing.exit_code == 2 and "no fix run to undo" in nothing.output


def test_pip_runs_only_with_allow_install(sandbox, tmp_path):
    log = tmp_path / "pip-args.txt"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{log}'\n")
    fake.chmod(0o755)
    sandbox.python = str(fake)
    sandbox.findings = [_finding("torch-build-mismatch", Status.FAIL, S.pip_install(str(fake), "torch", INDEX))]
    skipped = sandbox.run("--yes", "--no-verify")
    assert "[skipped] 1." in skipped.output and not log.exists()
    done = sandbox.run("--yes", "--no-verify", "--allow-install")
    assert done.exit_code == 0, done.output
    assert log.read_text().split() == ["-m", "pip", "install", "torch", "--index-url", INDEX]
    undo = sandbox.run("--undo", "--yes")
    assert "cannot be undone automatically" in undo.output and "torch==2.13.0" in undo.output


def test_from_snapshot_is_preview_only(sandbox, tmp_path):
    result = sandbox.run("--from", str(tmp_path / "snap.json"))
    assert result.exit_code == 2 and "--dry-run" in result.output


def test_apply_verifies_in_a_fresh_process(sandbox, monkeypatch):
    """Real re-check: HIP_VISIBLE_DEVICES="" hides every GPU; the unset step is verified by a child `check`."""
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "")
    sandbox.findings = [_finding("gpu-visibility-env:HIP_VISIBLE_DEVICES", Status.FAIL, S.unset_env("HIP_VISIBLE_DEVICES"))]
    result = sandbox.run("--yes", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["results"] == [{"number": 1, "outcome": "applied", "message": "applied"}]
    assert out["verification"]["error"] is None, out["verification"]
    assert out["verification"]["findings"] == {"gpu-visibility-env:HIP_VISIBLE_DEVICES": "resolved"}
    assert out["verification"]["argv"][1:5] == ["-m", "rocm_doctor", "check", "--json"]
    assert b"unset HIP_VISIBLE_DEVICES" in sandbox.rc.read_bytes()


def test_torch_checks_attach_pip_plans():
    registry = load_registry(include_plugins=False)
    facts = Facts(Observations(env={}))
    facts.set("platform.os", "linux")
    for key, value in {"torch.flavour": "cpu", "torch.version": "2.13.0+cpu", "torch.installed": False,
                       "gpu.pci": [{"vendor": "amd"}], "python.target": {"python": "/venv/bin/python"}}.items():
        facts.set(key, value)
    mismatch = run_one(registry.by_id("torch-build-mismatch"), facts)[0]
    assert mismatch.status == Status.FAIL
    [step] = mismatch.fix
    assert step.kind == "pip_install" and step.python == "/venv/bin/python" and step.mode == FLAG
    assert step.index_url.startswith("https://download.pytorch.org/whl/rocm") and "--force-reinstall" in step.argv()
    missing = run_one(registry.by_id("torch-not-installed"), facts)[0]
    assert missing.fix[0].argv()[:5] == ["/venv/bin/python", "-m", "pip", "install", "torch"]
    facts.set("platform.os", "windows")  # no gfx known: AMD's multi-arch index needs the family extra, so no plan
    assert run_one(registry.by_id("torch-build-mismatch"), facts)[0].fix == []


@pytest.mark.parametrize("problem", ["read-only", "no-home"])
def test_unwritable_targets_fail_with_one_line_and_change_nothing(sandbox, monkeypatch, tmp_path, problem):
    if problem == "read-only":
        sandbox.rc.write_bytes(b"# locked\n")
        sandbox.rc.chmod(0o444)
    else:
        monkeypatch.setenv("HOME", str(tmp_path / "gone"))
    result = sandbox.run("--yes", "--no-verify", "--only", "hsa-override-wrong")
    assert result.exit_code == 2
    error = [line for line in result.output.splitlines() if line.startswith("rocm-doctor: error:")]
    assert len(error) == 1 and ("read-only" in error[0] or "does not exist" in error[0]), result.output
    assert "nothing was changed" in error[0]
    assert not sandbox.state.exists()
    if problem == "read-only":
        assert sandbox.rc.read_bytes() == b"# locked\n"
    else:
        assert not (tmp_path / "gone").exists()
