"""`ls -l` / `ls -ld` lines → entries with their type and, for a symbolic link, its target; `ls` errors on stderr →
the paths that do not exist. Tolerates any date format and pastes without the permission columns. Pure."""

from __future__ import annotations

import re

_MODE = re.compile(r"^(?P<type>[-dlcbps])[rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+(?:\d+,\s*)?\d+\s+(?P<rest>.+)$")
_MISSING = re.compile(r"^ls: cannot access '?(?P<path>[^':]+)'?: No such file or directory")
_TYPES = {"-": "file", "d": "dir", "l": "link", "c": "device", "b": "device", "p": "fifo", "s": "socket"}
_DATE = re.compile(r"^(?:\w{3}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})|\d{4}-\d{2}-\d{2}(?:\s+\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                   r"(?:\s+[+-]\d{4})?)?|\d{1,2}\s+\w{3}\s+(?:\d{1,2}:\d{2}|\d{4}))\s+")


def _name_and_target(rest: str) -> tuple[str, str | None]:
    name, arrow, target = rest.partition(" -> ")
    return name.strip(), (target.strip() if arrow else None)


def parse_ls_long(text: str) -> list[dict]:
    """One entry per listed name: {name, type (file, dir, link, ... or None when the paste has no mode column),
    target}. The "total N" line is skipped."""
    entries = []
    for line in (text or "").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("total ") or stripped.endswith(":"):
            continue
        match = _MODE.match(stripped)
        if match:
            rest = _DATE.sub("", match["rest"], count=1)
            name, target = _name_and_target(rest)
            entries.append({"name": name, "type": _TYPES.get(match["type"]), "target": target})
        elif not stripped.startswith("ls: "):
            name, target = _name_and_target(stripped)
            entries.append({"name": name, "type": "link" if target else None, "target": target})
    return entries


def missing_paths(stderr: str) -> list[str]:
    """Paths `ls` said do not exist."""
    return [m["path"] for line in (stderr or "").splitlines() if (m := _MISSING.match(line.strip()))]
