"""`/etc/os-release` → the distribution, its version and point release. Pure; never raises."""

from __future__ import annotations

import re

_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_POINT = re.compile(r"\d+(?:\.\d+)+")


def _unquote(raw: str) -> str:
    """Shell-style value: "double" (backslash escapes), 'single', or bare."""
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return re.sub(r"\\(.)", r"\1", raw[1:-1])
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    return raw


def parse_os_release(text: str) -> dict[str, str]:
    """Every KEY=value assignment; comments, blank lines and junk are skipped."""
    values = {}
    for line in (text or "").splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if match:
            values[match[1]] = _unquote(match[2])
    return values


def _sles_service_pack(version_id: str) -> str | None:
    """SLES VERSION_ID "15.6" → "15 SP6" (the way AMD's tables name it); "15" → "15"."""
    major, _, minor = version_id.partition(".")
    if not major.isdigit():
        return None
    return f"{major} SP{minor}" if minor.isdigit() and minor != "0" else major


def describe(values: dict[str, str]) -> dict:
    """The fields a support table is matched on: id, id_like, version_id, the point release (Ubuntu's
    "24.04.3" from VERSION, SLES's "15 SP6"), the names and codenames."""
    distro = (values.get("ID") or "").lower() or None
    version_id = values.get("VERSION_ID") or None
    point = None
    if distro in ("sles", "sled") and version_id:
        point = _sles_service_pack(version_id)
    elif values.get("VERSION"):
        match = _POINT.search(values["VERSION"])
        point = match[0] if match else None
    return {
        "id": distro,
        "id_like": (values.get("ID_LIKE") or "").lower().split(),
        "version_id": version_id,
        "point_release": point or version_id,
        "name": values.get("NAME") or None,
        "pretty_name": values.get("PRETTY_NAME") or None,
        "codename": values.get("VERSION_CODENAME") or None,
        "ubuntu_codename": values.get("UBUNTU_CODENAME") or None,
        "build_id": values.get("BUILD_ID") or None,
    }
