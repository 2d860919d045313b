"""torch's own "Failed to initialize NumPy" warning, as `import torch` gives it in the diagnosed interpreter: the
torch probe records it instead of leaving it on standard error, and torch-numpy-unusable says what it means with
the install command. Runs the real torch (the CPU build the tests install) in a child."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from rocm_doctor.testing import Case, run_case

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch installed")

# A numpy torch cannot load its C interface from: what a numpy of another binary interface looks like to torch
# (torch 2.13 says "module 'numpy._core._multiarray_umath' has no attribute '_ARRAY_API'").
OTHER_ABI = '''__version__ = "2.0.0"
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return type(name, (), {})
'''


def _target(tmp_path, fake_bin, shadow_numpy: str | None):
    site = tmp_path / "shadow"
    (site / "numpy" / "_core").mkdir(parents=True)
    (site / "numpy" / "core").mkdir()
    if shadow_numpy is None:  # numpy not importable at all
        (site / "numpy" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'numpy'\")\n")
    else:
        (site / "numpy" / "__init__.py").write_text(shadow_numpy)
        for part in ("_core", "core"):
            (site / "numpy" / part / "__init__.py").write_text("")
            (site / "numpy" / part / "_multiarray_umath.py").write_text("")
    return fake_bin.add("python3", f"PYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n")


@pytest.mark.parametrize("shadow, says, command", [
    (None, "numpy is not installed in", "-m pip install numpy"),
    (OTHER_ABI, "torch cannot use numpy: numpy 2.0.0 is not the binary interface", "--force-reinstall numpy"),
])
def test_torch_warning_about_numpy_becomes_a_finding_with_the_install(doctor, tmp_path, fake_bin, shadow, says,
                                                                       command):
    python = _target(tmp_path, fake_bin, shadow)
    result = doctor("check", "--python", str(python), "--no-gpu", "--no-history", "--json")
    report = json.loads(result.stdout)
    finding = next(f for f in report["findings"] if f["check"] == "torch-numpy-unusable")
    assert finding["status"] == "warn" and says in finding["message"], finding
    assert finding["evidence"][0].startswith("import torch warned: Failed to initialize NumPy: ")
    probe = next(f for f in report["findings"] if f["check"] == "torch-probe-crashed")
    assert probe["status"] == "ok"
    numpy = next(v for v in report["versions"] if v["name"] == "numpy")
    assert "torch cannot use it: Failed to initialize NumPy" in numpy["value"]
    shown = doctor("check", "--python", str(python), "--no-gpu", "--no-history")
    assert any(line.strip().startswith(str(python)) and line.strip().endswith(command) for line in
               shown.stdout.splitlines()), shown.stdout
    assert "Triggered internally" not in shown.stdout  # what torch said, not a raw dump of its stderr


def test_torch_numpy_passes_when_torch_did_not_warn():
    run_case(Case(name="numpy-loaded", check="torch-numpy-unusable",
                  facts={"torch.numpy": {"version": "2.1.3", "loaded": True, "torch_warning": None}},
                  expect={"torch-numpy-unusable": "ok"}, text="numpy 2.1.3"))
