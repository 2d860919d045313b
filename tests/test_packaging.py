"""A non-editable install (the built wheel) ships every check, doc and data file, and never requires torch."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return next(out.glob("rocm_doctor-*.whl"))


def test_wheel_contains_checks_docs_and_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for source in sorted((ROOT / "checks").glob("*.py")) + sorted((ROOT / "checks" / "docs").glob("*.md")):
        assert f"rocm_doctor/checks/{source.relative_to(ROOT / 'checks').as_posix()}" in names
    for source in sorted((ROOT / "data").glob("*.json")):
        assert f"rocm_doctor/data/{source.name}" in names
    assert "rocm_doctor/probes/_torch_child.py" in names


def test_wheel_metadata_does_not_require_torch(wheel):
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith("/METADATA"))
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert requires and not any("torch" in line.lower() for line in requires)


def test_installed_wheel_finds_every_check_and_data_file(wheel, tmp_path):
    target = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    code = (
        "import rocm_doctor, json\n"
        "from importlib import resources\n"
        "from rocm_doctor.engine.registry import load_registry, check_doc\n"
        f"assert rocm_doctor.__file__.startswith({str(target)!r}), rocm_doctor.__file__\n"
        "r = load_registry(include_plugins=False)\n"
        "assert not r.problems, r.problems\n"
        "assert all(check_doc(c) for c in r.checks)\n"
        "for f in resources.files('rocm_doctor.data').iterdir():\n"
        "    if f.name.endswith('.json'): json.loads(f.read_text())\n"
        "print(len(r.checks))\n"
    )
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    expected = len([p for p in (ROOT / "checks" / "docs").glob("*.md")])
    assert int(run.stdout) == expected


def test_every_package_folder_is_listed_in_pyproject():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "rocm_doctor").rglob("__init__.py")
    }
    assert on_disk <= listed, f"add to pyproject.toml packages: {sorted(on_disk - listed)}"
