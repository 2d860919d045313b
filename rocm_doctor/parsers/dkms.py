"""`dkms status` → one row per module version and kernel, in the dkms 2 ("name, version, kernel, arch: state")
and dkms 3 ("name/version, kernel, arch: state") forms, and a "broken" row for a module tree whose dkms.conf is
gone (dkms prints "Error! Could not locate dkms.conf file." and the path, and stops). Pure; never raises."""

from __future__ import annotations

import re

_NO_CONF = re.compile(r"^File:\s*(?P<path>/\S*/dkms/(?P<module>[^/\s]+)/(?P<version>[^/\s]+)/\S*dkms\.conf)\s+does not exist")
_ROW = re.compile(r"^(?P<head>[^:]+):\s*(?P<state>[A-Za-z][A-Za-z -]*?)\s*(?:\((?P<note>[^)]*)\))?\s*$")


def parse_dkms_status(text: str) -> list[dict]:
    rows = []
    for line in (text or "").splitlines():
        missing = _NO_CONF.match(line.strip())
        if missing:
            rows.append({"module": missing["module"], "version": missing["version"], "kernel": None, "arch": None,
                         "state": "broken", "note": f"{missing['path']} does not exist"})
            continue
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
