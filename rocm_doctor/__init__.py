"""rocm-doctor: diagnoses and repairs PyTorch GPU setups, AMD ROCm first.

The wheel ships the top-level checks/ and data/ folders as rocm_doctor.checks and rocm_doctor.data (pyproject's
package-dir). Run from a checkout, with nothing installed, those two packages are found beside this one by the
finder below, so `python -m rocm_doctor` works in a fresh clone; an installed copy never uses it.
"""

import importlib.util
import sys
from pathlib import Path

__version__ = "0.1.0"

_HERE = Path(__file__).resolve().parent
_SHIPPED = {f"{__name__}.{name}": _HERE.parent / name for name in ("checks", "data")}


class _CheckoutFinder:
    """Finds rocm_doctor.checks and rocm_doctor.data in the checkout's top-level folders (a meta path finder)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        folder = _SHIPPED.get(name)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


if not (_HERE / "checks").is_dir() and (_HERE.parent / "pyproject.toml").is_file() and all(
        (folder / "__init__.py").is_file() for folder in _SHIPPED.values()):
    sys.meta_path.insert(0, _CheckoutFinder)  # before an installed copy's finders: the tree runs its own
