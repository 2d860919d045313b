"""`systemctl show` properties and `systemctl cat` unit text: the settings that make a service's environment
(Environment=, EnvironmentFile=, UnsetEnvironment=), the command it runs (ExecStart=) and the files they came from.

`systemctl show` prints one NAME=VALUE a line; a list property such as EnvironmentFiles or ExecStart can repeat.
Older systemd names the files property EnvironmentFile and may keep the '-' of an optional file; newer ones print
`PATH (ignore_errors=yes)`. `systemctl cat` prints each file of the unit under a `# /path` line."""

from __future__ import annotations

import re
from typing import Optional

from rocm_doctor.parsers.systemd_env import assignments, split_words

_HEADER = re.compile(r"^# (/\S+)\s*$")
_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")
_FILE_ENTRY = re.compile(r'(-?)("[^"]*"|\S+)\s+\(ignore_errors=(yes|no)\)')
_EXEC = re.compile(r"\{\s*path=(.*?)\s*;\s*argv\[\]=(.*?)\s*;\s*(?:ignore_errors|flags)=")
_EXEC_PREFIX = "@-:+!|"


def show_properties(text: str) -> dict[str, list[str]]:
    """NAME -> its values in order (most properties have one)."""
    props: dict[str, list[str]] = {}
    for line in (text or "").splitlines():
        name, sep, value = line.partition("=")
        if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
            props.setdefault(name, []).append(value)
    return props


def first(props: dict[str, list[str]], name: str) -> str:
    values = props.get(name) or [""]
    return values[0].strip()


def environment_files(values: list[str]) -> list[dict]:
    """[{path, optional}] from EnvironmentFiles= values (`PATH (ignore_errors=yes)`, several may share a line) or
    unit-file EnvironmentFile= values (`-PATH`: optional)."""
    out = []
    for value in values:
        found = _FILE_ENTRY.findall(value)
        if found:
            out += [{"path": path.strip('"'), "optional": dash == "-" or flag == "yes"} for dash, path, flag in found]
        elif value.strip():
            path = value.strip()
            out.append({"path": path.lstrip("-"), "optional": path.startswith("-")})
    return out


def exec_start(value: str) -> Optional[dict]:
    """{path, argv} of one ExecStart: `systemctl show`'s `{ path=… ; argv[]=… ; … }`, or a unit file's command
    line (its prefixes such as '-' or '@' removed). None when there is no command."""
    match = _EXEC.search(value or "")
    if match:
        argv, _ = split_words(match.group(2), strict=False)
        return {"path": match.group(1), "argv": argv}
    words, _ = split_words((value or "").strip(), strict=False)
    if not words:
        return None
    path = words[0].lstrip(_EXEC_PREFIX)
    return {"path": path, "argv": [path, *words[1:]]}


def cat_files(text: str) -> list[dict]:
    """`systemctl cat`: [{file, directives: [{section, key, value, line}]}], a backslash at a line's end joining
    the next line with a space (comment lines inside are skipped, as systemd does)."""
    files: list[dict] = []
    current: Optional[dict] = None
    section = ""
    pending: Optional[dict] = None
    for number, raw in enumerate((text or "").splitlines(), 1):
        header = _HEADER.match(raw)
        if header and pending is None:
            current, section = {"file": header.group(1), "directives": []}, ""
            files.append(current)
            continue
        line = raw.strip()
        if pending is not None:
            if line.startswith(("#", ";")):
                continue
            pending["value"] += " " + line.rstrip("\\").strip()
            pending = pending if line.endswith("\\") else None
            continue
        if current is None or not line or line.startswith(("#", ";")):
            continue
        if _SECTION.match(line):
            section = _SECTION.match(line).group(1)
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        directive = {"section": section, "key": key.strip(), "value": value.strip().rstrip("\\").strip(),
                     "line": number}
        current["directives"].append(directive)
        pending = directive if line.endswith("\\") else None
    return files


def environment_origins(files: list[dict]) -> tuple[dict[str, str], list[str]]:
    """Which file's Environment= sets each variable last (an empty `Environment=` resets the list, as in systemd),
    and the notes its values raise (literal $ references, specifiers, quoting systemd refuses)."""
    origins: dict[str, str] = {}
    notes: list[str] = []
    for unit_file in files:
        for directive in unit_file["directives"]:
            if directive["section"] != "Service" or directive["key"] != "Environment":
                continue
            if not directive["value"]:
                origins.clear()
                continue
            pairs, found = assignments(directive["value"])
            notes += [f"{unit_file['file']}:{directive['line']}: {note}" for note in found]
            for name, _ in pairs:
                origins[name] = unit_file["file"]
    return origins, notes
