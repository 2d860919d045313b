"""The torch family as a pasted text names it: collect_env's "Versions of relevant libraries" ([pip3] torch==2.4.1,
[conda] torchvision 0.20.1 py311_cu121 pytorch), `pip list`, `pip freeze`, pip's install output ("Requirement
already satisfied: torch in ... (2.3.1+rocm6.0)", "Successfully installed torch-2.4.1 ..."), pip's resolver
complaint ("torchvision 0.26.0 requires torch==2.11.0, but you have torch 2.12.0... which is incompatible") and
"torch: 2.9.1+rocm7.2" lines. Pure; never raises.

What comes later in the text wins (an install log ends with what was installed), except that a resolver complaint
never overrides a version: it only adds the pin the companion carries."""

from __future__ import annotations

import re

MAX_LINE = 400
_NAME = r"(torch|torchvision|torchaudio|triton|pytorch[-_]triton(?:[-_]rocm)?|torchtext|torchdata)"
_VERSION = r"(\d+(?:\.\d+)*[\w.+!-]*)"
_COLLECT_ENV = re.compile(rf"^\[(?:pip\d?|conda)\]\s+{_NAME}(?:==|\s+){_VERSION}", re.IGNORECASE)
_FREEZE = re.compile(rf"^{_NAME}==\s*{_VERSION}\s*$", re.IGNORECASE)
_PIP_LIST = re.compile(rf"^{_NAME}\s+{_VERSION}(?:\s+\S+)?\s*$", re.IGNORECASE)
_SATISFIED = re.compile(rf"^Requirement already satisfied: {_NAME}(?:\[[^\]]*\])? in .+ \({_VERSION}\)\s*$",
                        re.IGNORECASE)
_INSTALLED = re.compile(r"^Successfully installed (.+)$")
_INSTALLED_ITEM = re.compile(rf"^{_NAME}-{_VERSION}$", re.IGNORECASE)
_COLON = re.compile(rf"^(?:py)?{_NAME}(?: version)?:\s+{_VERSION}\s*$", re.IGNORECASE)
_CONFLICT = re.compile(rf"^{_NAME} {_VERSION} (?:requires|has requirement) ({_NAME}\S*?)(?:;[^,]*)?,\s*but "
                       rf"(?:you have|you'll have) {_NAME} {_VERSION} which is incompatible", re.IGNORECASE)


def _name(raw: str) -> str:
    return re.sub(r"[-_.]+", "-", raw).lower()


def _lines(text: str) -> list[str]:
    """Stripped lines, with pip's wrapped resolver complaint ("... requires torch==2.11.0,\\n  but you have ...")
    joined into one."""
    out: list[str] = []
    for raw in (text or "").splitlines():
        line = raw.strip()[:MAX_LINE]
        if out and line.startswith("but ") and out[-1].endswith(","):
            out[-1] = f"{out[-1]} {line}"
        elif line:
            out.append(line)
    return out


def parse_packages(text: str | None) -> dict[str, dict]:
    """{name: {"version", "line", "requires": [pins read from a resolver complaint]}} for the family members the
    text names."""
    found: dict[str, dict] = {}

    def seen(name: str, version: str, line: str) -> None:
        entry = found.setdefault(_name(name), {"requires": []})
        entry.update(version=version, line=line)

    for line in _lines(text):
        conflict = _CONFLICT.match(line)
        if conflict:
            owner, owner_version, pin, _pinned, other, other_version = conflict.groups()
            entry = found.setdefault(_name(owner), {"requires": []})
            entry.setdefault("version", owner_version)
            entry.setdefault("line", line)
            entry["requires"].append(pin)
            found.setdefault(_name(other), {"requires": [], "version": other_version, "line": line})
            continue
        installed = _INSTALLED.match(line)
        if installed:
            for item in installed.group(1).split():
                match = _INSTALLED_ITEM.match(item)
                if match:
                    seen(match.group(1), match.group(2), line)
            continue
        for pattern in (_COLLECT_ENV, _SATISFIED, _FREEZE, _PIP_LIST, _COLON):
            match = pattern.match(line)
            if match:
                seen(match.group(1), match.group(2), line)
                break
    return {name: entry for name, entry in found.items() if entry.get("version")}
