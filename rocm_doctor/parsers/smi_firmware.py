"""`rocm-smi --showfwinfo` → per GPU index the firmware versions it prints ("MES" → "0x00000083", "SMC" →
"00.84.79.221") and the components it says are not supported there. Pure; never raises."""

from __future__ import annotations

import re

_VERSION = re.compile(r"^GPU\[(?P<index>\d+)\]\s*:\s*(?P<name>.+?) firmware version:\s*(?P<value>\S+)\s*$")
_UNSUPPORTED = re.compile(r"^GPU\[(?P<index>\d+)\]\s*:\s*get_firmware_version_(?P<name>.+?), Not supported")


def parse_showfwinfo(text: str) -> dict[int, dict]:
    """{index: {"versions": {component: value}, "unsupported": [component, ...]}} in the order printed."""
    gpus: dict[int, dict] = {}
    for line in (text or "").splitlines():
        line = line.strip()
        version = _VERSION.match(line)
        unsupported = None if version else _UNSUPPORTED.match(line)
        match = version or unsupported
        if match is None:
            continue
        gpu = gpus.setdefault(int(match["index"]), {"versions": {}, "unsupported": []})
        name = re.sub(r"\s+", " ", match["name"].strip())
        if version:
            gpu["versions"][name] = match["value"]
        else:
            gpu["unsupported"].append(name)
    return gpus
