"""What people read: tables wrapped at word boundaries, whole help texts, titles (not ids) as labels, no fact keys,
no source tags, no files outside the repository."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from rich.console import Console

from rocm_doctor.report.checks_view import listing
from rocm_doctor.diagnose import Options, diagnose
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.report.human import render

SNAPSHOTS = sorted((Path(__file__).parent / "snapshots").glob("*.json"))
# the tags the support-matrix and closest-path lines carried ("[TR-SUP]", "[RIW-7.2]", "[overrides.json]")
SOURCE_TAG = re.compile(r"\[(?:TR-SUP|RIW-[0-9.]+|R-GOS-[0-9.]+|CM-HIST|R-WIN-[0-9.]+|[a-z_]+\.json)\]")


def _doctor(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": str(columns), "HOME": "/nonexistent"}
    # from outside the checkout: the installed package runs, not the source folder on sys.path
    return subprocess.run([sys.executable, "-m", "rocm_doctor", *args], capture_output=True, text=True, env=env,
                          timeout=60, cwd=tempfile.gettempdir())


def _rows():
    checks = sorted(load_registry().checks, key=lambda c: (c.area, c.id))
    return [{"id": c.id, "title": c.title, "area": c.area, "severity": c.severity.value,
             "platforms": [p.value for p in c.platforms]} for c in checks]


@pytest.mark.parametrize("width", [50, 80, 120])
def test_checks_wrap_at_word_boundaries(width):
    rows = _rows()
    lines = listing(rows, width)
    assert all(len(line) <= width for line in lines)
    text = " ".join(line.strip() for line in lines)
    text = re.sub(r"\s+", " ", text)
    for row in rows:  # every title survives whole, its words in order, none cut in two
        assert f"{row['title']} [{', '.join(row['platforms'])}]" in text


def test_checks_in_a_pipe_keep_one_line_per_check():
    rows = _rows()
    lines = [line for line in listing(rows, None) if line.startswith("  ")]
    assert len(lines) == len(rows)


def test_help_lists_every_command_in_full():
    proc = _doctor("--help")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()[1:]  # after the usage line, whose [ARGS]... is click's
    assert not any(line.rstrip().endswith(("...", "-")) for line in lines), proc.stdout
    text = re.sub(r"\s+", " ", proc.stdout)
    assert "Measure matmul, memory, launch, attention and an LLM-shaped decoder against what this GPU should do." in text
    assert "Diagnose the PyTorch GPU setup and say what to do about each problem." in text


@pytest.mark.parametrize("command", ["check", "report", "fix", "bench", "kernels"])
def test_option_help_keeps_names_whole(command):
    proc = _doctor(command, "--help", columns=60)
    assert proc.returncode == 0 and not any(line.rstrip().endswith("-") for line in proc.stdout.splitlines())


def _verbose(snapshot: Path) -> list[str]:
    report, _ = diagnose(Options(from_file=snapshot))
    out = io.StringIO()
    render(report, Console(file=out, width=200, no_color=True), verbose=True)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.stem)
def test_verbose_output_reads_as_sentences(snapshot):
    lines = _verbose(snapshot)
    keys = {key for check in load_registry().checks for key in check.requires}
    ids = {check.id for check in load_registry().checks}
    for line in lines:
        assert not SOURCE_TAG.search(line), line
        assert not any(f"needs {key}" in line for key in keys), line
        assert not re.search(r"\((?:%s)(?::[^)]*)?\)$" % "|".join(map(re.escape, ids)), line), line  # no id labels
    pointers = [line for line in lines if "about this check: rocm-doctor explain " in line]
    assert pointers  # the ids are still there, as what to type to read about a check


def test_data_show_sends_nobody_outside_the_repository():
    proc = _doctor("data", "show", "--sources")
    assert proc.returncode == 0 and "[AMD-ARCH]" in proc.stdout
    assert "via:" not in proc.stdout and "shared/" not in proc.stdout
