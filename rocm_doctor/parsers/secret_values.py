"""Secrets masked by what a value is, before anything is recorded (snapshots, the run history, fleet reports).

A record keeps what a local replay needs (names, versions, paths, hosts) and no secret: what a report would hide as
a secret is hidden here already, so a file that is copied or shared holds no more than the report. A value is
read by what it is:
- a variable in an environment (a dict under `env`, `environ`, `environment`, `env_vars`): its value when its name
  says secret (shell_secrets.secret_name), and that value again wherever else it appears in the record;
- an argument vector (a list of strings: kernel.json's argv, a command line): an option and its value in two
  elements (`--password`, `X`), read as shell_secrets reads a line;
- JSON text (a kernel.json's content, a tool's JSON output): parsed and read as the structure it is;
- any other text: as shell lines (assignments, options, `-u user:pass`, a unit's `Environment=`/`ExecStart=`, a
  URL's user info).
Pure: data in, a masked copy out.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Optional

from rocm_doctor.facts.keys import WINDOWS_ENV_SCOPES
from rocm_doctor.parsers import shell_secrets

MASK = "<redacted>"
ENV_KEYS = {"env", "environ", "environment", "env_vars"}  # a dict of strings under one of these is an environment
MIN_LITERAL = 6  # a secret value shorter than this is not hunted for elsewhere (it would hit ordinary words)
MAX_JSON_TEXT = 4 * 1024 * 1024  # longer JSON-looking text is read as text only
MAX_DEPTH = 100  # deeper than this, a structure is kept as it is below (records the doctor builds are shallow)


def is_environment_key(key: str) -> bool:
    """`env`, `environment`, …, and `*_env` (a kernel spec's `spec_env`): a dict of strings under it is variables."""
    return key.lower() in ENV_KEYS or key.lower().endswith("_env")


def is_environment(keys: tuple[str, ...], value: dict) -> bool:
    return bool(keys) and is_environment_key(keys[-1]) and all(isinstance(v, str) for v in value.values())


def is_variable_table(keys: tuple[str, ...]) -> bool:
    """A table of variable records with a `value` (a registry `…\\Environment` key's values, Windows' User and
    Machine scopes): the record's value is read by the variable's name."""
    if keys[-2:] in ((WINDOWS_ENV_SCOPES, "user"), (WINDOWS_ENV_SCOPES, "machine")):
        return True
    return len(keys) >= 2 and keys[-1] == "values" and keys[-2].lower().endswith("\\environment")


def secret_values(data: Any) -> list[str]:
    """The values of the secret-named variables of every environment in `data`."""
    found, stack = [], [(data, (), 0)]
    while stack:
        value, keys, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        if isinstance(value, dict):
            env, table = is_environment(keys, value), is_variable_table(keys)
            for key, item in value.items():
                if env and item and shell_secrets.secret_name(str(key)):
                    found.append(item)
                elif table and isinstance(item, dict) and shell_secrets.secret_name(str(key)):
                    value_of = item.get("value")
                    found += [value_of] if isinstance(value_of, str) else \
                        [v for v in value_of or [] if isinstance(v, str)] if isinstance(value_of, list) else []
                elif isinstance(item, (dict, list)):
                    stack.append((item, keys + (str(key),), depth + 1))
        elif isinstance(value, list):
            stack.extend((item, keys, depth + 1) for item in value if isinstance(item, (dict, list)))
    return found


def literal_pattern(values: Iterable[str]) -> Optional[re.Pattern]:
    """One pattern for the secret values to hide wherever they appear (each line of a multi-line one too)."""
    literals = set()
    for value in values:
        for part in [value, *value.splitlines()]:
            if len(part.strip()) >= MIN_LITERAL and part.strip() != MASK:
                literals.add(part.strip())
    if not literals:
        return None
    return re.compile("|".join(re.escape(s) for s in sorted(literals, key=len, reverse=True)))


def mask_structure(data: Any, extra_secrets: Iterable[str] = ()) -> Any:
    """A copy of `data` (dicts, lists, strings) with every secret value replaced by MASK."""
    literals = literal_pattern([*secret_values(data), *extra_secrets])
    return _walk(data, (), literals, 0)


def mask_text(text: str, literals: Optional[re.Pattern] = None) -> str:
    """One string: JSON text by its structure, any other text as shell lines; then the known secret values."""
    parsed = json_value(text)
    if parsed is not None:
        masked = _walk(parsed, (), literals, 1)
        if masked != parsed:
            return json.dumps(masked, indent=1 if "\n" in text.strip() else None, ensure_ascii=False)
        return text
    out = shell_secrets.mask(text, MASK)
    return literals.sub(MASK, out) if literals is not None else out


def mask_argv(argv: list[str], literals: Optional[re.Pattern] = None) -> list[str]:
    joined, found = shell_secrets.argv_spans(argv)
    masked = shell_secrets.replace(joined, found, MASK).split("\0") if found else list(argv)
    return [mask_text(item, literals) for item in masked]


def _walk(value: Any, keys: tuple[str, ...], literals: Optional[re.Pattern], depth: int) -> Any:
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        env, table = is_environment(keys, value), is_variable_table(keys)
        out = {}
        for key, item in value.items():
            if env and item and shell_secrets.secret_name(str(key)) and not _reference(item):
                out[key] = MASK
            elif table and isinstance(item, dict) and shell_secrets.secret_name(str(key)):
                out[key] = {field: _masked_value(text) if field in ("value", "expanded") else text
                            for field, text in item.items()}
            else:
                out[key] = _walk(item, keys + (str(key),), literals, depth + 1)
        return out
    if isinstance(value, list):
        if len(value) >= 2 and all(isinstance(item, str) for item in value):
            return mask_argv(value, literals)
        return [_walk(item, keys, literals, depth + 1) for item in value]
    if isinstance(value, str) and value:
        return mask_text(value, literals)
    return value


def _masked_value(value: Any) -> Any:
    """A secret variable's value masked whole: a string, or each string of a multi-string value."""
    if isinstance(value, list):
        return [MASK if isinstance(v, str) and v else v for v in value]
    return MASK if isinstance(value, str) and value else value


def _reference(value: str) -> bool:
    """`$VAR`, `${VAR}`, a placeholder: names where a secret is, and is kept."""
    return bool(re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>]*>", value.strip()))


def json_value(text: str) -> Any:
    """The dict or list a string holds as JSON text, else None."""
    stripped = text.lstrip()
    if not stripped[:1] in ("{", "[") or len(text) > MAX_JSON_TEXT:
        return None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, (dict, list)) else None
