"""`modinfo MODULE` → its fields; where the file lies says whether it is a DKMS build or the kernel's own. Pure."""

from __future__ import annotations

import re

_FIELD = re.compile(r"^(?P<key>[a-z_][a-z0-9_]*):\s*(?P<value>.*?)\s*$")
MULTI = ("firmware", "parm", "alias", "import_ns")
_KERNEL = re.compile(r"/lib/modules/(?P<kernel>[^/]+)/(?P<where>.*)$")


def _origin(path: str) -> str | None:
    """updates/dkms (Debian, Ubuntu) and extra (Fedora, RHEL, SUSE) hold out-of-tree builds; kernel/ the inbox one."""
    if "/updates/dkms/" in path or "/extra/" in path or "/updates/" in path:
        return "dkms"
    if "/kernel/" in path:
        return "inbox"
    return None


def parse_modinfo(text: str) -> dict | None:
    """Fields (firmware, parm, alias listed), plus `kernel` and `origin` (dkms | inbox) read from the filename;
    an indented continuation line joins the field before it; None when no field was read."""
    fields: dict = {key: [] for key in MULTI}
    last = None
    for line in (text or "").splitlines():
        match = _FIELD.match(line)
        if match is None:
            if last and line.startswith(("\t", " ")) and line.strip() and last not in MULTI:
                fields[last] = (fields[last] + " " + line.strip()).strip()
            continue
        key, value = match["key"], match["value"]
        last = key
        if key in MULTI:
            fields[key].append(value)
        else:
            fields[key] = value
    if not any(fields.get(k) for k in ("filename", "name", "version")):
        return None  # "modinfo: ERROR: Module amdgpu not found." and other noise
    path = fields.get("filename") or ""
    where = _KERNEL.search(path)
    fields["kernel"] = where["kernel"] if where else None
    fields["origin"] = _origin(path) if path else None
    fields["signed"] = bool(fields.get("sig_key") or fields.get("signer"))
    return fields
