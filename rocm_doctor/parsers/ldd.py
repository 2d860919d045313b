"""`ldd --version` → the C library and its version (glibc prints it on stdout, musl on stderr). Pure."""

from __future__ import annotations

import re

_GLIBC = re.compile(r"^ldd \((?P<vendor>.*)\)\s+(?P<version>\d+\.\d+(?:\.\d+)?)\s*$")
_MUSL = re.compile(r"^Version\s+(?P<version>\d+\.\d+(?:\.\d+)?)")


def parse_ldd_version(text: str) -> dict | None:
    """{"libc": "glibc"|"musl", "version": "2.35", "vendor": "Ubuntu GLIBC 2.35-0ubuntu3.8"} or None."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return None
    match = _GLIBC.match(lines[0])
    if match:
        return {"libc": "glibc", "version": match["version"], "vendor": match["vendor"]}
    if lines[0].startswith("musl libc"):
        version = next((m["version"] for m in map(_MUSL.match, lines[1:]) if m), None)
        return {"libc": "musl", "version": version, "vendor": None}
    return None
