"""systemd's environment grammars, read the way systemd reads them: an `Environment=` value (space-separated
assignments, double or single quotes anywhere in a word, C-style backslash escapes), an `EnvironmentFile=` file
(one assignment a line, `#`/`;` comments, shell-like quoting, backslash continuation), and the output of
`systemctl show-environment` (values with special characters in `$'…'`). systemd expands no `$VAR` in either:
`PATH=$PATH` sets PATH to the four characters `$PATH`."""

from __future__ import annotations

import re
from typing import Optional

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SPECIFIER = re.compile(r"%[a-zA-Z]")
_WHITESPACE = " \t\n\r"
_C_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"',
              "'": "'", "s": " "}
_SHELL_SPECIAL = '"\\`$'  # what `systemctl show` escapes inside its double quotes, and a double-quoted env file value
_QUOTED = {char: "\\" + letter for letter, char in _C_ESCAPES.items() if letter not in "'s"}  # " and \\ too


def _escape(text: str, i: int, strict: bool) -> tuple[Optional[str], int, Optional[str]]:
    """The character a backslash at `text[i]` stands for, the index after it, and a problem (None when fine)."""
    if i + 1 >= len(text):
        return None, i + 1, "a backslash at the end"
    c = text[i + 1]
    if c in _C_ESCAPES:
        return _C_ESCAPES[c], i + 2, None
    if c == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", text[i + 2:i + 4]):
        return chr(int(text[i + 2:i + 4], 16)), i + 4, None
    if c in "01234567" and re.fullmatch(r"[0-7]{3}", text[i + 1:i + 4]):
        return chr(int(text[i + 1:i + 4], 8)), i + 4, None
    if c == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
        return chr(int(text[i + 2:i + 6], 16)), i + 6, None
    if strict and c not in _SHELL_SPECIAL:
        return c, i + 2, f"an unknown escape \\{c}"
    return c, i + 2, None


def quoted(word: str, specifiers: bool = True) -> str:
    """`word` as one double-quoted word that split_words reads back as `word`: a backslash, a double quote and
    the control characters escaped the C way. In a unit file `%` is doubled (`specifiers`), since systemd replaces
    specifiers when it loads the unit; `systemctl show` prints them already replaced."""
    out = []
    for c in word:
        if c in _QUOTED:
            out.append(_QUOTED[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append("%%" if c == "%" and specifiers else c)
    return '"' + "".join(out) + '"'


def split_words(value: str, strict: bool = True) -> tuple[list[str], Optional[str]]:
    """Words the way systemd's extract_first_word splits them with unquoting and C unescaping: whitespace
    separates, a quote anywhere starts a quoted run. Returns (words, problem); systemd ignores an assignment line
    with unbalanced quotes or an unknown escape (`strict`; `systemctl show`'s own output is read leniently)."""
    words: list[str] = []
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in _WHITESPACE:
            i += 1
        if i >= n:
            return words, None
        word: list[str] = []
        quote = None
        while i < n:
            c = value[i]
            if quote is None and c in _WHITESPACE:
                break
            if c == "\\":
                char, i, problem = _escape(value, i, strict)
                if problem and strict:
                    return words, problem
                word.append(char or "")
                continue
            if quote is None and c in "'\"":
                quote = c
            elif c == quote:
                quote = None
            else:
                word.append(c)
            i += 1
        if quote is not None:
            return words, f"an unclosed {quote} quote"
        words.append("".join(word))


def assignments(value: str, strict: bool = True) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, value) pairs of an `Environment=` value, and notes: an invalid word is dropped as systemd drops it,
    a `$VAR` is kept literally, a `%` specifier is named (systemd substitutes it when it loads the unit)."""
    words, problem = split_words(value, strict)
    notes = [f"systemd ignores the rest of this Environment= line ({problem}): {value[:200]}"] if problem else []
    pairs = []
    for word in words:
        name, sep, val = word.partition("=")
        if not sep or not NAME.match(name):
            notes.append(f"not a variable assignment, ignored by systemd: {word[:120]}")
            continue
        pairs.append((name, val))
        if re.search(r"\$\{?[A-Za-z_]", val):
            notes.append(f"{name}={val[:120]}: systemd does not expand $ references in Environment=; the value is "
                         "taken literally")
        if SPECIFIER.search(val):
            notes.append(f"{name}={val[:120]}: {', '.join(sorted(set(SPECIFIER.findall(val))))} is a systemd "
                         "specifier, replaced when the unit is loaded (systemctl show prints the result)")
    return pairs, notes


def env_file(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Assignments of an EnvironmentFile, in order (a later one wins), and notes on lines systemd drops."""
    pairs: list[tuple[str, str]] = []
    notes: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WHITESPACE)
        i += 1
        if not line or line[0] in "#;":
            continue
        key, sep, rest = line.partition("=")
        key = key.rstrip(_WHITESPACE)
        if not sep:
            continue  # systemd skips a line without '='
        value, i = _env_value(rest, lines, i)
        if key.startswith("export ") and NAME.match(key[7:].strip()):
            notes.append(f"'{key}=…' in an environment file: systemd does not know 'export' and ignores the line")
        elif not NAME.match(key):
            notes.append(f"'{key[:60]}' is not a variable name: systemd ignores the line")
        else:
            pairs.append((key, value))
    return pairs, notes


def _env_value(rest: str, lines: list[str], i: int) -> tuple[str, int]:
    """The value after '=' (quotes may span lines; a trailing backslash continues the line)."""
    out: list[str] = []
    text, pos, trailing = rest, 0, None  # trailing: where unquoted trailing whitespace began
    state = "pre"
    while True:
        if pos >= len(text):
            if state in ("single", "double") and i < len(lines):
                out.append("\n")
                text, pos, i = lines[i], 0, i + 1
                continue
            break
        c = text[pos]
        if state == "pre" and c in " \t":
            pos += 1
        elif state in ("pre", "value") and c == "\\":
            if pos + 1 >= len(text):  # continuation: the newline is eaten
                if i >= len(lines):
                    break
                text, pos, i, state = lines[i], 0, i + 1, "value"
                continue
            out.append(text[pos + 1])
            pos, state, trailing = pos + 2, "value", None
        elif state == "pre" and c in "'\"":
            state, pos = ("single" if c == "'" else "double"), pos + 1
        elif state == "value" or state == "pre":
            if c in " \t":
                trailing = len(out) if trailing is None else trailing
            else:
                trailing = None
            out.append(c)
            pos, state = pos + 1, "value"
        elif state == "single":
            state, pos = ("pre", pos + 1) if c == "'" else (state, pos + 1)
            if c != "'":
                out.append(c)
        else:  # double
            if c == '"':
                state, pos = "pre", pos + 1
            elif c == "\\" and pos + 1 < len(text):
                nxt = text[pos + 1]
                out.append(nxt if nxt in _SHELL_SPECIAL else "\\" + nxt)
                pos += 2
            elif c == "\\":
                if i >= len(lines):
                    break
                text, pos, i = lines[i], 0, i + 1
            else:
                out.append(c)
                pos += 1
    value = "".join(out)
    return (value[:trailing] if state == "value" and trailing is not None else value), i


def show_environment(text: str) -> dict[str, str]:
    """`systemctl show-environment`: NAME=VALUE lines; a value with special characters comes as $'…'."""
    env: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if not sep or not NAME.match(name):
            continue
        if value.startswith("$'") and value.endswith("'") and len(value) >= 3:
            value = _dollar_quoted(value[2:-1])
        env[name] = value
    return env


def _dollar_quoted(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            char, i, _ = _escape(body, i, strict=False)
            out.append(char or "")
        else:
            out.append(body[i])
            i += 1
    return "".join(out)
