"""A non-editable install (the built wheel) ships every check, doc, data file and child script, never requires
torch, and its child scripts run from the installed copy in an isolated interpreter."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rocm_doctor.engine.child import parse_json_lines

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
CHILD_FILES = ("_childlib.py", "probes/_torch_child.py", "windows/_sdk_child.py", "distributed/_collectives_child.py",
               "gpu/kernels/_child.py", "gpu/kernels/_cases*.py", "gpu/bench/_bench_*.py")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The wheel pip builds from the checkout, and what the checkout held before and after the build."""
    out = tmp_path_factory.mktemp("wheel")
    before = {p.name for p in ROOT.iterdir()}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return next(out.glob("rocm_doctor-*.whl")), before, {p.name for p in ROOT.iterdir()}


@pytest.fixture(scope="module")
def wheel(built):
    return built[0]


def test_building_the_wheel_leaves_the_checkout_as_it_was(built):
    """`pip install .` builds the wheel as this does: no build/ or *.egg-info is left in the checkout."""
    _, before, after = built
    assert after - before == set()


def test_wheel_contains_checks_docs_and_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for source in sorted((ROOT / "checks").glob("*.py")) + sorted((ROOT / "checks" / "docs").glob("*.md")):
        assert f"rocm_doctor/checks/{source.relative_to(ROOT / 'checks').as_posix()}" in names
    for source in sorted((ROOT / "data").glob("*.json")):
        assert f"rocm_doctor/data/{source.name}" in names
    for pattern in CHILD_FILES:
        sources = sorted((ROOT / "rocm_doctor").glob(pattern))
        assert sources, pattern
        for source in sources:
            assert f"rocm_doctor/{source.relative_to(ROOT / 'rocm_doctor').as_posix()}" in names


def test_wheel_metadata_does_not_require_torch(wheel):
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith("/METADATA"))
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert requires and not any("torch" in line.lower() for line in requires)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel installed into a plain folder (not the editable checkout)."""
    target = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return target


def test_installed_wheel_finds_every_check_and_data_file(installed, tmp_path):
    target = installed
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


@pytest.mark.parametrize("child,payload,marker", [
    ("probes/_torch_child.py", None, "stage"),
    ("gpu/kernels/_child.py", {"device": "cpu", "cases": ["sum-float32", "mm-float32"]}, "event"),
    ("gpu/bench/_bench_child.py",
     {"device": "cpu", "sections": [{"name": "launch", "timeout_s": 60, "params": {"iters": 40}}]}, "bench"),
    ("distributed/_collectives_child.py", {"mode": "probe"}, "coll"),
])
def test_installed_children_run_by_path_in_an_isolated_interpreter(installed, tmp_path, child, payload, marker):
    """Each child runs from the installed copy with -I, as the doctor runs it in a target interpreter: it loads
    the child library and its sibling modules by path and speaks the line format the parent parses."""
    script = installed / "rocm_doctor" / child
    run = subprocess.run([sys.executable, "-I", str(script)], input=json.dumps(payload) if payload else "",
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    records = parse_json_lines(run.stdout, marker)
    assert records[0][marker] == "start" and records[-1][marker] == "done", run.stdout
    if marker == "event":
        assert [r["outcome"] for r in records if r[marker] == "result"] == ["ok", "ok"]
    elif marker == "bench":
        assert next(r for r in records if r[marker] == "section_end")["state"] == "ok"
    elif marker == "coll":
        assert any(r[marker] == "devices" for r in records)
    else:
        assert next(r for r in records if r[marker] == "import")["ok"] is True


def test_installed_sdk_child_answers_with_one_object(installed, tmp_path):
    run = subprocess.run([sys.executable, "-I", "-S", str(installed / "rocm_doctor" / "windows" / "_sdk_child.py")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert set(answer) == {"python", "prefix", "packages", "torch_dir", "sdk_dirs", "cxx_headers"}
