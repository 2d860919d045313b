"""rocm-doctor's drop-in of a systemd unit (`<unit>.d/rocm-doctor.conf`): one line per variable under [Service],
edited in place.

The line fix owns for a variable is an `Environment=` that sets that variable alone or an `UnsetEnvironment=` that
names it alone; setting the variable again replaces that line, and every other line (a user's own, comments, line
endings) stays byte for byte. systemd reads the file on `systemctl daemon-reload`; fix reloads and restarts nothing.
"""

from __future__ import annotations

import re
from typing import Optional

from rocm_doctor.parsers.systemd_env import split_words

HEADER = "# Written by `rocm-doctor fix`; `rocm-doctor fix --undo` reverts it."
SECTION = "[Service]"


def _lines(text: str) -> list[str]:
    """Lines with their endings; only a line feed ends a line, as in systemd's unit file reader."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


def owns(line: str, name: str) -> bool:
    """Whether `line` is the drop-in's setting of `name` alone (set or removed)."""
    key, sep, value = line.strip().partition("=")
    if not sep or key.strip() not in ("Environment", "UnsetEnvironment"):
        return False
    words, problem = split_words(value.strip())
    if problem or len(words) != 1:
        return False
    return words[0].partition("=")[0] == name if key.strip() == "Environment" else words[0] == name


def _service_lines(lines: list[str]) -> tuple[list[int], Optional[int]]:
    """Indexes of the [Service] lines, and of the last one that is not blank (where a new line goes)."""
    inside, found, last = False, [], None
    for index, line in enumerate(lines):
        bare = line.strip()
        if bare.startswith("[") and bare.endswith("]"):
            inside = bare == SECTION
            last = index if inside else last
            continue
        if inside:
            found.append(index)
            last = index if bare else last
    return found, last


def current(text: str, name: str) -> Optional[str]:
    """The drop-in's line for `name` (without its line ending), None when it has none."""
    lines = _lines(text)
    return next((lines[i].rstrip("\r\n") for i in _service_lines(lines)[0] if owns(lines[i], name)), None)


def with_line(text: str, name: str, line: str) -> str:
    """`text` (the drop-in, empty when it does not exist) with `line` as the setting of `name`: in place of the
    line it had, else after the last line of [Service], else in a new [Service] section."""
    if not text:
        return f"{HEADER}\n{SECTION}\n{line}\n"
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = _lines(text)
    service, last = _service_lines(lines)
    owned = [i for i in service if owns(lines[i], name)]
    if owned:
        first = lines[owned[0]]
        lines[owned[0]] = line + first[len(first.rstrip("\r\n")):]
        return "".join(lines[i] for i in range(len(lines)) if i not in owned[1:])
    if last is None:
        joint = "" if text.endswith("\n") else nl
        return text + joint + SECTION + nl + line + nl
    if not lines[last].endswith("\n"):
        lines[last] += nl
    # A last line continued with a backslash would swallow the next one: an empty line ends it first.
    ended = nl if lines[last].rstrip("\r\n").endswith("\\") else ""
    lines.insert(last + 1, ended + line + nl)
    return "".join(lines)
