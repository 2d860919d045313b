"""`lspci -nn [-D]` → display-class devices with vendor and device ids. Pure; never raises."""

from __future__ import annotations

import re

_LINE = re.compile(
    r"^(?P<slot>[0-9a-fA-F:.]+)\s+(?P<class_name>[^\[]*?)\s*\[(?P<class>03[0-9a-fA-F]{2})\]:\s*"
    r"(?P<name>.*?)\s*\[(?P<vendor>[0-9a-fA-F]{4}):(?P<device>[0-9a-fA-F]{4})\]"
)


def parse_lspci(text: str) -> list[dict]:
    devices = []
    for line in (text or "").splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        devices.append(
            {
                "slot": match["slot"],
                "class": "0x" + match["class"].lower(),
                "name": match["name"].strip(),
                "vendor_id": "0x" + match["vendor"].lower(),
                "device_id": "0x" + match["device"].lower(),
            }
        )
    return devices
