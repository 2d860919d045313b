"""Known error messages (data/error_signatures.json) → what they mean and the check that diagnoses them."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from rocm_doctor.knowledge.store import load


class SignatureMatch(NamedTuple):
    id: str
    meaning: str
    check: str
    line: str


@functools.lru_cache(maxsize=None)
def _compiled() -> tuple:
    return tuple((row, re.compile(row["pattern"]), re.compile(row["requires"]) if row.get("requires") else None)
                 for row in load("error_signatures.json")["signatures"])


def match(text: str) -> list[SignatureMatch]:
    """Every signature found in `text` (first matching line each), in table order. A row with "at_end" matches
    only the last non-blank line: a log that stops right there (a hang) is the signal, not the line itself."""
    lines = (text or "").splitlines()
    last = [line for line in lines if line.strip()][-1:]
    found = []
    for row, pattern, requires in _compiled():
        if requires is not None and not requires.search(text or ""):
            continue
        line = next((line for line in (last if row.get("at_end") else lines) if pattern.search(line)), None)
        if line is not None:
            found.append(SignatureMatch(row["id"], row["meaning"], row["check"], line.strip()))
    return found


def signature(signature_id: str) -> dict | None:
    """The full row (pattern, example, source key, harmless flag, related checks)."""
    return next((row for row in load("error_signatures.json")["signatures"] if row["id"] == signature_id), None)
