"""apt (.list, deb822 .sources) and yum/zypper (.repo) files → the repo.radeon.com repositories they configure,
with the ROCm or driver release each names and whether it is enabled. Pure; never raises."""

from __future__ import annotations

import re

_URL = re.compile(r"(?:https?://)?repo\.radeon\.com/(?P<path>\S*)")
_KINDS = (("rocm", re.compile(r"^rocm/(?:apt/|(?:rhel|el|sle|zyp|centos)[^/]*/)(?P<version>[^/\s]+)")),
          ("amdgpu", re.compile(r"^amdgpu/(?P<version>[^/\s]+)")),
          ("graphics", re.compile(r"^graphics/(?P<version>[^/\s]+)")))
_RELEASE = re.compile(r"^\d+\.\d+(?:\.\d+)*$")


def _describe(url_path: str) -> tuple[str | None, str | None]:
    for kind, pattern in _KINDS:
        match = pattern.match(url_path)
        if match:
            return kind, match["version"]
    return None, None


def _entry(line_no: int, path: str, enabled: bool, suite: str | None = None) -> dict | None:
    kind, version = _describe(path)
    if kind is None:
        return None
    return {"line_no": line_no, "kind": kind, "version": version, "enabled": enabled,
            "release": version if version and _RELEASE.match(version) else None,
            "placeholder": bool(version and "@" in version), "url": "repo.radeon.com/" + path.rstrip("/"),
            "suite": suite}


def parse_repo_file(text: str) -> list[dict]:
    """One entry per repo.radeon.com repository line: `deb URL suite` (a leading # disables it), deb822 `URIs:`
    (with `Enabled: no`), and .repo `baseurl=` (with `enabled=0`)."""
    out, block_enabled, pending = [], True, []
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("["):  # a blank line or a .repo section ends a stanza
            out += [dict(e, enabled=e["enabled"] and block_enabled) for e in pending]
            pending, block_enabled = [], True
            continue
        lower = line.lower()
        if lower.startswith(("enabled=", "enabled:")):
            block_enabled = lower.split("=" if "=" in lower else ":", 1)[1].strip() not in ("0", "no", "false")
            continue
        commented = line.startswith("#")
        body = line.lstrip("#").strip()
        match = _URL.search(body)
        if not match:
            continue
        if body.startswith(("deb ", "deb-src ")):
            words = re.sub(r"\[[^\]]*\]", " ", body).split()
            suite = words[2] if len(words) > 2 else None
            entry = _entry(number, match["path"], not commented, suite)
            out += [entry] if entry else []
        elif re.match(r"^(baseurl\s*=|uris:)", body, re.IGNORECASE):
            entry = _entry(number, match["path"], not commented)
            pending += [entry] if entry else []
    return out + [dict(e, enabled=e["enabled"] and block_enabled) for e in pending]
