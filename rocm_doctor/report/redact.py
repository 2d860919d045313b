"""Redaction for support bundles (docs/report.md, "Redaction").

A report posted to a public issue must not carry secrets or say who and where the user is, yet it must stay
readable: the same host is `<host>` everywhere, the second IP is always `<ip-2>`. So one Redactor walks the whole
nested bundle (keys and values), first learning the identities to hide (user, home, host, secret env values),
then rewriting every string with the same placeholder table. It records where it replaced what, never the values.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from rocm_doctor.facts.keys import WINDOWS_ENV_SCOPES
from rocm_doctor.parsers import secret_patterns, secret_values, shell_secrets
from rocm_doctor.report import redact_names
from rocm_doctor.report import redact_rules as rules

MASK = "<redacted>"


@dataclass
class Redaction:
    """One place where something was replaced: the JSON path and the kinds of things replaced there."""

    path: str
    kinds: list[str]
    count: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kinds": self.kinds, "count": self.count}


@dataclass
class Identities:
    """What to hide that no pattern can find: names learned from the environment and the local machine."""

    users: list[str] = field(default_factory=list)
    homes: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)  # Windows logon domains
    orgs: list[str] = field(default_factory=list)  # organisations (a OneDrive folder names one)
    secrets: list[str] = field(default_factory=list)  # literal values (secret env values) to hide anywhere


class Redactor:
    def __init__(self, identities: Optional[Identities] = None) -> None:
        self.identities = identities or Identities()
        self.redactions: list[Redaction] = []
        self._table: dict[str, dict[str, str]] = {}  # kind -> value -> placeholder
        self._hits: list[str] = []
        self._literal_re: Optional[re.Pattern] = None
        self._names: Optional[redact_names.Names] = None
        self._home_re: Optional[re.Pattern] = None
        self._key = ""  # the key above the string being read (structure says what a value is)

    # -- public ---------------------------------------------------------------------------------------------
    def redact(self, data: Any) -> Any:
        """A redacted deep copy of `data` (dicts, lists, strings; other scalars pass through)."""
        self._learn(data)
        self._compile(redact_names.vocabulary(data))
        return self._walk(data, "$", keys=())

    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were replaced (for the bundle's summary)."""
        return {kind: len(values) for kind, values in sorted(self._table.items())}

    # -- learning -------------------------------------------------------------------------------------------
    def _learn(self, data: Any) -> None:
        ids = self.identities
        for name, value in _variables(data):
            if not isinstance(value, str) or not value:
                continue
            upper = name.upper()
            if upper in rules.USER_VARIABLES:
                ids.users.append(value)
            elif upper in rules.HOME_VARIABLES:
                ids.homes.append(value)
            elif upper in rules.HOST_VARIABLES:
                ids.hosts.append(value)
            elif upper in rules.DOMAIN_VARIABLES:
                ids.domains.append(value)
            elif upper == "LOGONSERVER":
                ids.hosts.append(value.lstrip("\\"))
            if rules.is_secret_name(name):
                ids.secrets.append(value)
            elif not rules.is_allowed_name(name):
                ids.secrets.extend(part for part in [value, *value.splitlines()] if rules.looks_random(part))
        for text in _strings(data):
            parsed = secret_values.json_value(text)
            if parsed is not None:  # a kernel.json's env is an environment too
                self._learn(parsed)
                continue
            for match in rules.HOME_PATH.finditer(text):
                ids.users.append(match.group("name"))
            ids.orgs.extend(m.group("org").strip() for m in redact_names.ONEDRIVE_ORG.finditer(text))

    def _compile(self, words: set[str]) -> None:
        ids = self.identities
        names = {"user": ids.users, "host": [h for h in ids.hosts if not _is_ip(h)], "domain": ids.domains,
                 "org": ids.orgs}
        self._names = redact_names.compile_names(names, words)
        homes = _unique(h.rstrip("/\\") for h in ids.homes if len(h.rstrip("/\\")) > 1)
        secrets = set()
        for value in ids.secrets:
            if len(value) >= rules.MIN_SECRET_LEN:
                secrets.add(value)
            for line in value.splitlines():  # a multi-line secret may show up one line at a time
                if len(line.strip()) >= 12:
                    secrets.add(line.strip())
        if secrets:
            alternatives = "|".join(re.escape(s) for s in sorted(secrets, key=len, reverse=True))
            self._literal_re = re.compile(alternatives)
        if homes:
            self._home_re = re.compile(
                "|".join(re.escape(h) for h in sorted(homes, key=len, reverse=True)) + r"(?=$|[/\\\s\"':;,)])",
                re.IGNORECASE,
            )

    # -- walking --------------------------------------------------------------------------------------------
    def _walk(self, value: Any, path: str, keys: tuple[str, ...]) -> Any:
        """`keys` are the dict keys above `value`, which say what a table is (an environment, registry values)."""
        if isinstance(value, dict):
            table = _table_kind(keys, value)
            out: dict[str, Any] = {}
            for key, item in value.items():
                new_key = self._text(str(key), f"{path}.<key>") if isinstance(key, str) else key
                child_path, name = f"{path}.{new_key}", str(key)
                if table == "env" and isinstance(item, str):
                    out[new_key] = self._env_value(name, item, child_path)
                elif table == "variables" and isinstance(item, dict):
                    out[new_key] = {field: self._variable(name, text, f"{child_path}.{field}")
                                    if field in ("value", "expanded")
                                    else self._walk(text, f"{child_path}.{field}", keys + (name, field))
                                    for field, text in item.items()}
                elif isinstance(item, str) and rules.is_secret_key(name) and item.lower() not in rules.HARMLESS_VALUES \
                        and not item.startswith("<"):
                    out[new_key] = self._record(child_path, ["secret"], self._placeholder("secret", item))
                elif isinstance(item, str) and rules.IDENTIFIER_KEY.search(name) and not rules.trivial_id(item):
                    out[new_key] = self._whole(name, item, child_path)
                else:
                    out[new_key] = self._walk(item, child_path, keys + (name,))
            return out
        if isinstance(value, (list, tuple)):
            if len(value) >= 2 and all(isinstance(item, str) for item in value):
                value = self._argv(list(value), path)
            return [self._walk(item, f"{path}[{i}]", keys) for i, item in enumerate(value)]
        if isinstance(value, str):
            return self._text(value, path, keys)
        return value

    def _variable(self, name: str, value: Any, path: str) -> Any:
        """A registry variable's value: a string, or the strings of a multi-string (REG_MULTI_SZ) value."""
        if isinstance(value, str):
            return self._env_value(name, value, path)
        if isinstance(value, list):
            return [self._env_value(name, item, f"{path}[{i}]") if isinstance(item, str) else
                    self._walk(item, f"{path}[{i}]", (name,)) for i, item in enumerate(value)]
        return self._walk(value, path, (name,))

    def _argv(self, argv: list[str], path: str) -> list[str]:
        """An argument vector: an option and its value in two elements (`--password`, `X`) are read together."""
        joined, found = shell_secrets.argv_spans(argv)
        found = [span for span in found if span.kind != "url-userinfo"]
        if not found:
            return argv
        self._hits = []
        out = self._replace(joined, found).split("\0")
        self.redactions.append(Redaction(path=path, kinds=sorted(set(self._hits)), count=len(self._hits)))
        return out

    def _env_value(self, name: str, value: str, path: str) -> str:
        if value == MASK:  # masked when it was recorded
            return value
        if rules.is_secret_name(name):
            return self._record(path, ["env-secret"], self._placeholder("secret", value) if value else value)
        if not rules.is_allowed_name(name):
            if not value:
                return value
            if rules.looks_random(value):
                return self._record(path, ["env-value"], self._placeholder("secret", value))
            return self._record(path, ["env-value"], MASK)
        return self._text(value, path, (name,))

    def _whole(self, key: str, value: str, path: str) -> str:
        """A value under a key named like serial/uuid: the text rules first (GPU-<uuid-1>), else all of it."""
        out = self._text(value, path)
        if out != value:
            return out
        kind = "uuid" if "uuid" in key.lower() else "serial"
        return self._record(path, [kind], self._placeholder(kind, value))

    def _record(self, path: str, kinds: list[str], result: str) -> str:
        self.redactions.append(Redaction(path=path, kinds=kinds))
        return result

    def _text(self, text: str, path: str, keys: Optional[tuple[str, ...]] = None) -> str:
        """The text rules over one string; `keys` (None for a dict key) say whether it may be a name by itself."""
        if not text:
            return text
        parsed = secret_values.json_value(text)
        if parsed is not None:  # kernel.json, a tool's JSON output: read as the structure it is
            masked = self._walk(parsed, path, ())
            return text if masked == parsed else json.dumps(masked, indent=1 if "\n" in text.strip() else None,
                                                             ensure_ascii=False)
        self._hits = []
        self._key = keys[-1] if keys else ""
        out = text
        if self._literal_re is not None:
            out = self._literal_re.sub(lambda m: self._hit("secret", m.group(0)), out)
        out = self._shell_secrets(out)
        out = secret_patterns.PRIVATE_KEY.sub(lambda m: self._hit("private-key", m.group(0)), out)
        out = secret_patterns.URL_CREDENTIALS.sub(
            lambda m: m.group("scheme") + self._hit("credentials", m.group("cred"), MASK) + "@", out)
        out = secret_patterns.TOKEN.sub(lambda m: self._hit("token", m.group(0)), out)
        out = secret_patterns.AUTH_HEADER.sub(lambda m: m.group(1) + self._hit("token", m.group(2)), out)
        out = self._secret_assignments(out)
        out = rules.EMAIL.sub(lambda m: self._hit("email", m.group(0)), out)
        if self._home_re is not None:
            out = self._home_re.sub(lambda m: self._hit("home", m.group(0), "~"), out)
        out = rules.SERIAL_LINE.sub(self._serial, out)
        out = rules.GPU_UUID.sub(lambda m: m.group("prefix") + self._hit("uuid", m.group("id")), out)
        out = rules.UUID.sub(lambda m: self._hit("uuid", m.group(0)), out)
        out = rules.MAC.sub(lambda m: self._hit("mac", m.group(0).lower()), out)
        out = rules.IPV6_CANDIDATE.sub(self._ipv6, out)
        out = rules.IPV4.sub(self._ipv4, out)
        if self._names is not None:
            out = self._names.apply(out, self._hit, as_value=keys is not None and _names_a_name(keys))
        if self._hits:
            self.redactions.append(Redaction(path=path, kinds=sorted(set(self._hits)), count=len(self._hits)))
        return out

    # -- replacement callbacks ------------------------------------------------------------------------------
    def _hit(self, kind: str, value: str, fixed: Optional[str] = None) -> str:
        self._hits.append(kind)
        return fixed if fixed is not None else self._placeholder(kind, value)

    def _shell_secrets(self, text: str) -> str:
        """Values of secret assignments and options and `-u user:pass`, read with shell quoting (parsers/
        shell_secrets.py); credentials in URLs are left to URL_CREDENTIALS."""
        found = [span for span in shell_secrets.spans(text) if span.kind != "url-userinfo"]
        return self._replace(text, found) if found else text

    def _replace(self, text: str, found: list) -> str:
        out, last = [], 0
        for span in found:
            value = text[span.start:span.end]
            if span.kind == "user-password":
                replacement = self._hit("credentials", value, MASK)
            else:
                replacement = self._hit("secret", value)
            out += [text[last:span.start], replacement]
            last = span.end
        return "".join(out) + text[last:]

    def _secret_assignments(self, text: str) -> str:
        out, last = [], 0
        for start, end in secret_patterns.assigned_secrets(text):
            out += [text[last:start], self._hit("secret", text[start:end])]
            last = end
        return "".join(out) + text[last:] if out else text

    def _serial(self, match: re.Match) -> str:
        value = match.group("value")
        if rules.trivial_id(value):
            return match.group(0)
        return match.group("label") + self._hit("serial", value)

    def _ipv6(self, match: re.Match) -> str:
        text = match.group(0)
        try:
            address = ipaddress.IPv6Address(text)
        except ValueError:
            return text
        if address.is_loopback or address.is_unspecified:
            return text
        return self._hit("ip", str(address))

    def _ipv4(self, match: re.Match) -> str:
        text = match.group(0)
        address = ipaddress.IPv4Address(text)
        if address.is_loopback or address.is_unspecified or text.startswith("255."):
            return text
        if rules.VERSION_BEFORE.search(match.string, max(0, match.start() - 40), match.start()):
            return text  # `MIOpen version 3.3.0.0`, `Driver Version: 24.10.1.2`
        if match.start() == 0 and rules.VERSION_BEFORE.search(self._key + ":"):
            return text  # `{"version": "3.3.0.0"}` read as a structure
        return self._hit("ip", text)

    def _placeholder(self, kind: str, value: str) -> str:
        values = self._table.setdefault(kind, {})
        if value not in values:
            number = len(values) + 1
            if kind in ("user", "host", "domain", "org"):
                values[value] = f"<{kind}>" if number == 1 else f"<{kind}-{number}>"
            else:
                values[value] = f"<{kind}-{number}>"
        return values[value]


def redact(data: Any, identities: Optional[Identities] = None) -> tuple[Any, Redactor]:
    """Redact a bundle; returns the copy and the Redactor (its `redactions` and `counts()`)."""
    redactor = Redactor(identities)
    return redactor.redact(data), redactor


def local_identities() -> Identities:
    """The user, home and host of the machine running rocm-doctor, hidden even where no env variable names them."""
    import getpass
    import os
    import socket

    ids = Identities()
    try:
        ids.users.append(getpass.getuser())
    except Exception:  # no user name in a container is not a reason to fail
        pass
    ids.homes.append(os.path.expanduser("~"))
    try:
        ids.hosts.append(socket.gethostname())
    except OSError:
        pass
    return ids


# -- helpers ------------------------------------------------------------------------------------------------
def _table_kind(keys: tuple[str, ...], value: dict) -> Optional[str]:
    """"env" for a dict of variables (an environment; Windows' process scope), "variables" for a table of variable
    records with a value (the registry's Environment keys; Windows' User and Machine scopes), else None."""
    if not keys:
        return None
    if _all_strings(value) and (secret_values.is_environment_key(keys[-1])
                                or keys[-2:] == (WINDOWS_ENV_SCOPES, "process")):
        return "env"
    if secret_values.is_variable_table(keys):
        return "variables"
    return None


def _variables(data: Any) -> Iterable[tuple[str, Any]]:
    """(name, value) of every variable in every environment and variable table of the bundle."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        value, keys = stack.pop()
        if isinstance(value, dict):
            table = _table_kind(keys, value)
            for key, item in value.items():
                if table == "env":
                    yield str(key), item
                elif table == "variables" and isinstance(item, dict):
                    yield str(key), item.get("value")
                else:
                    stack.append((item, keys + (str(key),)))
        elif isinstance(value, list):
            stack.extend((item, keys) for item in value)


def _names_a_name(keys: tuple[str, ...]) -> bool:
    """A value that may be a name by itself: under a key like "user" or "hostname", or /etc/hostname's content."""
    if redact_names.NAME_KEY.match(keys[-1] if keys else ""):
        return True
    return len(keys) >= 2 and keys[-1] == "content" and keys[-2].replace("\\", "/").endswith("/hostname")


def _strings(data: Any) -> Iterable[str]:
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            stack.extend(value.values())
            stack.extend(k for k in value if isinstance(k, str))
        elif isinstance(value, list):
            stack.extend(value)


def _all_strings(mapping: dict) -> bool:
    return all(isinstance(v, str) for v in mapping.values())


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False
