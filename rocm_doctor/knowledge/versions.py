"""ROCm / HIP version strings reduced to comparable tuples (6.3.42131 → (6, 3, None): a HIP build number is no point release)."""

from __future__ import annotations

import re

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def parse(text) -> tuple | None:
    """`6.4.1` → (6, 4, 1); `6.4.2.1` → (6, 4, 2, 1); `6.3.42131-fa1d09cbd` → (6, 3, None); junk → None."""
    match = _VERSION.match(str(text or ""))
    if not match:
        return None
    major, minor, patch, extra = match.groups()
    if patch is None or int(patch) >= 1000:  # torch.version.hip carries a build number there
        return int(major), int(minor), None
    return (int(major), int(minor), int(patch)) + ((int(extra),) if extra else ())


def at_least(version: tuple, first: str) -> bool:
    """Whether `version` is at or after the point release `first`; unknown point releases count as at least."""
    wanted = parse(first)
    have = tuple(0 if part is None else part for part in version)
    if version[2] is None and wanted[:2] == version[:2]:
        return True
    return have >= tuple(0 if part is None else part for part in wanted)
