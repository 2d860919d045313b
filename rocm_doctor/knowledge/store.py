"""Loads a data/ JSON file by name through importlib.resources; cached, read-only."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any


@functools.lru_cache(maxsize=None)
def load(name: str) -> Any:
    return json.loads(resources.files("rocm_doctor.data").joinpath(name).read_text(encoding="utf-8"))
