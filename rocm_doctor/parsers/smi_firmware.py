"""`rocm-smi --showfwinfo` and `amd-smi firmware` → per GPU index the firmware versions they print (rocm-smi:
"MES" → "0x00000083", "SMC" → "00.84.79.221"; amd-smi: "CP_MEC1" → "166", "PM" → "04.85.103.184") and the
components they say are not supported there. The two tools name the components differently; each keeps its own
names. Pure; never raises."""

from __future__ import annotations

import re

_VERSION = re.compile(r"^GPU\[(?P<index>\d+)\]\s*:\s*(?P<name>.+?) firmware version:\s*(?P<value>\S+)\s*$")
_UNSUPPORTED = re.compile(r"^GPU\[(?P<index>\d+)\]\s*:\s*get_firmware_version_(?P<name>.+?), Not supported")
_AMD_SMI_GPU = re.compile(r"^GPU:\s*(?P<index>\d+)\s*$")
_AMD_SMI_FIELD = re.compile(r"^FW_(?P<field>ID|VERSION):\s*(?P<value>.*?)\s*$")


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


def parse_amd_smi_firmware(text: str) -> dict[int, dict]:
    """`amd-smi firmware` (text): "GPU: N" blocks of "FW_ID: name" / "FW_VERSION: value" pairs, in the same shape as
    parse_showfwinfo (the listing names versions only, so "unsupported" stays empty)."""
    gpus: dict[int, dict] = {}
    gpu = name = None
    for line in (text or "").splitlines():
        line = line.strip()
        header = _AMD_SMI_GPU.match(line)
        if header:
            gpu = gpus.setdefault(int(header["index"]), {"versions": {}, "unsupported": []})
            name = None
            continue
        field = _AMD_SMI_FIELD.match(line)
        if gpu is None or field is None:
            continue
        if field["field"] == "ID":
            name = field["value"]
        elif name:
            gpu["versions"][name] = field["value"]
            name = None
    return gpus
