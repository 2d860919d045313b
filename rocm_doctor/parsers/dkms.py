"""`dkms status` → one row per module version and kernel, in the dkms 2 ("name, version, kernel, arch: state")
and dkms 3 ("name/version, kernel, arch: state") forms. Pure; never raises."""

from __future__ import annotations

import re

_ROW = re.compile(r"^(?P<head>[^:]+):\s*(?P<state>[A-Za-z][A-Za-z -]*?)\s*(?:\((?P<note>[^)]*)\))?\s*$")


def parse_dkms_status(text: str) -> list[dict]:
    rows = []
    for line in (text or "").splitlines():
        match = _ROW.match(line.strip())
        if not match:
            continue
        parts = [p.strip() for p in match["head"].split(",")]
        if "/" in parts[0]:
            module, _, version = parts[0].partition("/")
            rest = parts[1:]
        elif len(parts) >= 2:
            module, version, rest = parts[0], parts[1], parts[2:]
        else:
            continue
        if not module or not version or " " in module:
            continue
        rows.append({"module": module, "version": version, "kernel": rest[0] if rest else None,
                     "arch": rest[1] if len(rest) > 1 else None, "state": match["state"].lower(),
                     "note": match["note"]})
    return rows
