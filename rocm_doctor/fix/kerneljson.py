"""A Jupyter kernel's kernel.json with one variable of its "env" object set or removed, and the rest kept: only the
"env" member is rewritten (or added last), so every other key, its value, their order and layout stay byte for
byte; "env" itself is written in the file's indentation, line endings and (non-)ASCII style.

A file that is not UTF-8, not valid JSON or not a kernel spec is refused with one line (RcFileError), unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from rocm_doctor.fix.rcfile import RcFileError
from rocm_doctor.parsers.kernelspec import kernel_json

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _load(data: bytes, path: Path) -> tuple[str, dict]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RcFileError(f"{path} is not UTF-8 text; nothing was changed") from None
    _spec, problem = kernel_json(text)
    if problem:
        raise RcFileError(f"{path}: {problem}; nothing was changed")
    return text, json.loads(text)


def current(data: bytes, path: Path, name: str) -> Optional[str]:
    """The "env" entry of `name` as JSON text, None when kernel.json has none."""
    env = _load(data, path)[1].get("env") or {}
    return f"{json.dumps(name)}: {json.dumps(env[name])}" if name in env else None


def with_env(data: bytes, path: Path, name: str, value: Optional[str]) -> bytes:
    """kernel.json with env[name] = value (value None: removed); the same bytes when that changes nothing."""
    text, spec = _load(data, path)
    env = dict(spec.get("env") or {})
    if (value is None and name not in env) or (value is not None and env.get(name) == value):
        return data
    if value is None:
        env.pop(name)
    else:
        env[name] = value
    members = _members(text)
    if "env" in members:
        key_at, start, end = members["env"]
        return (text[:start] + _render(env, text, _indent_before(text, key_at)) + text[end:]).encode("utf-8")
    key_at, _start, end = max(members.values(), key=lambda span: span[2])  # a spec has argv: never empty
    lead = _indent_before(text, key_at)
    joint = "," + (_newline(text) + lead if "\n" in text[:key_at] else (" " if ", " in text else ""))
    return (text[:end] + joint + _key(text) + _render(env, text, lead) + text[end:]).encode("utf-8")


def _members(text: str) -> dict[str, tuple[int, int, int]]:
    """The top-level members: key -> where its key starts, where its value starts and ends (`text` is known to be
    a JSON object)."""
    at = _WS.match(text, _WS.match(text, 0).end() + 1).end()
    members: dict[str, tuple[int, int, int]] = {}
    while text[at] != "}":
        key, after = _DECODER.raw_decode(text, at)
        start = _WS.match(text, _WS.match(text, after).end() + 1).end()  # past the ':'
        _value, end = _DECODER.raw_decode(text, start)
        members[key] = (at, start, end)
        at = _WS.match(text, end).end()
        at = _WS.match(text, at + 1).end() if text[at] == "," else at
    return members


def _indent_before(text: str, at: int) -> str:
    line = text[text.rfind("\n", 0, at) + 1:at]
    return line if not line.strip() else ""


def _key(text: str) -> str:
    return '"env": ' if '": ' in text else '"env":'


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _render(env: dict, like: str, lead: str) -> str:
    """The env object as `like` writes its objects, nested under a key indented by `lead`."""
    step = re.search(r"\n([ \t]+)\S", like)
    if not step or not env:
        return json.dumps(env, ensure_ascii=like.isascii(), separators=None if ", " in like else (",", ":"))
    lines = json.dumps(env, indent=step.group(1), ensure_ascii=like.isascii()).split("\n")
    return _newline(like).join([lines[0], *(lead + line for line in lines[1:])])
