"""Every command the human report prints survives any terminal width: whole on one indented line, never in
backticks, and accepted by its shell's parser (bash -n; PowerShell's parser where pwsh is installed)."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from rocm_doctor.diagnose import Options, diagnose
from rocm_doctor.report import diagnosis_view
from rocm_doctor.report.human import render

SNAPSHOTS = Path(__file__).parent / "snapshots"
REPLAYS = sorted(p.name for p in SNAPSHOTS.glob("*rx6600xt*.json")) + sorted(p.name for p in SNAPSHOTS.glob("windows-*.json"))
WIDTHS = (60, 80, 120, 200)
INDENT = " " * 10
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SHELLS = {"linux": ("bash", "sh"), "windows": ("cmd", "powershell")}


def _replay(name: str, shell: str | None = None):
    report, _ = diagnose(Options(from_file=SNAPSHOTS / name))
    if shell:
        report.target["shell"] = shell
    return report


def _render(report, width: int, verbose: bool = False) -> list[str]:
    out = io.StringIO()
    render(report, Console(file=out, width=width, force_terminal=True, no_color=True), verbose=verbose)
    return ANSI.sub("", out.getvalue()).splitlines()


def _commands(report) -> list[str]:
    """What the plan asks the user to type: every step's commands, and the footer's fix commands."""
    roots = diagnosis_view.build(report.to_dict())
    steps = [s for root in roots for s in root.steps + [s for alt in root.alternatives for s in alt.steps]]
    found = [c for s in steps for c in s.commands]
    return found + (["rocm-doctor fix --dry-run"] if report.diagnosis.plan else [])


def _assert_whole(lines: list[str], commands: list[str]) -> None:
    for command in commands:
        assert INDENT + command in lines, f"not printed whole on its own line: {command}"
    text = "\n".join(lines)
    for quoted in re.findall(r"`([^`\n]+)`", text):
        assert not quoted.startswith("rocm-doctor") and quoted not in commands, f"a command in backticks: {quoted}"


def _fits(line: str, width: int) -> bool:
    """Within the width, or one word longer than the line (a path, a URL, a step id) kept whole after its lead:
    prose itself never runs past the edge."""
    if len(line) <= width:
        return True
    lead, _, token = line.rstrip().rpartition(" ")
    return len(lead) < width and bool(token)


def _shells(name: str) -> tuple[str, ...]:
    return SHELLS["windows" if name.startswith("windows-") else "linux"]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", REPLAYS)
def test_commands_are_whole_at_every_width(name, width):
    for shell in _shells(name):
        report = _replay(name, shell)
        commands = _commands(report)
        for verbose in (False, True):
            lines = _render(report, width, verbose)
            _assert_whole(lines, commands)
            assert all(_fits(line, width) for line in lines if not line.startswith(INDENT)), \
                "prose wider than the terminal: the terminal would wrap it at column 0"


def test_the_replays_have_commands_to_check():
    """The width test above must have something to check: the plans here include installs and variables."""
    counts = {name: len(_commands(_replay(name))) for name in REPLAYS}
    assert counts["linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json"] >= 3
    assert counts["windows-env-scopes.json"] >= 5
    assert sum(counts.values()) >= 15


def test_wrapped_prose_keeps_its_indentation():
    lines = _render(_replay("linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json"), 60)
    start = next(i for i, line in enumerate(lines) if line.startswith(" 1. [FAIL] "))
    assert lines[start + 1].startswith(" " * len(" 1. [FAIL] ")) and lines[start + 1].strip()


def _unique_commands(shell: str) -> set[str]:
    wanted = [n for n in REPLAYS if shell in _shells(n)]
    return {c for name in wanted for c in _commands(_replay(name, shell))}


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_posix_commands_parse(shell):
    commands = _unique_commands(shell)
    assert any("pip install" in c for c in commands)
    for command in commands:
        proc = subprocess.run(["bash", "--posix", "-n", "-c", command] if shell == "sh" else ["bash", "-n", "-c", command],
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"{command}: {proc.stderr}"


def test_cmd_commands_close_their_quotes():
    commands = _unique_commands("cmd")
    assert any(c.startswith("set ") for c in commands)
    for command in commands:
        assert command.count('"') % 2 == 0, command


@pytest.mark.skipif(shutil.which("pwsh") is None, reason="PowerShell (pwsh) is not installed")
def test_powershell_commands_parse():
    script = ("$errors = $null; $null = [System.Management.Automation.Language.Parser]::ParseInput("
              "[Console]::In.ReadToEnd(), [ref]$null, [ref]$errors); if ($errors.Count) { $errors; exit 1 }")
    for command in _unique_commands("powershell"):
        proc = subprocess.run(["pwsh", "-NoProfile", "-Command", script], input=command, capture_output=True, text=True)
        assert proc.returncode == 0, f"{command}: {proc.stdout}{proc.stderr}"


def _doctor_env(tmp_path: Path, width: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "VIRTUAL_ENV")}
    env.update(COLUMNS=str(width), LINES="50", ROCM_DOCTOR_STATE_DIR=str(tmp_path / "state"), TERM="xterm")
    return env


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json", "windows-env-scopes.json"])
def test_the_cli_prints_commands_whole_in_a_terminal_and_a_pipe(tmp_path, terminal, name, width):
    argv = [sys.executable, "-m", "rocm_doctor", "check", "--from", str(SNAPSHOTS / name)]
    env = _doctor_env(tmp_path, width)
    footer = f"rocm-doctor fix --dry-run --from {SNAPSHOTS / name}"  # a replay's footer previews that replay
    commands = [footer if c == "rocm-doctor fix --dry-run" else c for c in _commands(_replay(name))]
    piped = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert piped.returncode in (0, 1), piped.stderr
    _assert_whole(piped.stdout.splitlines(), commands)
    shown = terminal(argv, env, width, tmp_path)[0].splitlines()
    _assert_whole(shown, commands)
    assert any(line.startswith("WHAT IS WRONG") for line in shown)
    assert all(_fits(line, width) for line in shown if not line.startswith(INDENT))  # rich wrapped the prose
