"""`fix` as a user sees it in a real terminal: prose wrapped under its labels, every command whole on a line of
its own, paths never split, no Markdown backticks; a pipe gets one line per item."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rocm_doctor.diagnose import Options, diagnose
from rocm_doctor.report.wrapping import Hanging, Verbatim, fold

SNAPSHOTS = Path(__file__).parent / "snapshots"
REPLAYS = ("linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json", "windows-env-scopes.json")
WIDTHS = (60, 80)


def _commands(snapshot: Path, plan: dict) -> list[str]:
    """What the preview asks the user to type: each step's commands, each alternative's preview, the footer's."""
    found = []
    for step in plan["steps"]:
        applies = step["action"] in ("apply", "already-applied")
        found += step["session_commands"] if applies else step["manual_commands"]
    report, _ = diagnose(Options(from_file=snapshot))
    for root in report.diagnosis.root_causes:
        for alt in root.alternatives:
            only = "".join(f" --only {s['id']}" for s in alt["steps"])
            found.append(f"rocm-doctor fix --dry-run{only} --from {snapshot}")
    return found + ["rocm-doctor fix --dry-run"]


def _fits(line: str, width: int) -> bool:
    """Within the width, or one token longer than the line kept whole after its lead."""
    if len(line) <= width:
        return True
    lead, _, token = line.rstrip().rpartition(" ")
    return len(lead.rstrip()) < width and bool(token)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", REPLAYS)
def test_the_preview_in_a_terminal_wraps_prose_and_keeps_commands_whole(tmp_path, doctor, isolated_env, terminal,
                                                                         name, width):
    snapshot = SNAPSHOTS / name
    plan = json.loads(doctor("fix", "--dry-run", "--json", "--from", str(snapshot)).stdout)
    commands = _commands(snapshot, plan)
    assert len(commands) >= 4
    env = {**isolated_env, "COLUMNS": str(width), "TERM": "xterm"}
    shown, code, _ = terminal([sys.executable, "-m", "rocm_doctor", "fix", "--dry-run", "--from", str(snapshot)],
                              env, width, tmp_path)
    assert code == 0, shown
    lines = shown.splitlines()
    stripped = [line.strip() for line in lines]
    for command in commands:
        assert command in stripped, f"not whole on a line of its own: {command}"
    assert "`" not in shown
    prose = [line for line in lines if line.strip() not in commands]
    assert all(_fits(line, width) for line in prose), [line for line in prose if not _fits(line, width)]
    fixes = next(n for n, line in enumerate(lines) if line.startswith("    fixes: "))
    assert lines[fixes + 1].startswith(" " * len("    fixes: ")) and lines[fixes + 1].strip()  # under its label
    assert any(line.startswith("    second because: ") for line in lines)
    if name.startswith("windows-"):
        assert any("C:\\Program Files\\AMD\\ROCm\\6.2\\" in line for line in lines)  # a path with a space, whole


def test_a_pipe_gets_one_line_per_item(doctor):
    snapshot = str(SNAPSHOTS / "windows-env-scopes.json")
    text = doctor("fix", "--dry-run", "--from", snapshot).stdout
    plan = json.loads(doctor("fix", "--dry-run", "--json", "--from", snapshot).stdout)
    messages = [s["message"] for s in plan["steps"] if s.get("message")]
    assert messages and all(f"    fixes: {m}" in text for m in messages)  # each message whole on its "fixes:" line


def test_a_step_says_what_it_fixes_in_words_not_finding_keys(doctor):
    """The "fixes:" line reads as check said it: no check-id:n key, and a step shared by two findings says so."""
    snapshot = str(SNAPSHOTS / "windows-env-scopes.json")
    text = doctor("fix", "--dry-run", "--from", snapshot).stdout
    plan = json.loads(doctor("fix", "--dry-run", "--json", "--from", snapshot).stdout)
    keys = [key for step in plan["steps"] for key in step["findings"]]
    fixes = [line for line in text.splitlines() if line.startswith("    fixes: ")]
    assert keys and fixes and not any(key in line for key in keys for line in fixes), fixes
    shared = [step for step in plan["steps"] if len(step["findings"]) > 1]
    assert shared and "The same step mends 1 other finding." in text


def test_advice_steps_lose_their_markdown_backticks(doctor):
    text = doctor("fix", "--dry-run", "--from", str(SNAPSHOTS / "linux-h200-ulimit-n-32.json")).stdout
    assert "Raise the soft limit before Python starts: ulimit -n" in text and "`" not in text


def test_an_apply_in_a_terminal_prints_the_undo_command_whole(tmp_path, isolated_env, terminal):
    home = Path(isolated_env["HOME"])
    (home / ".bashrc").write_text('export CUDA_VISIBLE_DEVICES=""\n', encoding="utf-8")
    env = {**isolated_env, "SHELL": "/bin/bash", "CUDA_VISIBLE_DEVICES": "", "COLUMNS": "60", "TERM": "xterm"}
    shown, code, _ = terminal([sys.executable, "-m", "rocm_doctor", "fix", "--yes", "--no-verify", "--no-gpu",
                               "--only", "gpu-visibility-env"], env, 60, tmp_path)
    lines = [line.strip() for line in shown.splitlines()]
    undo = [line for line in lines if line.startswith("rocm-doctor fix --undo ")]
    assert code in (0, 1) and len(undo) == 1, shown
    assert any(line.startswith("Journal: ") for line in lines) and "`" not in shown


def test_fold_hangs_prose_under_its_label_and_keeps_values_and_commands_whole():
    line = Hanging("    HIP_PATH: ", "current 'C:\\Program Files\\AMD\\ROCm\\6.2\\' -> new (not set)",
                   whole=("'C:\\Program Files\\AMD\\ROCm\\6.2\\'",))
    folded = fold(line, 40)
    assert folded[0] == "    HIP_PATH: current"
    assert folded[1] == " " * 14 + "'C:\\Program Files\\AMD\\ROCm\\6.2\\'"
    command = Verbatim("      python -m pip install torch --index-url https://download.pytorch.org/whl/cpu")
    assert fold(command, 30) == [command]
    long_label = fold(Hanging("  gpu-visibility-env:CUDA_VISIBLE_DEVICES: ", "resolved (no longer reported)"), 60)
    assert long_label == ["  gpu-visibility-env:CUDA_VISIBLE_DEVICES: resolved (no", "      longer reported)"]
    plain = "  [fail] a title: " + "word " * 20
    assert all(part.startswith("  ") for part in fold(plain, 30)) and len(fold(plain, 30)) > 2


def test_a_windows_path_with_spaces_is_one_token_in_prose():
    from rich.text import Text

    from rocm_doctor.report.wrapping import wrap

    text = "HIP_PATH points to C:\\Program Files (x86)\\AMD\\ROCm\\6.2\\, which does not exist on this machine"
    lines = [line.plain for line in wrap(Text(text), 24)]
    assert "C:\\Program Files (x86)\\AMD\\ROCm\\6.2\\," in lines
    assert lines[-1].endswith("machine") and " ".join(lines) == text
