"""The answer of the rocm-sdk child (rocm_doctor/windows/_sdk_child.py): its last line that is a JSON object.

Anything else the interpreter printed (warnings, site-packages noise) is skipped; no object gives {}.
"""

from __future__ import annotations

import json


def parse_rocm_sdk(text: str) -> dict:
    for line in reversed((text or "").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return {}
