"""One exit-code contract for every command (0 fine, 1 problems at or above --fail-on, 2 could not do its job),
the table in README.md that documents it, suggestions for typos, and report files that are never overwritten."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from rocm_doctor.cli.main import COMMANDS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = Path(__file__).parent / "snapshots"
BROKEN = str(SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json")  # a fail
WARNS = str(SNAPSHOTS / "windows-env-scopes.json")  # warnings, no fail
HEALTHY = str(SNAPSHOTS / "linux-2x-mi100-gfx908-healthy.json")


def test_bare_command_prints_help_and_exits_0(doctor):
    proc = doctor()
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: rocm-doctor") and "check" in proc.stdout
    assert "2 could not do its job" in proc.stdout


def test_mistyped_command_option_and_check_id_get_suggestions(doctor):
    assert doctor("chek").returncode == 2 and "did you mean 'check'?" in doctor("chek").stderr
    proc = doctor("check", "--jsn")
    assert proc.returncode == 2 and "Did you mean '--json'?" in proc.stderr
    proc = doctor("explain", "gpu-visibilty-env")
    assert proc.returncode == 2 and proc.stderr.strip() == ("rocm-doctor: error: unknown check id: gpu-visibilty-env "
                                                             "(did you mean 'gpu-visibility-env'?)")
    proc = doctor("check", "--from", BROKEN, "--only", "torch-not-instaled")
    assert proc.returncode == 2 and "did you mean 'torch-not-installed'?" in proc.stderr
    proc = doctor("kernels", "--device", "cpu", "--only", "sdp")
    assert proc.returncode == 2 and "did you mean 'sdpa'?" in proc.stderr


@pytest.mark.parametrize("command", ["check", "report"])
def test_fail_on_decides_between_0_and_1(doctor, command):
    fail_on_default = {"check": "fail", "report": "never"}[command]
    run = lambda source, *extra: doctor(command, "--from", source, *extra).returncode  # noqa: E731
    assert run(BROKEN) == (1 if fail_on_default == "fail" else 0)
    assert run(BROKEN, "--fail-on", "fail") == 1
    assert run(WARNS, "--fail-on", "fail") == 0 and run(WARNS, "--fail-on", "warn") == 1
    assert run(HEALTHY, "--fail-on", "warn") == 0


def test_diff_fail_on(doctor):
    assert doctor("diff", HEALTHY, HEALTHY).returncode == 0
    assert doctor("diff", HEALTHY, BROKEN).returncode == 1
    assert doctor("diff", HEALTHY, BROKEN, "--fail-on", "fail").returncode == 1
    better = doctor("diff", BROKEN, HEALTHY, "--fail-on", "fail")  # changed, but nothing got worse
    assert better.returncode == 0, better.stderr


def _no_torch_python(tmp_path: Path) -> Path:
    """An interpreter without torch: this one, with site-packages left out."""
    script = tmp_path / "python-without-torch"
    script.write_text(f"#!/bin/sh\nexec '{sys.executable}' -S \"$@\"\n")
    script.chmod(0o755)
    return script


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script as the interpreter")
@pytest.mark.parametrize("command", [["kernels"], ["kernels", "--device", "cpu"], ["bench", "--preset", "tiny"],
                                     ["bench", "--preset", "tiny", "--device", "cpu"]])
def test_without_torch_one_line_and_2(doctor, tmp_path, command):
    proc = doctor(*command, "--python", str(_no_torch_python(tmp_path)))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"rocm-doctor: error: torch is not installed in {_no_torch_python(tmp_path)}; install it there, or name the "
        "interpreter that has it with --python"]


@pytest.mark.parametrize("command", [["kernels"], ["bench", "--preset", "tiny", "--section", "launch"]])
def test_without_a_gpu_one_line_suggests_the_cpu(doctor, command):
    proc = doctor(*command)
    if proc.returncode != 2:
        pytest.skip("torch sees a GPU here")
    assert proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("rocm-doctor: error: no GPU: ") and "--device cpu" in line


def test_the_cpu_runs_are_judged_not_refused(doctor):
    assert doctor("kernels", "--device", "cpu", "--only", "fft").returncode == 0
    proc = doctor("bench", "--preset", "tiny", "--device", "cpu", "--section", "launch")
    assert proc.returncode == 0, proc.stderr


def test_readme_documents_every_command_in_one_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| Command | 0 | 1 | 2 |"):].split("\n\n", 1)[0]
    for name in COMMANDS:
        assert re.search(rf"^\| [^|]*`{name}\b", table, re.M), f"{name} has no row in the exit-code table"
    assert "`rocm-doctor` alone" in table


def test_report_writes_exactly_the_format_asked_and_never_overwrites(doctor, tmp_path):
    (tmp_path / "keep.json").write_text("mine")
    proc = doctor("report", "--from", BROKEN, "-o", "keep.md")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "keep.json").read_text() == "mine"  # Markdown asked for, Markdown written
    assert (tmp_path / "keep.md").read_text().startswith("### rocm-doctor report")
    again = doctor("report", "--from", BROKEN, "-o", "keep.md")
    assert again.returncode == 2 and "keep.md exists; --force replaces it" in again.stderr
    assert doctor("report", "--from", BROKEN, "-o", "keep.md", "--force").returncode == 0

    assert doctor("report", "--from", BROKEN, "-o", "r.txt").returncode == 0
    assert sorted(p.name for p in tmp_path.glob("r.*")) == ["r.txt"]
    assert doctor("report", "--from", BROKEN, "--format", "both", "-o", "t.json").returncode == 0
    assert json.loads((tmp_path / "t.json").read_text())["kind"] == "diagnosis"
    assert "`t.json` beside this file" in (tmp_path / "t.md").read_text()
    assert doctor("report", "--from", BROKEN, "--format", "both").returncode == 2


def test_other_output_files_are_kept_too(doctor, tmp_path):
    (tmp_path / "snap.json").write_text("mine")
    (tmp_path / "kernels.json").write_text("mine")
    assert "--force replaces it" in doctor("snapshot", "-o", "snap.json").stderr
    assert "--force replaces it" in doctor("kernels", "--device", "cpu", "-o", "kernels.json").stderr
    assert (tmp_path / "snap.json").read_text() == (tmp_path / "kernels.json").read_text() == "mine"
