"""Installed package lists → rows: `dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}'` and `dpkg -l`
(Debian, Ubuntu); `rpm -qa --qf '%{NAME} %{VERSION}-%{RELEASE}'` and plain `rpm -qa` (RHEL, SUSE). Also the ROCm
release an AMD package version carries (`2.5.0.50701-98~22.04` → 5.7.1; the driver's `6.16.13.30300400` →
30.30.4) and the release a versioned package name ends with (`rocm-core6.2.0`). Pure; never raises."""

from __future__ import annotations

import re

_DPKG_LIST = re.compile(r"^(?P<status>[uirhp][ncHUFWti][ R]?)\s+(?P<name>\S+)\s+(?P<version>\S+)\s+(?P<arch>\S+)(?:\s|$)")
_DPKG_QUERY = re.compile(r"^(?P<name>[a-z0-9][a-z0-9+.:~-]*) (?P<version>\S*) ?(?P<status>[uirhp][ncHUFWti][ R]?)\s*$")
_RPM_QF = re.compile(r"^(?P<name>\S+) (?P<version>\S+-\S+)$")
_RPM_NVRA = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+-[^-]+?)(?:\.(?P<arch>x86_64|noarch|i686|aarch64|ppc64le|s390x))?$")
_RELEASE_FIELD = re.compile(r"\.(\d{5,8})$")
_ROCM_REL = re.compile(r"rocm-rel-(\d+\.\d+(?:\.\d+)?)")
_VERSIONED_NAME = re.compile(r"^(?P<base>.*?[a-z-])(?P<release>\d+\.\d+\.\d+)$")
MAX_ROCM_MAJOR = 19  # ROCm majors so far run 1..10; a "major" of 90 is a build number


def _upstream(version: str) -> str:
    """The upstream part of a package version: no epoch ("1:"), no Debian revision or RPM release."""
    version = version.split(":", 1)[1] if ":" in version.split("-", 1)[0] else version
    return version.split("-", 1)[0]


def amd_release(version: str | None) -> str | None:
    """The ROCm (or AMD GPU Driver) release an AMD-built package encodes in its version's last dotted field:
    5-6 digits MMmmpp (50701 → 5.7.1, 60200 → 6.2.0), 8 digits MMmmppxx for the driver (30300400 → 30.30.4);
    older packages say `rocm-rel-4.0`. None for a distribution's own build (5.0.0-1ubuntu0.1), and for a 5-6 digit field
    that decodes to no ROCm release: amdgpu-pro 20.x packages carry a build number there (`5.6.20.906300` is no
    ROCm 90.63)."""
    if not version:
        return None
    upstream = _upstream(version)
    match = _RELEASE_FIELD.search(upstream)
    if match:
        digits = match.group(1)
        if len(digits) == 8:
            return f"{int(digits[:2])}.{int(digits[2:4])}.{int(digits[4:6])}"
        if len(digits) in (5, 6) and int(digits[:-4]) <= MAX_ROCM_MAJOR:
            return f"{int(digits[:-4])}.{int(digits[-4:-2])}.{int(digits[-2:])}"
    legacy = _ROCM_REL.search(version)
    return legacy.group(1) if legacy else None


def versioned_release(name: str) -> str | None:
    """`rocm-core6.2.0` → 6.2.0 (a multi-version install's package), `rocm-core` → None."""
    match = _VERSIONED_NAME.match(name)
    return match.group("release") if match else None


def _row(name: str, version: str, status: str, arch: str | None = None) -> dict:
    base, _, qualifier = name.partition(":")
    return {"name": base, "version": version or None, "status": status.strip(), "arch": arch or qualifier or None}


def parse_dpkg(text: str) -> list[dict]:
    """Rows of `dpkg-query -W` (name version status) or `dpkg -l` (status name version arch description); the
    header of `dpkg -l` and "no packages found" lines are skipped."""
    rows = []
    for line in (text or "").splitlines():
        listed = _DPKG_LIST.match(line)
        if listed and not line.startswith(("||/", "|/", "+++")):
            version = listed["version"] if listed["version"] != "<none>" else ""
            arch = listed["arch"] if listed["arch"] != "<none>" else None
            rows.append(_row(listed["name"], version, listed["status"], arch))
            continue
        queried = _DPKG_QUERY.match(line.rstrip("\n"))
        if queried:
            rows.append(_row(queried["name"], queried["version"], queried["status"]))
    return rows


def parse_rpm(text: str) -> list[dict]:
    """Rows of `rpm -qa --qf '%{NAME} %{VERSION}-%{RELEASE}\\n'` or plain `rpm -qa` (name-version-release.arch);
    rpm has no half-installed state, so every row is installed ("ii")."""
    rows = []
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith(("warning:", "error:")):
            continue
        match = _RPM_QF.match(line) or _RPM_NVRA.match(line)
        if match:
            rows.append({"name": match["name"], "version": match["version"], "status": "ii",
                         "arch": match.groupdict().get("arch")})
    return rows
