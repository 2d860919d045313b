"""What a user pasted into a ticket → plain log lines, the way the tool printed them. Pastes arrive mangled: saved by
PowerShell as UTF-16, half UTF-8 and half cp1252, with CRLF line ends, ANSI colours, Markdown quote markers and code
fences, every line behind a journalctl or docker prefix, two records run together on one line, one record wrapped
over two, or the first characters of each line lost when copied from a terminal. Pure; never raises."""

from __future__ import annotations

import re
from typing import Iterable

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+-]*\s*$|^\s*</?(?:details|summary|pre|code)\b[^>]*>.*?$", re.IGNORECASE)
# journalctl / syslog: "Jun 20 00:11:55 host ollama[377]: ", in any locale's month ("июл 26 11:15:53 TUF ollama[2169]:")
_JOURNAL = re.compile(r"^\w{3,5}\.?\s+\d{1,2}\s+\d\d:\d\d:\d\d\s+[\w.-]+\s+(?P<program>[\w.@/-]+?)(?:\[\d+\])?:\s")
_ISO_STAMP = re.compile(r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?(?:\s+-(?:\s+|$)|\s+)")
_PROCESS = re.compile(r"^\((?P<program>\w+)(?:_\w+)? pid=\d+\)\s+")  # vLLM's "(APIServer pid=1) "
_COMPOSE = re.compile(r"^(?P<program>[\w.-]+(?:-\d+)?)\s+\|\s")  # docker compose logs: "ollama-1  | "
_DMESG = re.compile(r"^\[\s*\d+\.\d+\]\s")
# a record starting inside a line: two lines run together when the newline was lost
_RUN_TOGETHER = re.compile(r"(?<=\S)(?=time=\d{4}-\d\d-\d\dT|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+ -(?: |$)|\[\s*\d+\.\d{6}\]\s|\w{3} \d\d \d\d:\d\d:\d\d \S+ \w+\[\d+\]:)")
_ENDS_RECORD = re.compile(r"[.:;!?)\]}\"'>|]\s*$")
_CONTINUES = re.compile(r"^[a-z0-9_/\\.,)\]-]")
_STARTS_RECORD = re.compile(r"^\w+(?:Error|Exception|Warning)\b|^\w+:\s")
_WORD = re.compile(r"^[A-Za-z_][\w]*")
WRAP_MIN = 60  # a line shorter than this was not wrapped by a terminal or a ticket form


def decode(raw: bytes) -> str:
    """UTF-16 (PowerShell's `>`) by its BOM or its NULs; else UTF-8, line by line falling back to cp1252."""
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(raw) > 16 and raw[1:200:2].count(0) > len(raw[1:200:2]) * 0.8):
        return raw.decode("utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-16-le", errors="replace")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        lines = []
        for line in raw.split(b"\n"):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                lines.append(line.decode("cp1252", errors="replace"))
        return "\n".join(lines)


def strip_prefix(line: str) -> tuple[str, str | None]:
    """The line without its journalctl, docker compose, ISO timestamp or dmesg prefix, and the program the prefix
    names (journalctl's identifier, compose's service), if any."""
    program = None
    for pattern in (_COMPOSE, _JOURNAL, _ISO_STAMP, _PROCESS):
        match = pattern.match(line)
        if match:
            program = match.groupdict().get("program") or program
            line = line[match.end():]
    return line, program


def _restore(line: str, words: frozenset) -> str:
    """A first word missing up to three leading characters ("ipErrorNoBinaryForGpu") completed from `words`."""
    match = _WORD.match(line)
    if not match or len(match.group()) < 5 or match.group() in words:
        return line
    token = match.group()
    whole = [w for w in words if w.endswith(token) and 0 < len(w) - len(token) <= 3]
    return whole[0] + line[len(token):] if len(whole) == 1 else line


def clean(text: str, words: Iterable[str] = ()) -> dict:
    """{text, programs}: the paste as the tool printed it (one record a line), and the programs its line prefixes
    name. `words`: known first words of messages, to restore the leading characters a copy lost."""
    known = frozenset(words)
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    out: list[str] = []
    programs: list[str] = []
    for raw in text.split("\n"):
        raw = _CONTROL.sub("", raw).replace("\ufeff", "").rstrip()
        raw = _QUOTE.sub("", raw)
        if _FENCE.match(raw):
            continue
        for piece in _RUN_TOGETHER.split(raw):
            line, program = strip_prefix(piece)
            if program and program not in programs:
                programs.append(program)
            restored = _restore(line, known) if known else line
            previous = out[-1] if out else ""
            if (restored == line and line and not line[0].isspace() and len(previous) >= WRAP_MIN
                    and not _ENDS_RECORD.search(previous) and _CONTINUES.match(line) and not _DMESG.match(line)
                    and not _STARTS_RECORD.match(line) and (_WORD.match(line) or [""])[0] not in known):
                out[-1] = previous + line  # a record a terminal or form wrapped
                continue
            out.append(restored)
    return {"text": "\n".join(out), "programs": programs}
