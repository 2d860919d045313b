"""torch's use of numpy (torch-numpy-unusable). `import torch` warns "Failed to initialize NumPy: ..." on standard
error when numpy is missing or of a binary interface torch was not built for, and goes on: the failure comes later,
at the first tensor.numpy(), torch.from_numpy() or a library (torchvision, a DataLoader's collate) that uses them."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from rocm_doctor.engine.installs import install_into
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import PYTHON_TARGET, TORCH_NUMPY, TORCH_VERSION

# torch releases before 2.3 were built against NumPy 1.x and cannot use NumPy 2 (pytorch/pytorch#107302, albanD,
# read 2026-12-02: "the `.numpy()` and `.from_numpy()` functions will ONLY work if the version of NumPy installed
# is <2.0"); 2.3 is the first built against 2.0 (pytorch/builder#1768, 2024-04-03, "Add numpy 2.0.0rc1 support to
# conda and wheels").
FIRST_FOR_NUMPY2 = Version("2.3")


def _version(text) -> Version | None:
    try:
        return Version(str(text).split("+")[0])
    except InvalidVersion:
        return None


class TorchNumpyUnusable(Check):
    id = "torch-numpy-unusable"
    title = "torch's use of numpy"
    area = "torch"
    severity = Severity.MEDIUM
    requires = (TORCH_NUMPY,)
    docs = ("https://github.com/pytorch/pytorch/issues/107302",
            "https://numpy.org/devdocs/user/troubleshooting-importerror.html")

    def run(self, facts):
        state = facts[TORCH_NUMPY]
        said = str(state.get("torch_warning") or "").split(" (Triggered internally")[0]
        numpy = state.get("version")
        if not said:
            if numpy:
                return self.ok(f"torch imported with numpy {numpy} and did not warn about it")
            return self.ok("numpy is not installed and torch did not ask for it at import")
        python = target_python(facts)
        evidence = [f"import torch warned: {said}"]
        torch_version = facts.get(TORCH_VERSION)
        if "No module named" in said:
            step = install_into(facts.get(PYTHON_TARGET), python, ["numpy"], note="install numpy for torch")
            return self.warn(
                f"numpy is not installed in {python}: torch {torch_version} warns 'Failed to initialize NumPy' at "
                "import, and tensor.numpy(), torch.from_numpy() and the libraries that use them (torchvision, "
                "DataLoader collation of numpy arrays) fail.",
                evidence=evidence, fix=[step])
        older = _version(torch_version)
        if older is not None and older < FIRST_FOR_NUMPY2 and (_version(numpy) or Version("0")) >= Version("2"):
            packages, why = ["numpy<2"], (f"torch {torch_version} was built against NumPy 1.x, before torch 2.3, and "
                                          f"cannot use numpy {numpy}")
        else:
            packages, why = ["numpy"], (f"numpy {numpy or '(version unknown)'} is not the binary interface torch "
                                        f"{torch_version} was built for, or its install is broken")
        step = install_into(facts.get(PYTHON_TARGET), python, packages, extra_args=["--force-reinstall"],
                            note="install a numpy torch can use")
        return self.warn(
            f"torch cannot use numpy: {why}. tensor.numpy(), torch.from_numpy() and the libraries that use them "
            "fail.", evidence=evidence + [f"numpy installed: {numpy or 'unknown'}"], fix=[step])
