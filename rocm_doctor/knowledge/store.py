"""Loads a data/ JSON file by name: the user's installed data bundle first when it is valid (`rocm-doctor data
update`), else the embedded copy through importlib.resources; cached, read-only."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any


@functools.lru_cache(maxsize=None)
def load(name: str) -> Any:
    from rocm_doctor.knowledge.update import installed_text

    text = installed_text(name)
    if text is not None:
        try:
            return json.loads(text)
        except ValueError:
            pass  # a damaged copy never hides the embedded one
    return json.loads(resources.files("rocm_doctor.data").joinpath(name).read_text(encoding="utf-8"))
