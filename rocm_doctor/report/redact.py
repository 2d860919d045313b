"""Redaction for support bundles (docs/report.md, "Redaction").

A report posted to a public issue must not carry secrets or say who and where the user is, yet it must stay
readable: the same host is `<host>` everywhere, the second IP is always `<ip-2>`. So one Redactor walks the whole
nested bundle (keys and values), first learning the identities to hide (user, home, host, secret env values),
then rewriting every string with the same placeholder table. It records where it replaced what, never the values.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

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
    secrets: list[str] = field(default_factory=list)  # literal values (secret env values) to hide anywhere


class Redactor:
    def __init__(self, identities: Optional[Identities] = None) -> None:
        self.identities = identities or Identities()
        self.redactions: list[Redaction] = []
        self._table: dict[str, dict[str, str]] = {}  # kind -> value -> placeholder
        self._hits: list[str] = []
        self._literal_re: Optional[re.Pattern] = None
        self._user_re: Optional[re.Pattern] = None
        self._host_re: Optional[re.Pattern] = None
        self._home_re: Optional[re.Pattern] = None
        self._host_alias: dict[str, str] = {}

    # -- public ---------------------------------------------------------------------------------------------
    def redact(self, data: Any) -> Any:
        """A redacted deep copy of `data` (dicts, lists, strings; other scalars pass through)."""
        self._learn(data)
        self._compile()
        return self._walk(data, "$", parent_key=None)

    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were replaced (for the bundle's summary)."""
        return {kind: len(values) for kind, values in sorted(self._table.items())}

    # -- learning -------------------------------------------------------------------------------------------
    def _learn(self, data: Any) -> None:
        ids = self.identities
        for env in _env_dicts(data):
            for name, value in env.items():
                if not isinstance(value, str) or not value:
                    continue
                upper = name.upper()
                if upper in rules.USER_VARIABLES:
                    ids.users.append(value)
                elif upper in rules.HOME_VARIABLES:
                    ids.homes.append(value)
                elif upper in rules.HOST_VARIABLES:
                    ids.hosts.append(value)
                if rules.is_secret_name(name):
                    ids.secrets.append(value)
                elif not rules.is_allowed_name(name):
                    ids.secrets.extend(part for part in [value, *value.splitlines()] if rules.looks_random(part))
        for text in _strings(data):
            for match in rules.HOME_PATH.finditer(text):
                ids.users.append(match.group("name"))

    def _compile(self) -> None:
        ids = self.identities
        users = _unique(u for u in ids.users if rules.usable_user(u))
        hosts = []
        for host in ids.hosts:
            hosts.append(host)
            if "." in host and not _is_ip(host):  # the short name is the same machine: same placeholder
                short = host.split(".", 1)[0]
                hosts.append(short)
                self._host_alias.setdefault(short.lower(), host.lower())
        hosts = _unique(h for h in hosts if rules.usable_host(h))
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
        if users:
            self._users = users
            self._user_re = re.compile(r"(?<![\w<])(" + "|".join(re.escape(u) for u in users) + r")(?![\w>])")
        if hosts:
            # short names (vm, pc) only in their own case, so prose like "Linux VM" survives
            names = [re.escape(h) if len(h) < 4 else f"(?i:{re.escape(h)})" for h in sorted(hosts, key=len, reverse=True)]
            self._host_re = re.compile(r"(?<![\w<.-])(" + "|".join(names) + r")(?![\w>-])")

    # -- walking --------------------------------------------------------------------------------------------
    def _walk(self, value: Any, path: str, parent_key: Optional[str]) -> Any:
        if isinstance(value, dict):
            env_like = parent_key is not None and parent_key.lower() in rules.ENV_KEYS and _all_strings(value)
            out: dict[str, Any] = {}
            for key, item in value.items():
                new_key = self._text(str(key), f"{path}.<key>") if isinstance(key, str) else key
                child_path = f"{path}.{new_key}"
                if env_like and isinstance(item, str):
                    out[new_key] = self._env_value(str(key), item, child_path)
                elif isinstance(item, str) and rules.IDENTIFIER_KEY.search(str(key)) and not rules.trivial_id(item):
                    out[new_key] = self._whole(str(key), item, child_path)
                else:
                    out[new_key] = self._walk(item, child_path, str(key))
            return out
        if isinstance(value, (list, tuple)):
            return [self._walk(item, f"{path}[{i}]", parent_key) for i, item in enumerate(value)]
        if isinstance(value, str):
            return self._text(value, path)
        return value

    def _env_value(self, name: str, value: str, path: str) -> str:
        if rules.is_secret_name(name):
            return self._record(path, ["env-secret"], self._placeholder("secret", value) if value else value)
        if not rules.is_allowed_name(name):
            if not value:
                return value
            if rules.looks_random(value):
                return self._record(path, ["env-value"], self._placeholder("secret", value))
            return self._record(path, ["env-value"], MASK)
        return self._text(value, path)

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

    def _text(self, text: str, path: str) -> str:
        if not text:
            return text
        self._hits = []
        out = text
        if self._literal_re is not None:
            out = self._literal_re.sub(lambda m: self._hit("secret", m.group(0)), out)
        out = rules.PRIVATE_KEY.sub(lambda m: self._hit("private-key", m.group(0)), out)
        out = rules.URL_CREDENTIALS.sub(lambda m: m.group("scheme") + self._hit("credentials", m.group("cred"), MASK) + "@", out)
        out = rules.TOKEN.sub(lambda m: self._hit("token", m.group(0)), out)
        out = rules.AUTH_HEADER.sub(lambda m: m.group(1) + self._hit("token", m.group(2)), out)
        out = rules.SECRET_ASSIGNMENT.sub(self._secret_assignment, out)
        out = rules.EMAIL.sub(lambda m: self._hit("email", m.group(0)), out)
        if self._home_re is not None:
            out = self._home_re.sub(lambda m: self._hit("home", m.group(0), "~"), out)
        out = rules.SERIAL_LINE.sub(self._serial, out)
        out = rules.GPU_UUID.sub(lambda m: m.group("prefix") + self._hit("uuid", m.group("id")), out)
        out = rules.UUID.sub(lambda m: self._hit("uuid", m.group(0)), out)
        out = rules.MAC.sub(lambda m: self._hit("mac", m.group(0).lower()), out)
        out = rules.IPV6_CANDIDATE.sub(self._ipv6, out)
        out = rules.IPV4.sub(self._ipv4, out)
        if self._user_re is not None:
            out = self._user_re.sub(lambda m: self._hit("user", m.group(1)), out)
        if self._host_re is not None:
            out = self._host_re.sub(lambda m: self._hit("host", self._host_name(m.group(1))), out)
        if self._hits:
            self.redactions.append(Redaction(path=path, kinds=sorted(set(self._hits)), count=len(self._hits)))
        return out

    # -- replacement callbacks ------------------------------------------------------------------------------
    def _hit(self, kind: str, value: str, fixed: Optional[str] = None) -> str:
        self._hits.append(kind)
        return fixed if fixed is not None else self._placeholder(kind, value)

    def _host_name(self, name: str) -> str:
        return self._host_alias.get(name.lower(), name.lower())

    def _secret_assignment(self, match: re.Match) -> str:
        value = match.group("value")
        if value.startswith("<") or value.lower() in rules.HARMLESS_VALUES or value.lower() in rules.AUTH_SCHEMES:
            return match.group(0)
        return match.group("name") + match.group("sep") + self._hit("secret", value)

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
        return self._hit("ip", text)

    def _placeholder(self, kind: str, value: str) -> str:
        values = self._table.setdefault(kind, {})
        if value not in values:
            number = len(values) + 1
            if kind in ("user", "host"):
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
def _env_dicts(data: Any) -> Iterable[dict]:
    stack = [(data, None)]
    while stack:
        value, key = stack.pop()
        if isinstance(value, dict):
            if key is not None and key.lower() in rules.ENV_KEYS and _all_strings(value):
                yield value
            stack.extend((v, str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, key) for v in value)


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
