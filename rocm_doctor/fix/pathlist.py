"""Editing list variables (PATH, LD_LIBRARY_PATH, ...) without collateral damage.

The contract, held by property tests: prepending or removing an entry never drops, reorders or duplicates any
*other* entry, keeps empty entries and `%VAR%` references exactly as they were, and does not add an empty entry
(which would mean "the current folder") when the variable was empty. On Windows entries compare
case-insensitively, ignoring surrounding quotes and a trailing backslash; elsewhere they compare exactly (the same
rule as the shell code written to rc files).
"""

from __future__ import annotations

from typing import Optional


def separator_for(os_name: str) -> str:
    return ";" if os_name == "windows" else ":"


def split(value: Optional[str], sep: str) -> list[str]:
    """Entries of a list variable; "" and None have none (so join(split(v)) == v for every v)."""
    if not value:
        return []
    return value.split(sep)


def join(entries: list[str], sep: str) -> str:
    return sep.join(entries)


def same_entry(a: str, b: str, windows: bool) -> bool:
    return _key(a, windows) == _key(b, windows)


def _key(entry: str, windows: bool) -> str:
    if windows:
        text = entry.strip()
        if len(text) >= 2 and text[0] == text[-1] == '"':
            text = text[1:-1]
        stripped = text.rstrip("\\/")
        return (stripped or text).casefold()
    return entry


def contains(value: Optional[str], entry: str, sep: str, windows: bool) -> bool:
    return any(same_entry(e, entry, windows) for e in split(value, sep))


def prepend(value: Optional[str], entry: str, sep: str, windows: bool) -> str:
    """`entry` first; other entries unchanged and in order; earlier copies of `entry` itself are dropped."""
    rest = [e for e in split(value, sep) if not same_entry(e, entry, windows)]
    return join([entry, *rest], sep)


def remove(value: Optional[str], entry: str, sep: str, windows: bool) -> str:
    """Every copy of `entry` dropped; other entries unchanged and in order."""
    return join([e for e in split(value, sep) if not same_entry(e, entry, windows)], sep)


def is_first(value: Optional[str], entry: str, sep: str, windows: bool) -> bool:
    """True when prepend would change nothing: `entry` leads and appears only once."""
    entries = split(value, sep)
    return bool(entries) and same_entry(entries[0], entry, windows) and not any(
        same_entry(e, entry, windows) for e in entries[1:]
    )
