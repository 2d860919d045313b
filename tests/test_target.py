"""Which interpreter is diagnosed, and why."""

import sys

import pytest

from rocm_doctor.probes._target import TargetError, choose_python


def test_explicit_python(tmp_path):
    path, reason = choose_python(sys.executable, {})
    assert path == sys.executable and "--python" in reason


@pytest.mark.parametrize("kind", ["missing", "folder", "not-executable"])
def test_bad_explicit_python(tmp_path, kind):
    target = tmp_path / "python"
    if kind == "folder":
        target.mkdir()
    elif kind == "not-executable":
        target.write_text("")
    with pytest.raises(TargetError, match=r"^--python "):
        choose_python(str(target), {})


def test_active_virtual_environment_wins(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text("")
    path, reason = choose_python(None, {"VIRTUAL_ENV": str(tmp_path)})
    assert path == str(tmp_path / "bin" / "python") and "VIRTUAL_ENV" in reason


def test_conda_environment(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text("")
    path, reason = choose_python(None, {"CONDA_PREFIX": str(tmp_path)})
    assert path.endswith("python") and "conda" in reason


def test_falls_back_to_own_interpreter(tmp_path):
    path, reason = choose_python(None, {"VIRTUAL_ENV": str(tmp_path / "gone")})
    assert path == sys.executable and "rocm-doctor runs in" in reason
