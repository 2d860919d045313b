"""A kernel release string (`uname -r`, platform.release()) → its series and distribution suffix. Pure."""

from __future__ import annotations

import re

_RELEASE = re.compile(r"^(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?(?P<rest>.*)$")
_UBUNTU = re.compile(r"^-(?P<abi>\d+)-(?P<flavour>[a-z][a-z0-9-]*)$")


def parse_kernel_release(release: str) -> dict | None:
    """"6.8.0-45-generic" → series "6.8", flavour "generic" (Ubuntu's ABI-flavour form); "5.14.0-427.el9_4.x86_64"
    → series "5.14", no flavour; WSL's "-microsoft-standard-WSL2" is marked."""
    text = (release or "").strip()
    match = _RELEASE.match(text)
    if not match:
        return None
    rest = match["rest"]
    ubuntu = _UBUNTU.match(rest)
    return {
        "release": text,
        "series": f"{match['major']}.{match['minor']}",
        "version": [int(match["major"]), int(match["minor"]), int(match["patch"] or 0)],
        "flavour": ubuntu["flavour"] if ubuntu else None,
        "abi": ubuntu["abi"] if ubuntu else None,
        "wsl": "microsoft" in rest.lower(),
    }
