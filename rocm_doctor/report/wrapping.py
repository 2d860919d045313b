"""Wrapping prose for a terminal without ever breaking a word: a path or a URL split over two lines cannot be
copied, so every token is kept whole, the prose wraps around it, and a token longer than the line stands whole on
a line of its own (the terminal shows it past the edge; a copy still gets all of it)."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.text import Text

_TOKEN = re.compile(r"\S+")


def wrap(text: Text, width: int) -> list[Text]:
    """`text` as lines of at most `width` cells, broken only at spaces (and at its own newlines)."""
    lines: list[Text] = []
    for paragraph in text.split("\n", allow_blank=True):
        plain = paragraph.plain
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(plain)]
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
