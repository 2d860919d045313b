"""Wrapping prose for a terminal without ever breaking a word: a path or a URL split over two lines cannot be
copied, so every token is kept whole, the prose wraps around it, and a token longer than the line stands whole on
a line of its own (the terminal shows it past the edge; a copy still gets all of it)."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.text import Text

_TOKEN = re.compile(r"\S+")
_DRIVE = re.compile(r"\b[A-Za-z]:\\")


def wrap(text: Text, width: int) -> list[Text]:
    """`text` as lines of at most `width` cells, broken only at spaces (and at its own newlines)."""
    lines: list[Text] = []
    for paragraph in text.split("\n", allow_blank=True):
        plain = paragraph.plain
        tokens = _whole_paths(plain, [(m.start(), m.end()) for m in _TOKEN.finditer(plain)])
        if not tokens:
            lines.append(Text())
            continue
        start, end = 0, tokens[0][1]  # the first line keeps the paragraph's own leading spaces
        for token_start, token_end in tokens[1:]:
            if cell_len(plain[start:token_end]) <= width:
                end = token_end
                continue
            lines.append(paragraph[start:end])
            start, end = token_start, token_end
        lines.append(paragraph[start:end])
    return lines


def _whole_paths(plain: str, tokens: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Tokens with a Windows path that has spaces in it ("C:\\Program Files\\AMD\\ROCm\\6.2\\") made one: after a
    token holding a drive path, the words up to the last of the next three that holds a backslash join it, until
    a word ends the path (a comma, semicolon or closing parenthesis after it) or starts another one."""
    out: list[tuple[int, int]] = []
    n = 0
    while n < len(tokens):
        start = tokens[n][0]
        if _DRIVE.search(plain[slice(*tokens[n])]):
            while ahead := _path_goes_on(plain, tokens, n):
                n = ahead
        out.append((start, tokens[n][1]))
        n += 1
    return out


def _path_goes_on(plain: str, tokens: list[tuple[int, int]], n: int) -> int:
    """The last of the next three tokens that continues the path ending at token `n`; 0 when none does."""
    last = 0
    for i in range(n, min(n + 3, len(tokens) - 1)):
        word, following = plain[slice(*tokens[i])], plain[slice(*tokens[i + 1])]
        if word.endswith((",", ";", ")")) or _DRIVE.search(following):
            break
        if "\\" in following:
            last = i + 1
    return last


# -- plain-text views (a fix plan): lines that say how a terminal may wrap them ---------------------------------
_KEEP = "\ue000"  # stands for a space inside a value kept whole while the line is wrapped


class Hanging(str):
    """A line of prose that a terminal wraps under the text after its label (`lead`), never inside the values
    named in `whole` (a quoted value, a path with spaces, a line of code)."""

    lead: str
    whole: tuple[str, ...]

    def __new__(cls, lead: str, body: str = "", whole: tuple = ()) -> "Hanging":
        line = super().__new__(cls, lead + body)
        line.lead, line.whole = lead, tuple(str(w) for w in whole if w and " " in str(w))
        return line


class Verbatim(str):
    """A line shown exactly as it is at any width: a command the user copies, a line of a file."""


def quoted_parts(text: str) -> list[str]:
    """`text` split at its backticks (Markdown in the checks' texts): plain, quoted, plain, ...; a text with an
    odd number of them is one plain part."""
    return text.split("`") if text.count("`") % 2 == 0 else [text]


def unquote(text: str) -> str:
    """`text` without the Markdown backticks around its names, for plain terminal text."""
    return "".join(quoted_parts(text))


def fold(line: str, width: int) -> list[str]:
    """A line of a plain-text view as a terminal `width` columns wide shows it: a Verbatim line whole; prose
    wrapped at spaces under its label (a plain line: under its own indentation), a long token whole on its own."""
    if isinstance(line, Verbatim) or cell_len(line) <= width:
        return [line]
    spaces = len(line) - len(line.lstrip(" "))
    lead = line.lead if isinstance(line, Hanging) else line[:spaces]
    indent = " " * cell_len(lead)
    if cell_len(lead) > width // 2:  # a label too long to hang under: the text goes on under the line's indentation
        lead, indent = line[:spaces], " " * (spaces + 4)
    body = line[len(lead):]
    for value in getattr(line, "whole", ()):
        body = body.replace(value, value.replace(" ", _KEEP))
    parts = wrap(Text(body), max(20, width - len(indent)))
    return [(lead if n == 0 else indent) + part.plain.replace(_KEEP, " ") for n, part in enumerate(parts)]
