"""Text that other users and programs control — kernel-log lines, the names and command lines of GPU processes —
made safe to show before it becomes a fact, so every output (check's screen, its JSON, a report) shows the same:

- terminal control is made visible instead of obeyed: C0 and C1 control characters (ESC of ANSI/OSC sequences,
  CR, backspace, BEL, the 8-bit CSI), DEL, the bidirectional overrides and isolates that reorder what a line seems
  to say, and the line and paragraph separators become `\\x1b`, `\\x0d`, `\\u202e`, … (a tab becomes a space);
- secrets in it are masked by the report's patterns (parsers/secret_patterns.py): `--password X`, `mysql -pPASS`,
  a URL's credentials, tokens, `API_KEY=…`, each as `<redacted>`.
Pure; never raises.
"""

from __future__ import annotations

import re
from typing import Any

from rocm_doctor.parsers.secret_patterns import mask_secrets

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]")
_MAX_DEPTH = 20  # the parsed structures this is given are shallow


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def neutral(text: str) -> str:
    """`text` with every character that could steer a terminal or reorder a line written out visibly."""
    return _CONTROL.sub(_visible, text.replace("\t", " "))


def shown(text: str) -> str:
    """Neutral, with its secrets masked: text another user or program controls, as the doctor may show it."""
    return mask_secrets(neutral(text)) if text else text


def shown_all(data: Any, depth: int = 0) -> Any:
    """A copy of parsed data (dicts, lists) with `shown` applied to every string value in it."""
    if isinstance(data, str):
        return shown(data)
    if depth > _MAX_DEPTH:
        return data
    if isinstance(data, dict):
        return {key: shown_all(value, depth + 1) for key, value in data.items()}
    if isinstance(data, list):
        return [shown_all(item, depth + 1) for item in data]
    return data
