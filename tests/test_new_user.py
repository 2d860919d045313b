"""What a new user sees on a machine without a GPU, run as the user runs it: the installed CLI in a real process
(and a real terminal where the layout matters)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).parent.parent / "docs" / "guide.md"
SNAPSHOTS = Path(__file__).parent / "snapshots"
WIDTHS = (60, 80, 120, 200)


def _display_devices() -> bool:
    """Whether this machine has a display-class PCI device (a GPU): then "No GPU found" is not what it says."""
    return any(p.read_text().startswith("0x03") for p in Path("/sys/bus/pci/devices").glob("*/class"))


no_gpu_here = pytest.mark.skipif(not Path("/sys/bus/pci/devices").is_dir() or _display_devices(),
                                 reason="needs a Linux machine with no GPU on the PCI bus")


@pytest.fixture
def bare_python(tmp_path):
    """A fresh venv with neither torch nor pip: the interpreter of a user who has not installed torch yet."""
    venv = tmp_path / "bare"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True, timeout=120)
    return venv / "bin" / "python"


def _headline_and_footer(text: str) -> tuple[str, str]:
    lines = [line for line in text.splitlines() if line.strip()]
    headline = next(line for line in lines if re.match(r"^(No GPU found|Broken|Healthy|Works|Could not)", line))
    footer = next(line for line in reversed(lines) if re.match(r"^[A-Z][a-z]+.*: \d+ ", line))
    return headline, footer


@no_gpu_here
def test_no_gpu_and_no_torch_says_so_and_plans_the_install(doctor, bare_python):
    result = doctor("check", "--python", str(bare_python), "--no-history")
    assert result.returncode == 1, result.stderr
    headline, footer = _headline_and_footer(result.stdout)
    assert headline.startswith("No GPU found: no AMD or NVIDIA GPU on the PCI bus")
    assert footer.startswith("No GPU found: 1 fail")  # the footer repeats the headline's verdict
    assert "Check that the card is seated, the driver is loaded" in result.stdout  # the guide's hints
    assert "[FAIL] PyTorch in the target environment: torch is not installed in" in result.stdout  # reads right
    assert "all 0 " not in result.stdout
    # what runs on this machine first: the CPU build; the ROCm build is the labelled alternative, with its needs
    command = f"{bare_python} -m pip install torch --index-url https://download.pytorch.org/whl/cpu"
    rocm = f"{bare_python} -m pip install torch --index-url https://download.pytorch.org/whl/rocm"
    lines = [line.strip() for line in result.stdout.splitlines()]
    first, alternative = lines.index(command), next(i for i, line in enumerate(lines) if line.startswith(rocm))
    assert first < lines.index("Or (alternative): the ROCm build, for an AMD GPU this run did not find") < alternative
    assert "Prefer it when this machine does have an AMD GPU" in result.stdout
    assert "rocm[libraries]" in result.stdout  # what the ROCm wheels need beside them
    data = json.loads(doctor("check", "--python", str(bare_python), "--no-history", "--json").stdout)
    assert data["diagnosis"]["verdict"] == "no-gpu"
    preview = doctor("fix", "--dry-run", "--python", str(bare_python))
    assert preview.returncode == 0, preview.stderr
    assert "install torch from https://download.pytorch.org/whl/cpu" in preview.stdout
    planned = preview.stdout.split("Not planned")[0]
    assert command in [line.strip() for line in planned.splitlines()] and "whl/rocm" not in planned
    assert "  - Alternative: the ROCm build, for an AMD GPU this run did not find" in preview.stdout


@no_gpu_here
@pytest.mark.parametrize("width", WIDTHS)
def test_headline_and_footer_agree_in_a_terminal(tmp_path, isolated_env, bare_python, terminal, width):
    env = {**isolated_env, "COLUMNS": str(width)}
    shown, code, _ = terminal([sys.executable, "-m", "rocm_doctor", "check", "--python", str(bare_python),
                                 "--no-history"], env, width, tmp_path)
    assert code == 1
    headline, footer = _headline_and_footer(shown)
    assert headline.split(":")[0] == footer.split(":")[0] == "No GPU found"


def test_one_verdict_vocabulary_for_the_guide_the_headline_and_the_footer():
    from rocm_doctor.engine.diagnosis import HEALTHY, NO_GPU, NO_GPU_HINTS, VERDICTS

    guide = GUIDE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([A-Z][^|]+?) \|", guide, re.M)
    assert {word for _, word in [*VERDICTS.values(), HEALTHY, NO_GPU]} <= set(rows)
    assert ", ".join(NO_GPU_HINTS) in guide


def test_works_with_problems_is_not_said_without_a_gpu():
    from rocm_doctor.engine import diagnosis
    from rocm_doctor.engine.model import Finding, Severity, Status

    warn = Finding(id="x", check="x", status=Status.WARN, title="t", message="m", severity=Severity.MEDIUM,
                   area="environment")
    seen = diagnosis.build([warn], no_gpu="no GPU on the PCI bus")
    assert (seen.verdict, seen.headline) == ("no-gpu", "No GPU found: no GPU on the PCI bus; 1 problem to fix.")
    assert diagnosis.build([warn]).verdict == "works-with-problems"


def _command_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(("rocm-doctor fix", "rocm-doctor check"))]


def test_the_preview_offers_only_the_commands_that_apply_something(doctor, isolated_env, bare_python, tmp_path):
    only_installs = doctor("fix", "--dry-run", "--no-gpu", "--python", str(bare_python))
    assert only_installs.returncode == 0, only_installs.stderr
    assert "'will apply'" not in only_installs.stdout  # no step is marked so
    applying = [c for c in _command_lines(only_installs.stdout) if "--dry-run" not in c]  # not an alternative's
    assert applying == [f"rocm-doctor fix --allow-install --python {bare_python}"]
    home = Path(isolated_env["HOME"])
    (home / ".bashrc").write_text('export CUDA_VISIBLE_DEVICES=""\n', encoding="utf-8")
    env = {**isolated_env, "SHELL": "/bin/bash", "CUDA_VISIBLE_DEVICES": ""}
    with_rc = doctor("fix", "--dry-run", "--no-gpu", "--python", str(bare_python), env=env)
    assert "[will apply]" in with_rc.stdout
    assert "To apply the steps marked 'will apply':" in with_rc.stdout
    assert f"rocm-doctor fix --python {bare_python}" in _command_lines(with_rc.stdout)


def test_a_replayed_snapshot_never_suggests_acting_on_this_machine(doctor):
    snapshot = str(SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json")
    check = doctor("check", "--from", snapshot)
    assert check.returncode == 1, check.stderr
    assert _command_lines(check.stdout) == [f"rocm-doctor fix --dry-run --from {snapshot}"]
    preview = doctor("fix", "--dry-run", "--from", snapshot)
    assert preview.returncode == 0, preview.stderr
    assert "recorded on" in preview.stdout
    assert not [c for c in _command_lines(preview.stdout) if "--dry-run" not in c]


def test_a_preview_without_a_plan_and_a_fix_with_nothing_to_change_exit_0(doctor, isolated_env):
    snapshot = str(SNAPSHOTS / "linux-h200-xid-31-mmu-fault-illegal-memory-access.json")  # a fail with no plan
    preview = doctor("fix", "--dry-run", "--from", snapshot)
    assert preview.returncode == 0 and "No automatic fix plan" in preview.stdout, preview.stdout + preview.stderr
    nothing = doctor("fix", "--no-gpu", "--only", "gpu-visibility-env")  # stdin is not a terminal, as `</dev/null`
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr
    assert "Nothing to fix" in nothing.stdout


def test_a_closed_pipe_ends_quietly_with_the_sigpipe_code(tmp_path, isolated_env):
    snapshot = str(SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json")
    for extra in ((), ("--json",)):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader already left, as `| head -1` does after its line
        proc = subprocess.run([sys.executable, "-m", "rocm_doctor", "check", "--from", snapshot, *extra],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, env=isolated_env, cwd=tmp_path,
                              timeout=120)
        os.close(write_end)
        assert (proc.returncode, proc.stderr) == (141, "")
    shell = subprocess.run(["bash", "-c", f'"{sys.executable}" -m rocm_doctor check --from "{snapshot}" --json '
                                          '| head -c 100 >/dev/null; echo "${PIPESTATUS[0]}"'],
                           capture_output=True, text=True, env=isolated_env, cwd=tmp_path, timeout=120)
    assert shell.stdout.strip() in ("1", "141") and "Traceback" not in shell.stderr  # 1: it all fit in the pipe


def test_usage_errors_are_one_line(doctor):
    for args in (("check", "--bogus"), ("--bogus",), ("fix", "--shell"), ("explain",), ("chek",)):
        proc = doctor(*args)
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("rocm-doctor: error: ") and "--help" in proc.stderr


@pytest.mark.parametrize("args, says", [
    (("fix", "--dry-run", "--no-gpu"), "probing the machine"),
    (("check", "--no-gpu", "--no-history"), "probing the machine"),
    (("kernels", "--device", "cpu", "--only", "memory"), "running the operator kernels on the CPU"),
])
def test_long_commands_say_what_they_do_at_once_on_a_terminal(tmp_path, isolated_env, terminal, args, says):
    argv = [sys.executable, "-m", "rocm_doctor", *args]
    shown, _, times = terminal(argv, isolated_env, 100, tmp_path, stderr_too=True)
    assert says in shown
    assert "on the GPU agree" not in shown  # `kernels --device cpu` ran on the CPU
    assert times and times[0] < 1.5  # measured 0.3-0.75 s; the margin is for a loaded machine
    piped = subprocess.run(argv, capture_output=True, text=True, env=isolated_env, cwd=tmp_path, timeout=300)
    assert says not in piped.stderr  # no status line where no one watches it


def test_a_logging_switch_exported_in_bashrc_is_unset_for_new_terminals_and_undone_exactly(doctor, isolated_env):
    home = Path(isolated_env["HOME"])
    rc = home / ".bashrc"
    original = b"# mine\nexport AMD_LOG_LEVEL=4\n"
    rc.write_bytes(original)
    env = {**isolated_env, "SHELL": "/bin/bash", "AMD_LOG_LEVEL": "4"}
    applied = doctor("fix", "--yes", "--no-gpu", "--only", "gpu-library-logging-enabled", env=env)
    assert "[applied]" in applied.stdout and "resolved" in applied.stdout, applied.stdout + applied.stderr
    new_terminal = subprocess.run(["bash", "-c", 'source ~/.bashrc; echo "${AMD_LOG_LEVEL-unset}"'], text=True,
                                  capture_output=True, env={"HOME": str(home), "AMD_LOG_LEVEL": "4"}, timeout=30)
    assert new_terminal.stdout.strip() == "unset"
    undone = doctor("fix", "--undo", "--yes", env=env)
    assert undone.returncode == 0, undone.stderr
    assert rc.read_bytes() == original


def test_the_rc_probe_watches_the_variables_the_checks_unset():
    from rocm_doctor.probes.shell_rc import matching_lines

    text = "# export HIP_VISIBLE_DEVICES=1\nexport AMD_LOG_LEVEL=4 CUDA_VISIBLE_DEVICES=\nexport EDITOR=vim\n"
    assert [(n, v) for n, v, _ in matching_lines(text)] == [(2, "AMD_LOG_LEVEL"), (2, "CUDA_VISIBLE_DEVICES")]


def test_the_printed_compileall_command_succeeds_past_files_for_a_newer_python(tmp_path):
    """torch ships modules for newer Pythons (torch 2.13: testing/_internal/py312_intrinsics.py); the printed
    command skips them and exits 0, and every other module gets its bytecode."""
    from rocm_doctor.checks.torch_bytecode import TorchBytecodeNotCached
    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.report.diagnosis_view import commands

    folder = tmp_path / "site" / "torch"
    (folder / "testing" / "_internal").mkdir(parents=True)
    (folder / "__init__.py").write_text("x = 1\n")
    newer = f"py3{sys.version_info.minor + 1}_intrinsics.py"
    (folder / "testing" / "_internal" / newer).write_text("def f[T](a: 'x') -> None: match := 1\n")  # no Python's
    facts = Facts(Observations())
    facts.set("torch.bytecode", {"modules": 2, "cached": 0, "folder": str(folder), "folder_writable": True,
                                 "dont_write_bytecode": True, "variable": "1"})
    facts.set("python.target", {"python": sys.executable, "reason": "test"})
    facts.set("python.target.version", ".".join(map(str, sys.version_info[:3])))
    finding = TorchBytecodeNotCached().run(facts)
    [line] = commands(finding.fix[0], "bash")
    ran = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert list((folder / "__pycache__").glob("__init__.*.pyc"))


def test_manual_commands_in_the_json_are_commands_and_prose_is_apart(doctor, isolated_env, bare_python):
    home = Path(isolated_env["HOME"])
    (home / ".bashrc").write_text('export CUDA_VISIBLE_DEVICES=""\n', encoding="utf-8")
    env = {**isolated_env, "SHELL": "/bin/bash", "CUDA_VISIBLE_DEVICES": ""}
    plan = json.loads(doctor("fix", "--dry-run", "--json", "--no-gpu", "--python", str(bare_python), env=env).stdout)
    steps = {s["id"]: s for s in plan["steps"]}
    assert steps["unset-cuda-visible-devices-user"]["manual_instructions"] == [
        "add to ~/.bashrc: unset CUDA_VISIBLE_DEVICES"]
    for step in plan["steps"]:
        for command in step["manual_commands"]:
            assert subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0, command
            assert not re.match(r"^(add to|in|edit|run these) ", command), command


def _all_commands():
    import click

    from rocm_doctor.cli.main import cli

    for name in cli.list_commands(None):
        yield (name,)
        sub = cli.get_command(None, name)
        if isinstance(sub, click.Group):
            yield from ((name, n) for n in sub.list_commands(None))


def test_help_cites_no_file_an_installed_copy_lacks():
    """An installed copy has no docs/ and keeps data/ inside the package, so help must not send a user there."""
    from click.testing import CliRunner

    from rocm_doctor.cli.main import cli

    for path in [(), *_all_commands()]:
        result = CliRunner().invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert not re.search(r"(?<![\w/])(docs|data)/[\w./-]+", result.output), (path, result.output)


def test_history_compares_runs_of_the_same_python_only(doctor, isolated_env, bare_python):
    first = doctor("check", "--no-gpu")  # the doctor's own Python, with torch
    assert first.returncode in (0, 1), first.stderr
    second = doctor("check", "--no-gpu", "--python", str(bare_python))
    assert second.returncode == 1 and "torch-not-installed" not in second.stderr
    assert "new since" not in second.stdout  # the earlier run diagnosed another Python
    listed = doctor("diff", "--list").stdout.splitlines()
    assert len(listed) == 2 and str(bare_python) in listed[1] and str(bare_python) not in listed[0]
    alone = doctor("diff")  # the newest run has no earlier run of its own Python
    assert alone.returncode == 2 and f"no earlier stored run diagnosed {bare_python}" in alone.stderr
    a, b = (line.split()[0] for line in listed)
    across = doctor("diff", a, b)
    assert across.returncode == 1
    assert "A and B diagnosed different things" in across.stdout and f"B diagnosed {bare_python}" in across.stdout
    assert "WHAT CHANGED" not in across.stdout and "rocm.libraries" not in across.stdout


DOCTOR_DEPS = ("click", "rich", "markdown_it", "mdurl", "pygments", "packaging", "requests", "urllib3", "idna",
               "certifi", "charset_normalizer")


def _install_this_doctor(site: Path, deps: Path) -> None:
    """Make the rocm-doctor under test importable in another venv, as it is installed here (editable or not)."""
    import importlib.util
    import shutil
    import site as site_module

    package = Path(importlib.util.find_spec("rocm_doctor").origin).parent
    checks = Path(list(importlib.util.find_spec("rocm_doctor.checks").submodule_search_locations)[0])
    if checks.parent == package:  # a regular install: the package holds checks/ and data/
        (deps / "rocm_doctor").symlink_to(package)
        return
    editable = [p for d in site_module.getsitepackages() for p in Path(d).glob("__editable__*rocm_doctor*")]
    if not editable:
        pytest.skip("rocm-doctor is neither installed nor installed editable here")
    for path in editable:
        shutil.copy(path, site / path.name)


def _doctor_in(python: Path, deps: Path) -> None:
    """rocm-doctor and its dependencies (no torch, no numpy) importable in the venv of `python`, as `pip install .`
    leaves them."""
    import importlib.util

    deps.mkdir()
    for name in DOCTOR_DEPS:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        (deps / name).symlink_to(list(spec.submodule_search_locations)[0])
    site = next((python.parent.parent / "lib").glob("python3*/site-packages"))
    _install_this_doctor(site, deps)
    (site / "doctor-deps.pth").write_text(f"{deps}\n")


@no_gpu_here
def test_the_readme_first_command_in_a_fresh_venv_without_torch_reads_right(tmp_path, isolated_env, bare_python):
    """`pip install . && rocm-doctor check` with that fresh venv active: it diagnoses the venv, says torch is not
    there and plans the CPU build; nothing speaks of a torch that is not installed as if it had looked."""
    _doctor_in(bare_python, tmp_path / "deps")
    venv = bare_python.parent.parent
    env = {**isolated_env, "VIRTUAL_ENV": str(venv), "PATH": f"{bare_python.parent}:{isolated_env['PATH']}"}
    proc = subprocess.run([str(bare_python), "-m", "rocm_doctor", "check", "--no-history"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout
    assert f"Diagnosing {bare_python} — the active virtual environment (VIRTUAL_ENV)" in text
    assert f"torch is not installed in {bare_python}, the active virtual environment (VIRTUAL_ENV)" in text
    assert f"{bare_python} -m pip install torch --index-url https://download.pytorch.org/whl/cpu" in text
    assert "GPU kernels did not run: torch is not installed in the target environment" in text
    assert "torch does not see a GPU" not in text and "numpy" not in text  # no torch: nothing of torch is judged
    assert "(VIRTUAL_ENV), which rocm-doctor runs in)" not in text  # no parenthesis inside a parenthesis


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX layout")
def test_a_venv_made_for_the_doctor_diagnoses_the_python_on_path(tmp_path, isolated_env, bare_python):
    """The README's PEP 668 path: rocm-doctor in a venv of its own (no torch), no environment active; it
    diagnoses the python3 the user runs, as a pipx install does, and says why."""
    _doctor_in(bare_python, tmp_path / "deps")
    users = tmp_path / "userbin"
    users.mkdir()
    (users / "python3").write_text(f"#!/bin/sh\nexec '{sys.executable}' \"$@\"\n")  # the user's Python, with torch
    (users / "python3").chmod(0o755)
    env = {**isolated_env, "PATH": f"{bare_python.parent}:{users}:{isolated_env['PATH']}"}
    proc = subprocess.run([str(bare_python), "-m", "rocm_doctor", "check", "--json", "--no-gpu", "--no-history",
                           "--only", "torch-not-installed"], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)
    target = json.loads(proc.stdout)["target"]
    assert target["python"] == str(users / "python3"), proc.stderr
    assert "a virtual environment without torch" in target["reason"] and "--python" in target["reason"]


def test_python_given_by_name_is_looked_up_on_path(doctor, fake_bin):
    fake_bin.add("python3", f"exec '{sys.executable}' \"$@\"\n")
    proc = doctor("check", "--python", "python3", "--json", "--no-gpu", "--no-history", "--only", "torch-not-installed")
    target = json.loads(proc.stdout)["target"]
    assert target["python"] == str(fake_bin.path / "python3") and "python3 on PATH" in target["reason"]
    missing = doctor("check", "--python", "python9.99", "--no-history")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "rocm-doctor: error: --python python9.99: no such file, and no python9.99 on PATH"


def test_the_documented_completion_line_completes_commands_and_options(tmp_path, isolated_env, fake_bin):
    guide = GUIDE.read_text(encoding="utf-8")
    line = next(l.split("#")[0].strip() for l in guide.splitlines() if "bash_source" in l)
    fake_bin.add("rocm-doctor", f"exec '{sys.executable}' -m rocm_doctor \"$@\"\n")
    script = (f'{line}\nCOMP_WORDS=(rocm-doctor ch); COMP_CWORD=1; _rocm_doctor_completion rocm-doctor\n'
              'echo "${COMPREPLY[*]}"\nCOMP_WORDS=(rocm-doctor check --no-); COMP_CWORD=2; '
              '_rocm_doctor_completion rocm-doctor\necho "${COMPREPLY[*]}"\n')
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=isolated_env, cwd=tmp_path,
                          timeout=120)
    commands, options = proc.stdout.splitlines()[-2:]
    assert set(commands.split()) == {"check", "checks"}, proc.stderr
    assert {"--no-gpu", "--no-history"} <= set(options.split())


def test_names_users_try_get_the_command_that_does_it(doctor):
    history = doctor("history")
    assert history.returncode == 2 and "try: rocm-doctor diff --list" in history.stderr
    for command in ("kernels", "bench"):
        rocm = doctor(command, "--device", "rocm")
        assert rocm.returncode == 2 and "use --device cuda" in rocm.stderr
        assert len(rocm.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("width", WIDTHS)
def test_one_screen_uses_one_set_of_marks_and_words_not_keys(tmp_path, isolated_env, terminal, width):
    snapshot = str(SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json")  # a cause with symptoms
    env = {**isolated_env, "COLUMNS": str(width), "TERM": "xterm"}
    shown, code, _ = terminal([sys.executable, "-m", "rocm_doctor", "check", "--from", snapshot], env, width,
                              tmp_path)
    assert code == 1 and "This also explains:" in shown
    assert "[✗]" in shown and "[FAIL]" not in shown and "[warn]" not in shown  # a terminal's marks, everywhere
    assert "`" not in shown  # Markdown quoting is for the Markdown report
    assert not re.search(r"^(KERNEL-LOG|ROCM-DOCTOR|MULTI-GPU|GPU-STATE)$", shown, re.M)


PATH_OR_URL = re.compile(r"(?:https?://|(?<![\w.])/)[^\s`'\"),;]+")


def _paths_and_urls(report: dict) -> set[str]:
    """Every path and URL the report's prose names (messages, evidence, advice, versions), as the terminal shows
    them: without a sentence's closing punctuation."""
    texts = [v["value"] for v in report.get("versions") or []]
    for finding in report["findings"]:
        texts += [finding["message"], *finding["evidence"], *finding["remediation"]]
    return {token.rstrip(".:") for text in texts for token in PATH_OR_URL.findall(text) if len(token) > 12}


@pytest.mark.parametrize("width", (60, 80))
def test_paths_and_urls_are_never_split_in_a_terminal(tmp_path, isolated_env, terminal, doctor, width):
    recorded = (SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json").read_text(encoding="utf-8")
    snapshot = str(tmp_path / "deep-venv.json")  # the same machine with its venv where projects often keep it
    Path(snapshot).write_text(recorded.replace("/home/user/venv", "/home/user/projects/segmentation-experiments/.venv"),
                              encoding="utf-8")
    report = json.loads(doctor("check", "--from", snapshot, "--json").stdout)
    tokens = _paths_and_urls(report)
    assert len([t for t in tokens if len(t) > width]) >= 2  # longer than any line: rich would fold them
    env = {**isolated_env, "COLUMNS": str(width), "TERM": "xterm"}
    shown, code, _ = terminal([sys.executable, "-m", "rocm_doctor", "check", "-v", "--from", snapshot], env, width,
                              tmp_path)
    assert code == 1
    lines = shown.splitlines()
    split = [t for t in tokens if not any(t in line for line in lines)]
    assert not split, f"not whole on one line: {split}"
    assert "`" not in shown  # Markdown quoting is for the Markdown report, advice and evidence included
    for line in lines:  # a line past the edge is a command, or one whole word after its lead, never prose
        if len(line) > width and not line.startswith(" " * 10):  # commands: whole, ten spaces in
            lead, _, word = line.rstrip().rpartition(" ")
            assert len(lead) < width and ("/" in word or word.startswith("[")), line


def test_the_default_view_is_one_line_per_area_and_v_shows_every_check(tmp_path, isolated_env, terminal, doctor):
    snapshot = str(SNAPSHOTS / "linux-2x-mi100-gfx908-healthy.json")
    report = json.loads(doctor("check", "--from", snapshot, "--json").stdout)
    passing = [f for f in report["findings"] if f["status"] == "ok"]
    env = {**isolated_env, "COLUMNS": "120", "TERM": "xterm"}
    argv = [sys.executable, "-m", "rocm_doctor", "check", "--from", snapshot]
    compact, code, _ = terminal(argv, env, 120, tmp_path)
    full, full_code, _ = terminal([*argv, "-v"], env, 120, tmp_path)
    assert code == full_code == 0
    assert _headline_and_footer(compact) == _headline_and_footer(full)
    assert not [f["title"] for f in passing if f["title"] in compact]  # counted on its area's line, not listed
    assert all(f["title"] in full for f in passing)
    areas = {f["area"] for f in report["findings"] if f["status"] != "skip"}
    area_lines = [line for line in compact.splitlines() if re.match(r"^\[.\] [A-Z]", line)]
    assert len(area_lines) == len(areas)
    assert "[✓] TORCH: torch 2.7.1+rocm6.3, ROCm build, HIP 6.3.42131-fa1d09cbd (4 checks passed)" in area_lines
    assert len(compact.splitlines()) < len(full.splitlines()) / 3


def test_check_v_and_the_report_carry_the_versions_block(doctor, tmp_path):
    snapshot = str(SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json")
    names = ["torch", "GPU driver", "ROCm (HIP)", "GPUs", "CPU", "OS", "glibc", "gcc", "numpy", "Python"]
    data = json.loads(doctor("report", "--from", snapshot, "--format", "json").stdout)
    versions = {v["name"]: v for v in data["versions"]}
    assert list(versions) == names
    assert versions["torch"]["value"] == "torch 2.7.1+rocm6.3, ROCm build, HIP 6.3.42131-fa1d09cbd"
    assert versions["GPUs"]["value"] == "AMD Radeon RX 6600 XT (gfx1032)"
    assert not versions["CPU"]["found"] and versions["CPU"]["value"].startswith("not recorded")  # an older snapshot
    assert versions["ROCm (HIP)"]["value"].startswith("hipconfig not found on PATH")  # the reason, said once
    markdown = doctor("report", "--from", snapshot).stdout
    assert "- torch: torch 2.7.1+rocm6.3, ROCm build" in markdown
    verbose = doctor("check", "-v", "--from", snapshot).stdout
    assert "VERSIONS" in verbose and "  GPUs        AMD Radeon RX 6600 XT (gfx1032)" in verbose
    assert "VERSIONS" not in doctor("check", "--from", snapshot).stdout  # the area lines carry what they found


def test_a_version_nothing_looked_for_is_not_called_not_found(doctor):
    """`check -v` on a snapshot whose glibc was never asked for and whose gcc was never recorded: the block says
    so, not "not found" (which would claim a look that was not made)."""
    snapshot = str(SNAPSHOTS / "linux-h200-xid-79-fell-off-the-bus-torch-sees-no-gpu.json")
    verbose = doctor("check", "-v", "--from", snapshot).stdout
    block = verbose[verbose.index("VERSIONS"):].split("\n\n", 1)[0]
    assert "  glibc       ldd --version was not run" in block
    assert "  gcc         not recorded (a run from before" in block
    assert "not found: " not in block


def test_data_show_summarises_each_table_and_lists_sources_on_request(doctor):
    summary = doctor("data", "show")
    assert summary.returncode == 0
    tables = json.loads(doctor("data", "show", "--json").stdout)["tables"]
    lines = summary.stdout.splitlines()
    assert len(lines) < len(tables) + 10 and "[AMD-ARCH]" not in summary.stdout
    assert lines[0].startswith("Data in use: the copy built into rocm-doctor, version ")  # words, not "embedded"
    assert not any(line.startswith("Built into rocm-doctor") for line in lines)  # the first line said it
    catalog = next(t for t in tables if t["name"] == "gpu_catalog.json")
    assert any(line.startswith(f"gpu_catalog.json: {len(catalog['sources'])} source(s), ") for line in lines)
    listed = doctor("data", "show", "--sources").stdout
    assert all(f"[{key}] " in listed for key in catalog["sources"])


@pytest.mark.parametrize("width", (60, 200))
def test_a_live_check_lists_no_passing_check_by_default(tmp_path, isolated_env, terminal, doctor, width):
    """This machine, as a new user runs `check`: the passing checks are counted on their area's line, never listed
    one by one, and each area that ran has exactly one line."""
    report = json.loads(doctor("check", "--no-gpu", "--no-history", "--json").stdout)
    env = {**isolated_env, "COLUMNS": str(width), "TERM": "xterm"}
    shown, code, _ = terminal([sys.executable, "-m", "rocm_doctor", "check", "--no-gpu", "--no-history"], env, width,
                              tmp_path)
    assert code in (0, 1)
    passing = {f["title"] for f in report["findings"] if f["status"] == "ok"}
    assert passing and not [t for t in passing if f"] {t}" in shown.replace("\n", " ")]
    for area in {f["area"] for f in report["findings"] if f["status"] != "skip"}:
        title = area.replace("-", " ").upper()
        assert len(re.findall(rf"^\[.\] {re.escape(title)}\b", shown, re.M)) == 1, (area, shown)


def test_the_guide_says_a_machine_without_a_gpu_gets_the_cpu_build_first():
    guide = " ".join(GUIDE.read_text(encoding="utf-8").split())
    assert "With **No GPU found** on Linux and no torch in the environment, the plan installs the CPU build" in guide
    assert "The GPU build comes under it as a labelled alternative" in guide


def test_an_older_hip_sdk_is_not_called_a_match_for_torchs_hip(doctor):
    """`check -v` on Windows with HIP SDK 7.1 and torch built with HIP 7.2: the passing line says what it compared
    (the major release), not that the versions match."""
    shown = doctor("check", "-v", "--from", str(SNAPSHOTS / "windows-no-device.json")).stdout
    assert "HIP SDK 7.1, the same major release as torch's HIP 7.2.26024" in " ".join(shown.split())
    assert "matching torch's HIP" not in shown


def test_a_symptom_under_its_cause_does_not_point_back_at_it_by_id(doctor):
    """Windows, hipInfo lists no GPU: torch's "cannot reach any GPU" is shown under that cause, in words."""
    shown = doctor("check", "--from", str(SNAPSHOTS / "windows-no-device.json")).stdout
    explains = shown[shown.index("This also explains:"):].split("\n\n", 1)[0]
    assert "lists no GPU (hipInfo), so the cause is below torch" in " ".join(explains.split())
    assert "windows-gpu-not-enumerated" not in explains
