"""PowerShell `Get-CimInstance Win32_VideoController | ConvertTo-Json` → adapters with PCI ids. Pure; never raises."""

from __future__ import annotations

import json
import re

_PNP = re.compile(r"VEN_(?P<vendor>[0-9A-Fa-f]{4})&DEV_(?P<device>[0-9A-Fa-f]{4})")


def parse_video_controllers(text: str) -> list[dict]:
    try:
        value = json.loads(text or "null")
    except json.JSONDecodeError:
        return []
    items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    adapters = []
    for item in items:
        if not isinstance(item, dict):
            continue
        pnp = str(item.get("PNPDeviceID") or "")
        match = _PNP.search(pnp)
        adapters.append(
            {
                "name": item.get("Name"),
                "vendor_id": "0x" + match["vendor"].lower() if match else None,
                "device_id": "0x" + match["device"].lower() if match else None,
                "driver_version": item.get("DriverVersion"),
                "adapter_ram": item.get("AdapterRAM"),
                "status": item.get("Status"),
                "pnp_device_id": pnp or None,
            }
        )
    return adapters
