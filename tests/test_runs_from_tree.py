"""The tests test this tree, and the tree runs without being installed.

The README's test command installs the checkout editable, so `rocm_doctor` and the checks/ and data/ folders it
ships are imported from here; a copy installed elsewhere (a non-editable `pip install .`) would make every other
test test that copy instead, and the first test below says so. A bare copy of the tree, with another copy
installed, still runs its own checks and data (`python -m rocm_doctor` in a fresh clone)."""

import shutil
import subprocess
import sys
from pathlib import Path

import rocm_doctor
import rocm_doctor.checks
import rocm_doctor.data

REPO = Path(__file__).resolve().parents[1]


def test_the_package_under_test_is_this_tree():
    for module, folder in ((rocm_doctor, "rocm_doctor"), (rocm_doctor.checks, "checks"), (rocm_doctor.data, "data")):
        where = Path(module.__file__).resolve()
        assert where == REPO / folder / "__init__.py", (
            f"{module.__name__} is imported from {where}, not this tree: install it with pip install -e .")


def test_a_bare_copy_of_the_tree_runs_its_own_checks_and_data(tmp_path):
    for folder in ("rocm_doctor", "checks", "data"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    code = ("import json, rocm_doctor.checks.visibility as v\n"
            "from importlib import resources\n"
            "from rocm_doctor.engine.registry import load_registry\n"
            "r = load_registry(include_plugins=False)\n"
            "print(v.__file__)\n"
            "print(json.loads(resources.files('rocm_doctor.data').joinpath('gpu_catalog.json').read_text()) != {})\n"
            "print(len(r.checks), len(r.problems))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    module_file, data_read, counts = run.stdout.splitlines()
    assert Path(module_file).resolve() == (tmp_path / "checks" / "visibility.py").resolve()
    assert data_read == "True"
    assert counts == f"{len(list((REPO / 'checks' / 'docs').glob('*.md')))} 0"


def test_python_m_rocm_doctor_runs_in_the_tree():
    run = subprocess.run([sys.executable, "-m", "rocm_doctor", "explain", "gpu-visibility-env"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "gpu-visibility-env" in run.stdout
