"""Windows path and environment-string helpers that work on any OS (ntpath, never os.path). Pure."""

from __future__ import annotations

import ntpath
import re
from typing import Iterable, Mapping, Optional

_VAR = re.compile(r"%([^%;=]+)%")


def norm(path: str) -> str:
    """Comparable form: backslashes, no trailing separator, case-folded (Windows paths are case-insensitive)."""
    text = (path or "").strip().strip('"')
    if not text:
        return ""
    text = ntpath.normpath(text.replace("/", "\\"))
    return ntpath.normcase(text).rstrip("\\") or text


def same(a: str, b: str) -> bool:
    return bool(a) and norm(a) == norm(b)


def is_under(path: str, folder: str) -> bool:
    p, f = norm(path), norm(folder)
    return bool(f) and (p == f or p.startswith(f + "\\"))


def join(*parts: str) -> str:
    return ntpath.join(*parts)


def dirname(path: str) -> str:
    return ntpath.dirname(path)


def basename(path: str) -> str:
    return ntpath.basename(path)


def split_path_var(value: Optional[str]) -> list[str]:
    """PATH-style list: split on ';', drop empty items and surrounding quotes, keep order and duplicates."""
    return [item.strip().strip('"') for item in (value or "").split(";") if item.strip().strip('"')]


def ci_get(mapping: Mapping[str, str], name: str) -> Optional[str]:
    """Case-insensitive lookup, as Windows environment names are."""
    if name in mapping:
        return mapping[name]
    upper = name.upper()
    for key, value in mapping.items():
        if key.upper() == upper:
            return value
    return None


def expand(value: str, *scopes: Mapping[str, str]) -> tuple[str, list[str]]:
    """Expand %NAME% like ExpandEnvironmentStrings; the first scope that has NAME wins (case-insensitive).

    Returns the expanded text and the names that could not be expanded (left as %NAME%, as Windows does).
    """
    unresolved: list[str] = []

    def repl(match: re.Match) -> str:
        name = match.group(1)
        for scope in scopes:
            found = ci_get(scope, name)
            if found is not None:
                return found
        unresolved.append(name)
        return match.group(0)

    return _VAR.sub(repl, value or ""), unresolved


def has_vars(value: str) -> bool:
    return bool(_VAR.search(value or ""))


def unique(items: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for item in items:
        key = norm(item)
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def system32(env) -> str:
    """The System32 folder of the Windows that `env` describes."""
    return join(ci_get(env, "SystemRoot") or ci_get(env, "windir") or r"C:\Windows", "System32")


def rocm_root(env) -> str:
    """Where the HIP SDK installs its versions."""
    return join(ci_get(env, "ProgramFiles") or r"C:\Program Files", "AMD", "ROCm")


def program_files_x86(env) -> str:
    return ci_get(env, "ProgramFiles(x86)") or r"C:\Program Files (x86)"


def vswhere_path(env) -> str:
    return join(program_files_x86(env), "Microsoft Visual Studio", "Installer", "vswhere.exe")


def kits_include(env) -> str:
    return join(program_files_x86(env), "Windows Kits", "10", "Include")
