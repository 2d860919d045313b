"""rocm-doctor's build backend: setuptools, run on a copy of the checkout in a temporary folder for a wheel or an
sdist, so that `pip install .` leaves no build/ or *.egg-info behind in the checkout (setuptools writes both where
it runs). An editable install builds in place, as it must: what it installs points into this tree."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager

from setuptools import build_meta as _setuptools
from setuptools.build_meta import build_editable, get_requires_for_build_editable, prepare_metadata_for_build_editable

__all__ = ["build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable",
           "get_requires_for_build_sdist", "get_requires_for_build_wheel", "prepare_metadata_for_build_editable",
           "prepare_metadata_for_build_wheel"]

# Not part of what is built, and not worth copying: version control, environments, earlier build output, tests.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                    "tests")


@contextmanager
def _in_a_copy():
    """Run in a copy of the current folder (the checkout pip builds), removed afterwards."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="rocm-doctor-build-") as folder:
        tree = os.path.join(folder, "src")
        shutil.copytree(here, tree, ignore=NOT_COPIED)
        os.chdir(tree)
        try:
            yield
        finally:
            os.chdir(here)


def _absolute(path):
    return None if path is None else os.path.abspath(path)


def get_requires_for_build_wheel(config_settings=None):
    with _in_a_copy():
        return _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    with _in_a_copy():
        return _setuptools.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    metadata_directory = _absolute(metadata_directory)
    with _in_a_copy():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_directory, metadata_directory = _absolute(wheel_directory), _absolute(metadata_directory)
    with _in_a_copy():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    sdist_directory = _absolute(sdist_directory)
    with _in_a_copy():
        return _setuptools.build_sdist(sdist_directory, config_settings)
