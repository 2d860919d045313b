"""Names of people, machines and organisations in a bundle, and where each may be replaced.

A distinctive name (`alice`, `gpu-box-7`, `CONTOSO`) is replaced wherever it stands as a word. A name that is also
a word of the domain or of ordinary text (a host called `rocm`, a user called `torch`, `dev`, `build`) is replaced
only where it stands as that name: a folder under /home or C:\\Users, `user@host`, `DOMAIN\\user`, `USER=…`,
`hostname: …`, the host field of a syslog line, `uid=1000(…)`, a value under a key that names it (`"user"`,
`"hostname"`) or the content of /etc/hostname. So `https://rocm.nightlies.amd.com` and `gfx-not-in-torch-arch-list`
survive a host named rocm and a user named torch.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Optional

# Words of the domain and of ordinary text: a name that is one of these is replaced only as that name. The words of
# the bundle's own check ids and fact keys are added per bundle (vocabulary()).
DOMAIN_WORDS = {
    "rocm", "torch", "pytorch", "hip", "cuda", "amd", "gpu", "gpus", "nvidia", "radeon", "instinct", "python",
    "triton", "miopen", "rocblas", "hipblas", "hipblaslt", "rccl", "nccl", "tensile", "kfd", "amdgpu", "gfx", "linux",
    "windows", "system", "render", "video", "docker", "podman", "nightly", "nightlies", "download", "repo", "pypi",
    "index", "wheel", "pip", "conda", "venv", "env", "opt", "usr", "lib", "bin", "dev", "sys", "proc", "etc", "var",
    "tmp", "kernel", "driver", "device", "devices", "test", "tests", "build", "server", "worker", "master", "main",
    "node", "lab", "data", "work", "compute", "train", "cluster", "local", "share", "python3", "ml", "ai", "deep",
    "learning", "apu", "mi300", "mi300x", "mi250", "h100", "h200", "cpu", "box", "desktop", "laptop", "pc", "vm",
    "workstation", "sandbox", "home", "demo", "app", "api", "web", "cloud", "edge", "dev1", "gpu0", "gpu1",
}
# Names that identify nobody (and the placeholders' own words): never replaced.
NOT_IDENTIFYING = {
    "root", "user", "users", "admin", "administrator", "ubuntu", "debian", "fedora", "runner", "guest", "default",
    "nobody", "jovyan", "host", "localhost", "ip", "mac", "serial", "uuid", "secret", "token", "email", "redacted",
    "credentials", "none", "workgroup", "domain", "org", "wsl", "localdomain",
}
NAME_KEY = re.compile(r"(?i)^(?:user(?:name)?|logname|sudo_user|host(?:name)?|node(?:name)?|computer(?:name)?"
                      r"|userdomain|userdnsdomain|domain|logonserver)$")
ONEDRIVE_ORG = re.compile(r"OneDrive - (?P<org>[^\\/;:\"'<>\n]+?)(?=$|[\\/;:\"'<>\n])")
_BOUNDARY = r"(?=$|[/\\\s\"':;,)\]])"

Hit = Callable[[str, str], str]  # (kind, name) -> placeholder


def usable(kind: str, name: str) -> bool:
    return len(name) >= (3 if kind == "user" else 2) and name.lower() not in NOT_IDENTIFYING and not name.startswith("<")


def vocabulary(data: Any) -> set[str]:
    """The words of the bundle's own vocabulary: check and finding ids, fact keys, probe and command keys."""
    words: set[str] = set()
    if not isinstance(data, dict):
        return words
    for finding in data.get("findings") or []:
        if isinstance(finding, dict):
            words.update(_words(str(finding.get("check") or "")) | _words(str(finding.get("id") or "")))
    facts = (data.get("facts") or {}).get("values") if isinstance(data.get("facts"), dict) else None
    observations = ((data.get("snapshot") or {}).get("observations") or {}) if isinstance(data.get("snapshot"), dict) else {}
    for table in (facts, observations.get("probes"), observations.get("commands")):
        if isinstance(table, dict):
            for key in table:
                words |= _words(str(key))
    return words


def _words(text: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", text.lower())) - {""}


class Names:
    """The compiled rules for one bundle: `apply(text, hit, as_value)` replaces the names in `text`."""

    def __init__(self, names: dict[str, list[str]], aliases: dict[str, str], words: set[str]) -> None:
        self.aliases = aliases  # a host's short name -> its full name (one placeholder for both)
        self.rules: list[tuple[re.Pattern, str]] = []
        self.exact: dict[str, str] = {}  # a word-like name -> its kind, for a value that is the name alone
        common = DOMAIN_WORDS | words
        for kind in ("org", "user", "host", "domain"):  # an organisation's name may hold the domain's
            found = sorted({n for n in names.get(kind, []) if usable(kind, n)}, key=len, reverse=True)
            distinct = [n for n in found if n.lower() not in common]
            worded = [n for n in found if n.lower() in common]
            if distinct:
                self.rules.append((_anywhere(kind, distinct), kind))
            if worded:
                self.rules += [(pattern, kind) for pattern in _contexts(kind, worded, names)]
                self.exact.update({n: kind for n in worded})

    def apply(self, text: str, hit: Hit, as_value: bool) -> str:
        stripped = text.strip()
        if as_value and stripped in self.exact:
            return text.replace(stripped, hit(self.exact[stripped], self._canonical(self.exact[stripped], stripped)))
        for pattern, kind in self.rules:
            text = pattern.sub(lambda m, k=kind: m.group("pre") + hit(k, self._canonical(k, m.group("name"))), text)
        return text

    def _canonical(self, kind: str, name: str) -> str:
        """One placeholder per machine, domain or organisation, whatever the case it is written in."""
        if kind == "host":
            return self.aliases.get(name.lower(), name.lower())
        return name.lower() if kind in ("domain", "org") else name


def compile_names(names: dict[str, list[str]], words: Iterable[str] = ()) -> Optional[Names]:
    aliases = {}
    hosts = []
    for host in names.get("host", []):
        hosts.append(host)
        if "." in host and not re.fullmatch(r"[\d.]+|[\da-fA-F:]+", host):  # the short name is the same machine
            short = host.split(".", 1)[0]
            hosts.append(short)
            aliases.setdefault(short.lower(), host.lower())
    names = dict(names, host=hosts)
    compiled = Names(names, aliases, set(words))
    return compiled if compiled.rules or compiled.exact else None


def _alternatives(found: list[str], fold: bool) -> str:
    """Short names (vm, pc) only in their own case, so prose like "Linux VM" survives."""
    return "|".join(f"(?i:{re.escape(n)})" if fold and len(n) >= 4 else re.escape(n) for n in found)


def _anywhere(kind: str, found: list[str]) -> re.Pattern:
    if kind == "user":
        return re.compile(r"(?P<pre>)(?<![\w<])(?P<name>" + _alternatives(found, False) + r")(?![\w>])")
    if kind == "org":
        return re.compile(r"(?P<pre>)(?<![\w<])(?P<name>" + _alternatives(found, True) + r")(?![\w>])")
    return re.compile(r"(?P<pre>)(?<![\w<.-])(?P<name>" + _alternatives(found, True) + r")(?![\w>-])")


def _contexts(kind: str, found: list[str], names: dict[str, list[str]]) -> list[re.Pattern]:
    """Where a word-like name stands as that name (see the module's docstring)."""
    n = "(?P<name>" + "|".join(re.escape(x) for x in found) + ")"
    label = {
        "user": r"user(?:name)?|logname|login|sudo_user",
        "host": r"host(?:name)?|node(?:name)?|computer(?:name)?|machine|server",
        "domain": r"userdomain|userdnsdomain|domain",
        "org": r"organi[sz]ation|company",
    }[kind]
    patterns = [r"(?P<pre>(?i:\b(?:" + label + r")\b[\"']?\s*[:=]\s*[\"']?))" + n + r"(?![\w.-])"]
    if kind == "user":
        prefixes = [re.escape(x) for x in names.get("domain", []) + names.get("host", []) if x] + [r"\."]
        patterns += [
            r"(?P<pre>(?:/home/|/Users/|/var/home/))" + n + _BOUNDARY,
            r"(?P<pre>(?i:\b[A-Za-z]:\\+Users\\+))" + n + _BOUNDARY,
            r"(?P<pre>)(?<![\w.-])" + n + r"(?=@[\w\[-])",
            r"(?P<pre>(?<=\d)\()" + n + r"(?=\))",
            r"(?P<pre>(?i:(?<![\w-])(?:" + "|".join(prefixes) + r")\\))" + n + r"(?![\w\\-])",
        ]
    elif kind == "host":
        patterns += [
            r"(?P<pre>(?i:\b(?:hostname|nodename|computername)\s+))" + n + r"(?![\w.-])",
            r"(?P<pre>@)" + n + r"(?=$|[:\s\]>)/])",
            r"(?P<pre>\\\\)" + n + r"(?=$|[\\\s\"'])",
            r"(?m)(?P<pre>^(?:[A-Z][a-z]{2} [ \d]\d |\d{4}-\d\d-\d\d[T ])\d\d:\d\d:\d\d\S* )" + n + r"(?= \S+:)",
        ]
    elif kind == "domain":
        patterns.append(r"(?P<pre>)(?<![\w\\-])" + n + r"(?=\\[\w.-])")
    else:
        patterns.append(r"(?P<pre>OneDrive - )" + n + r"(?![\w-])")
    return [re.compile(p) for p in patterns]
