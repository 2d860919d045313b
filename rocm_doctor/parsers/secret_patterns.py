"""The patterns that find a secret in free text, kept in one place: the report's redactor replaces what they find
with numbered placeholders (report/redact.py), and `mask_secrets` replaces it with `<redacted>` in text that other
users and programs control, before the doctor shows it (parsers/untrusted_text.py).
Pure: text in, spans or masked text out.
"""

from __future__ import annotations

import re

from rocm_doctor.parsers import shell_secrets
from rocm_doctor.parsers.secret_values import MASK

AUTH_SCHEMES = {"bearer", "basic", "token", "digest"}
HARMLESS_VALUES = {"", "none", "null", "n/a", "true", "false", "yes", "no", "0", "1", "unset", "***", "<redacted>"}

# Applied in this order (after shell_secrets' assignments and options) by the report's redactor and mask_secrets.
PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S)
URL_CREDENTIALS = re.compile(r"(?P<scheme>(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<cred>[^\s/@:<>\"']+(?::[^\s/@<>\"']*)?)@")
TOKEN = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[baprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,})"
)
AUTH_HEADER = re.compile(r"(?i)(\b(?:Bearer|Basic|Token|Digest)\s+)([A-Za-z0-9._~+/=-]{8,})")
_SECRET_WORD = r"(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|cookie|session[_-]?id|auth)"
_SECRET_WORD_RE = re.compile("(?i)" + _SECRET_WORD)
_SEPARATOR = re.compile(r"[=:]")
_ASSIGNED_VALUE = re.compile(r"[^\s\"',;]+")


def secret_assignments(text: str) -> list[tuple[int, int, int]]:
    """`password=…`, `api_key: …`, `"secret": "…"`: (start of the name, start and end of the value) for each one
    whose name holds a secret word. Scanned from each `=`/`:` outwards, so every character is looked at a bounded
    number of times (a pattern with a free prefix before the word backtracks quadratically on long names)."""
    found, resume = [], 0
    for sep in _SEPARATOR.finditer(text):
        if sep.start() < resume:
            continue
        i = sep.start()
        while i > 0 and text[i - 1].isspace():
            i -= 1
        if i > 0 and text[i - 1] == '"':
            i -= 1
        end = i
        while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.-"):
            i -= 1
        if i == end or not _SECRET_WORD_RE.search(text, i, end):
            continue
        j = sep.end()
        while j < len(text) and text[j].isspace():
            j += 1
        if j < len(text) and text[j] == '"':
            j += 1
        value = _ASSIGNED_VALUE.match(text, j)
        if value is not None:
            found.append((i, j, value.end()))
            resume = value.end()
    return found


def mask_secrets(text: str) -> str:
    """`text` with every secret these patterns and shell_secrets find replaced by MASK, in the report's order."""
    found = [span for span in shell_secrets.spans(text) if span.kind != "url-userinfo"]
    out = shell_secrets.replace(text, found, MASK) if found else text
    out = PRIVATE_KEY.sub(MASK, out)
    out = URL_CREDENTIALS.sub(lambda m: m.group("scheme") + MASK + "@", out)
    out = TOKEN.sub(MASK, out)
    out = AUTH_HEADER.sub(lambda m: m.group(1) + MASK, out)
    pieces, last = [], 0
    for start, end in assigned_secrets(out):
        pieces += [out[last:start], MASK]
        last = end
    return "".join(pieces) + out[last:] if pieces else out


def assigned_secrets(text: str) -> list[tuple[int, int]]:
    """(start, end) of each secret_assignments value that is a secret: not a placeholder, a harmless word or an
    authentication scheme (`Authorization: Bearer …` leaves the token to AUTH_HEADER)."""
    return [(start, end) for _, start, end in secret_assignments(text)
            if not (text[start:end].startswith("<") or text[start:end].lower() in HARMLESS_VALUES | AUTH_SCHEMES)]
