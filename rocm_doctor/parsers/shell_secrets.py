"""Where a secret sits in a shell line, read as the shell reads it.

An rc line that sets a GPU variable often sets a token too: `export HSA_OVERRIDE_GFX_VERSION=10.3.0
HF_TOKEN='a b c'`, `alias train='WANDB_API_KEY=… python train.py --wandb-key=…'`, `curl -u user:pass …`. A pattern
over the raw text misses a quoted value or takes half of it, so words are scanned with POSIX quoting (single
quotes, double quotes with backslash escapes, `$'…'`, backslash escapes) and a quoted alias body is read again as
a command line. Secrets are:
- the value of an assignment whose name says secret (`NAME=…` in sh, bash, zsh, cmd's `set`, `setx NAME value`,
  fish's `set -x NAME value`, PowerShell's `$env:NAME = …`);
- the value of an option whose name says secret (`--wandb-key=…`, `--password …`, `--hf-token …`);
- the user and password of `-u`/`--user`/`--proxy-user user:pass` (curl, wget);
- the user info of a URL (`https://user:pass@host`, `https://TOKEN@host`).
A name says secret when one of its parts (split at `_` and `-`) is KEY, TOKEN, SECRET, PASS, PASSWORD, … (list
below), or it contains TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, APIKEY or CREDENTIAL. `$VAR` and `${VAR}`
references name no secret and are kept. Pure: text in, spans out.
"""

from __future__ import annotations

import re
from typing import NamedTuple

SECRET_PARTS = {"KEY", "APIKEY", "TOKEN", "SECRET", "SECRETS", "PASS", "PASSWD", "PASSWORD", "PASSPHRASE", "PAT",
                "CREDENTIAL", "CREDENTIALS", "CRED", "CREDS", "AUTH", "COOKIE", "PRIVATE", "SIGNATURE", "SALT", "DSN",
                "WEBHOOK", "PW", "PSK"}
SECRET_INFIXES = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "CREDENTIAL")
SECRET_NAMES = {"MYSQL_PWD", "SSHPASS"}  # secret by name, though no part says so
NOT_SECRET = {"SSH_AUTH_SOCK", "GNOME_KEYRING_CONTROL", "KEYMAP", "XKB_DEFAULT_LAYOUT"}
USER_OPTIONS = {"-u", "--user", "-U", "--proxy-user"}
# Short options that take a password: `-p X` (sshpass, twine, a service's ExecStart) unless X reads as a port, a
# number or a path; `-a X` only after redis-cli; `-pX` written together only after the MySQL clients.
PASSWORD_SHORT = "-p"
PROGRAM_SHORT = {"redis-cli": "-a"}
ATTACHED_PROGRAMS = {"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mariadb",
                     "mariadb-dump", "mariadb-admin"}


class Span(NamedTuple):
    start: int
    end: int
    kind: str  # "assignment", "option", "user-password", "url-userinfo"


def secret_name(name: str) -> bool:
    upper = name.upper().lstrip("-$")
    if upper in NOT_SECRET:
        return False
    if upper in SECRET_NAMES:
        return True
    parts = set(re.split(r"[_\-.:]+", upper))
    return bool(parts & SECRET_PARTS) or any(word in upper for word in SECRET_INFIXES)


def spans(text: str) -> list[Span]:
    """The secret values in `text` (one or more shell lines), in order, not overlapping."""
    found: list[Span] = []
    for start, end in _lines(text):
        if _CANDIDATE.search(text, start, end):  # most lines of a tool's output name no secret: skip the scan
            found += _command_spans(text, start, end, depth=0)
    found += [Span(m.start("info"), m.end("info"), "url-userinfo") for m in URL_USERINFO.finditer(text)]
    return _merge(found)


def argv_spans(argv: list[str]) -> tuple[str, list[Span]]:
    """An argument vector (kernel.json's argv, a command line from /proc) joined with NULs, and its secret spans:
    each element is one word as given, so an option and its value in two elements are found together."""
    text, words, start = "\0".join(argv), [], 0
    for item in argv:
        words.append((start, start + len(item)))
        start += len(item) + 1
    found = _command_spans(text, 0, len(text), depth=0, words=words)
    found += [Span(m.start("info"), m.end("info"), "url-userinfo") for m in URL_USERINFO.finditer(text)]
    return text, _merge(found)


def mask(text: str, replacement: str = "<redacted>") -> str:
    """`text` with every secret value replaced (the names, options and quotes around them kept)."""
    return replace(text, spans(text), replacement)


def replace(text: str, found: list[Span], replacement: str = "<redacted>") -> str:
    out, last = [], 0
    for span in found:
        out += [text[last:span.start], replacement]
        last = span.end
    return "".join(out) + text[last:]


URL_USERINFO = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://(?P<info>(?!git@)[^\s/@<>\"'`]+)@(?=[\w\[])")
_ASSIGNMENT = re.compile(r"(?:\$env:)?(?P<name>[A-Za-z_][A-Za-z0-9_.]*)=")  # dotted: `rd.luks.key=` on a cmdline
_POWERSHELL_NAME = re.compile(r"\$env:(?P<name>[A-Za-z_][A-Za-z0-9_]*)")
_OPTION = re.compile(r"--(?P<name>[A-Za-z][\w.-]*)(?:=|$)")
_USER_OPTION = re.compile(r"(?P<opt>-u|-U|--user|--proxy-user)(?:=|(?=[^-]))(?P<value>.+)")
_UID_GID = re.compile(r"\d+:\d+")
_NOT_A_PASSWORD = re.compile(r"[\d.:,/-]+|[/~.$<-].*")  # a port, `8080:80`, a number, a path, a reference
_BREAK = set(";&|()`\0")
_CANDIDATE = re.compile("(?i)" + "|".join(sorted(SECRET_PARTS | set(SECRET_INFIXES) | SECRET_NAMES, key=len,
                                                 reverse=True))
                        + r"|(?<![^\s\0])-[uUpa]|--user|--proxy-user")


def _lines(text: str):
    start = 0
    for match in re.finditer(r"\n", text):
        yield start, match.start()
        start = match.end()
    yield start, len(text)


def _command_spans(text: str, start: int, end: int, depth: int, words=None) -> list[Span]:
    words = _words(text, start, end) if words is None else words
    plain = [text[s:e] for s, e in words]
    programs = {_program(w) for w in plain}
    found: list[Span] = []
    for index, (w_start, w_end) in enumerate(words):
        word = plain[index]
        assignment, option, user = _secret_assignment(word), _OPTION.match(word), _USER_OPTION.fullmatch(word)
        value = None  # (start, end, kind) of the secret this word carries or introduces
        if assignment is not None:
            quoted = word[-1:] in ("'", '"') and word[-1] in word[:assignment]  # Environment="HF_TOKEN=…"
            value = (w_start + assignment, w_end - quoted, "assignment")
        elif option and secret_name(option.group("name")):
            value = (w_start + option.end(), w_end, "option") if "=" in word else _word(words, plain, index + 1,
                                                                                           "option")
        elif word in USER_OPTIONS:
            value = _word(words, plain, index + 1, "user-password")
        elif user and ":" in user.group("value"):
            value = (w_start + user.start("value"), w_end, "user-password")
        elif _names_variable(plain, index) and secret_name(word):
            value = _word(words, plain, index + 1, "assignment")
        elif _POWERSHELL_NAME.fullmatch(word) and secret_name(word[5:]) and plain[index + 1:index + 2] == ["="]:
            value = _word(words, plain, index + 2, "assignment")
        elif _NAME.fullmatch(word) and secret_name(word) and plain[index + 1:index + 2] == ["="]:
            value = _word(words, plain, index + 2, "assignment")  # `KEY = value` in an env file
        elif word == PASSWORD_SHORT or any(word == PROGRAM_SHORT.get(p) for p in programs):
            value = _word(words, plain, index + 1, "short-option")
        elif programs & ATTACHED_PROGRAMS and word.startswith(PASSWORD_SHORT) and len(word) > 2:
            value = (w_start + 2, w_end, "option")
        if value is not None and _is_secret(text[value[0]:value[1]], value[2]):
            found.append(Span(*_inner(text, value[0], value[1]), value[2]))
        body = _quoted_body(text, w_start, w_end)
        if depth < 2 and body is not None:  # an alias or `sh -c` body is a command line of its own
            found += _command_spans(text, body[0], body[1], depth + 1)
    return found


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _secret_assignment(word: str):
    """Where the value starts when `word` assigns a secret, also inside another assignment: a unit's
    `Environment=HF_TOKEN=…`, `"Environment=A=1"`; None otherwise."""
    offset = 1 if word[:1] in "'\"" else 0
    while True:
        match = _ASSIGNMENT.match(word, offset)
        if match is None:
            return None
        if secret_name(match.group("name")):
            return match.end()
        quote = word[match.end():match.end() + 1] in ("'", '"')
        if quote and match.group("name") != "Environment":  # a quoted value is read again as a line of its own
            return None
        offset = match.end() + quote


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1].lower()


def _word(words: list[tuple[int, int]], plain: list[str], index: int, kind: str):
    """Word `index` as the value of an option or a name before it; an option after an option is no value."""
    if index >= len(words) or plain[index].startswith("-"):
        return None
    return (*words[index], kind)


def _is_secret(raw: str, kind: str) -> bool:
    if not raw or _reference(raw):
        return False
    if kind == "user-password":
        return ":" in raw and not _UID_GID.fullmatch(_unquoted(raw))  # `docker run -u 1000:1000` is no password
    if kind == "short-option":
        return not _NOT_A_PASSWORD.fullmatch(_unquoted(raw))
    return True


def _names_variable(plain: list[str], index: int) -> bool:
    """Whether word `index` is the name in `setx NAME value`, cmd's `set NAME value` or fish's `set -gx NAME value`."""
    j = index - 1
    while j >= 0 and plain[j].startswith("-"):
        j -= 1
    return j >= 0 and plain[j].lower() in ("set", "setx") and "=" not in plain[index] and index + 1 < len(plain)


def _quoted_body(text: str, start: int, end: int):
    """The inside of a word that is (or whose value after `=` is) one quoted string."""
    equals = text.find("=", start, end)
    if equals >= 0 and text[start] not in "'\"":
        start = equals + 1
    if end - start > 2 and text[start] in "'\"" and text[end - 1] == text[start]:
        return start + 1, end - 1
    return None


def _reference(value: str) -> bool:
    """A value that names where a secret is rather than being one: `$VAR`, `${VAR}`, `$(cmd)`, a placeholder."""
    plain = _unquoted(value).strip()
    return not plain or plain.startswith(("$(", "`")) or bool(
        re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>]*>", plain))


def _inner(text: str, start: int, end: int) -> tuple[int, int]:
    """A value's span without the quotes around it, so `'…'` stays quoted around the placeholder."""
    if end - start >= 3 and text.startswith("$'", start) and text[end - 1] == "'":
        return start + 2, end - 1
    if end - start >= 2 and text[start] == text[end - 1] and text[start] in "'\"":
        return start + 1, end - 1
    return start, end


def _unquoted(word: str) -> str:
    return re.sub(r"\\(.)", r"\1", word.replace("$'", "'")).replace("'", "").replace('"', "")


def _words(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The shell words of text[start:end] as spans; an unclosed quote runs to the end of the line."""
    words, i = [], start
    while i < end:
        if text[i].isspace() or text[i] in _BREAK:
            i += 1
            continue
        w_start = i
        while i < end and not text[i].isspace() and text[i] not in _BREAK:
            if text[i] == "\\":
                i += 2
            elif text.startswith("$'", i):
                i = _closing(text, i + 2, end, "'", escapes=True)
            elif text.startswith("$(", i):
                i = _closing(text, i + 2, end, ")", escapes=True)
            elif text[i] == "'":
                i = _closing(text, i + 1, end, "'", escapes=False)
            elif text[i] == '"':
                i = _closing(text, i + 1, end, '"', escapes=True)
            else:
                i += 1
        words.append((w_start, min(i, end)))
    return words


def _closing(text: str, i: int, end: int, quote: str, escapes: bool) -> int:
    while i < end and text[i] != quote:
        i += 2 if escapes and text[i] == "\\" else 1
    return min(i + 1, end)


def _merge(found: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for span in sorted(set(found)):
        if span.end <= span.start:
            continue
        if merged and span.start < merged[-1].end:
            if span.end > merged[-1].end:
                merged[-1] = Span(merged[-1].start, span.end, merged[-1].kind)
            continue
        merged.append(span)
    return merged
