"""The user's shell, and each step written as that shell's commands.

Detection reads the environment only: SHELL on Linux/WSL/macOS (and Git Bash/MSYS on Windows); on Windows a
PSModulePath that includes a per-user module folder means PowerShell, otherwise cmd (ComSpec). `--shell` overrides.
Two renderings per step: `session_lines` (type this to change the running shell now) and `rc_code` (the line kept
in the managed block of the rc file). Values are quoted for the target shell, never pasted raw.
It sits beside the steps so that checks, reporters and fix render a step the same way.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
import shlex
from typing import Mapping, Optional

from rocm_doctor.engine import steps as S

SHELLS = ("bash", "zsh", "fish", "sh", "powershell", "cmd")
ALIASES = {"pwsh": "powershell", "powershell.exe": "powershell", "pwsh.exe": "powershell", "cmd.exe": "cmd",
           "dash": "sh", "ksh": "sh", "mksh": "sh", "ash": "sh", "bash.exe": "bash"}


def normalise(name: str) -> Optional[str]:
    name = (name or "").strip().lower()
    name = ALIASES.get(name, name)
    return name if name in SHELLS else None


def detect_shell(env: Mapping[str, str], os_name: str) -> str:
    shell_var = env.get("SHELL", "")
    if shell_var:
        base = ntpath.basename(shell_var) if "\\" in shell_var else posixpath.basename(shell_var)
        found = normalise(base[:-4] if base.lower().endswith(".exe") else base)
        if found:
            return found
    if os_name == "windows":
        modules = env.get("PSModulePath", "")
        # PowerShell adds the user's Documents\...PowerShell\Modules folder; cmd sees only the machine-wide value.
        if modules and ("\\documents\\" in modules.lower() or modules.count(";") >= 2):
            return "powershell"
        return "cmd"
    return "sh"


# ---- quoting ---------------------------------------------------------------------------------------------------


def quote(shell: str, text: str) -> str:
    if shell == "powershell":
        return "'" + text.replace("'", "''") + "'"
    if shell == "cmd":
        return '"' + text.replace('"', '""') + '"' if any(c in text for c in ' &|<>^()"%!,;=') or not text else text
    if shell in ("bash", "zsh", "fish", "sh") and text.startswith("~/") and len(text) > 2:
        return "~/" + quote(shell, text[2:])  # a quoted ~ is not the home folder: a redacted path must still run
    if shell == "fish":
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return shlex.quote(text)


# Words PowerShell hands to a program as written; quoting one that starts with "-" would turn a script's parameter
# name (-Arch) into a plain argument.
_PS_BARE = re.compile(r"[A-Za-z0-9_./:\\+=-]+")


def command_line(shell: str, argv: list[str]) -> str:
    """argv as one line to paste into `shell`."""
    words = [a if shell == "powershell" and _PS_BARE.fullmatch(a) else quote(shell, a) for a in argv]
    if shell == "powershell" and words and words[0].startswith("'"):
        return "& " + " ".join(words)  # a quoted program path needs the call operator
    return " ".join(words)


# ---- session commands (the running shell) -----------------------------------------------------------------------


def session_lines(step: S.Step, shell: str, new_value: Optional[str] = None) -> list[str]:
    """Commands that make the change in the user's running shell. `new_value` is the computed list value (cmd)."""
    if isinstance(step, (S.PathPrepend, S.PathRemove)) and shell == "cmd":
        return [f'set "{step.name}={new_value or ""}"'] if new_value is not None else []
    if isinstance(step, (S.SetEnv, S.UnsetEnv, S.PathPrepend, S.PathRemove)):
        return [rc_code(step, shell)]
    return []


def rc_code(step: S.Step, shell: str) -> str:
    """The line kept in the managed block for a user-scope env step (POSIX shells and fish)."""
    if isinstance(step, S.SetEnv):
        return _set(shell, step.name, step.value)
    if isinstance(step, S.UnsetEnv):
        return _unset(shell, step.name)
    if isinstance(step, (S.PathPrepend, S.PathRemove)):
        return _path_code(shell, step.name, step.entry, isinstance(step, S.PathPrepend))
    raise ValueError(f"{step.kind} has no rc-file form")


def rc_key(step: S.Step) -> list:
    """Entries that must not coexist share a key: set/unset of a name; prepend/remove of one entry."""
    if isinstance(step, (S.PathPrepend, S.PathRemove)):
        return ["path", step.name, step.entry]
    return ["env", step.name]


# Per shell: how to set and unset a variable. {value} is quoted for that shell; cmd's `set "NAME=value"` takes
# the {raw} value, its own quotes already delimit it.
_ENV_LINES = {
    "fish": ("set -gx {name} {value}", "set -e {name}"),
    "powershell": ("$env:{name} = {value}", "Remove-Item Env:{name} -ErrorAction SilentlyContinue"),
    "cmd": ('set "{name}={raw}"', 'set "{name}="'),
}
_POSIX_ENV_LINES = ("export {name}={value}", "unset {name}")


def _set(shell: str, name: str, value: str) -> str:
    template = _ENV_LINES.get(shell, _POSIX_ENV_LINES)[0]
    return template.format(name=name, value=quote(shell, value), raw=value)


def _unset(shell: str, name: str) -> str:
    return _ENV_LINES.get(shell, _POSIX_ENV_LINES)[1].format(name=name)


def _path_code(shell: str, name: str, entry: str, prepend: bool) -> str:
    q = quote(shell, entry)
    if shell == "fish":
        head = f"set -l _rd {q}" if prepend else "set -l _rd"
        return f"{head}; for p in ${name}; test \"$p\" = {q}; or set -a _rd $p; end; set -gx {name} $_rd; set -e _rd"
    if shell == "powershell":
        if "%" in entry:  # a REG_EXPAND_SZ-style entry: the running shell needs it expanded
            q = f"[Environment]::ExpandEnvironmentVariables({q})"
        keep = f"@(${{env:{name}}} -split ';' | Where-Object {{ $_ -ne {q} }})"
        value = f"(@({q}) + {keep}) -join ';'" if prepend else f"{keep} -join ';'"
        return f"${{env:{name}}} = {value}"
    # POSIX sh, bash, zsh: drop every copy (exact match), then put the entry first; no empty entry is added.
    # Every expansion is quoted (no globbing or word splitting; the entry is literal in case and %%/# patterns).
    # `_rd` holds ":" + entries + ":", or a lone ":" for no entries, so a user's single empty entry (PATH=":/x")
    # survives the removal as "::" and is kept, as pathlist.py keeps it.
    drop = (
        f'_rd_e={q}; _rd=":${{{name}}}:"; [ -n "${{{name}}}" ] || _rd=:; '
        f'while case "$_rd" in *:"$_rd_e":*) true;; *) false;; esac; do '
        f'_rd="${{_rd%%:"$_rd_e":*}}:${{_rd#*:"$_rd_e":}}"; done; '
        f'if [ "$_rd" = : ]; then _rd_n=; else _rd_n=1; _rd="${{_rd#:}}"; _rd="${{_rd%:}}"; fi; '
    )
    value = '"$_rd_e${_rd_n:+:$_rd}"' if prepend else '"${_rd_n:+$_rd}"'
    return f"{drop}export {name}={value}; unset _rd _rd_e _rd_n"


# ---- manual commands (print-only steps, and doing it by hand) ---------------------------------------------------

HKCU_ENV = r"HKCU\Environment"
HKLM_ENV = r"HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment"


def registry_lines(shell: str, scope: str, name: str, value: Optional[str], expand: bool) -> list[str]:
    """Write (or delete, value None) a registry environment value by hand, keeping it expandable when it was."""
    key = HKCU_ENV if scope == "user" else HKLM_ENV
    if shell == "powershell":
        ps_key = "HKCU:\\Environment" if scope == "user" else "HKLM:\\" + HKLM_ENV[5:]
        if value is None:
            return [f"Remove-ItemProperty -Path {quote(shell, ps_key)} -Name {quote(shell, name)}"]
        kind = "ExpandString" if expand else "String"
        return [f"Set-ItemProperty -Path {quote(shell, ps_key)} -Name {quote(shell, name)} -Type {kind} "
                f"-Value {quote(shell, value)}"]
    if value is None:
        return [f'reg delete "{key}" /v {name} /f']
    kind = "REG_EXPAND_SZ" if expand else "REG_SZ"
    return [f'reg add "{key}" /v {name} /t {kind} /d {quote("cmd", value)} /f']


def registry_step_lines(step: S.Step, shell: str, scope: Optional[str] = None) -> list[str]:
    """An environment step done by hand on a registry Environment key (PowerShell or cmd): set or delete the value,
    or edit a list variable in place, read unexpanded and written back expandable, so the key's other entries and
    their %VARIABLES% stay as they were."""
    scope = scope or step.scope
    if isinstance(step, S.SetEnv):
        return registry_lines(shell, scope, step.name, step.value, "%" in step.value)
    if isinstance(step, S.UnsetEnv):
        return registry_lines(shell, scope, step.name, None, False)
    ps_key = quote("powershell", "HKCU:\\Environment" if scope == "user" else "HKLM:\\" + HKLM_ENV[5:])
    name, entry = quote("powershell", step.name), quote("powershell", step.entry)
    keep = f"@($raw -split ';' | Where-Object {{ $_ -and $_.TrimEnd('\\') -ne {entry}.TrimEnd('\\') }})"
    value = f"(@({entry}) + {keep}) -join ';'" if isinstance(step, S.PathPrepend) else f"{keep} -join ';'"
    script = (f"$raw = (Get-Item {ps_key}).GetValue({name}, '', 'DoNotExpandEnvironmentNames'); "
              f"Set-ItemProperty -Path {ps_key} -Name {name} -Type ExpandString -Value ({value})")
    # from cmd through PowerShell: the script holds single quotes only
    return [script] if shell == "powershell" else [f'powershell -NoProfile -Command "{script}"']


def print_lines(step: S.Step, shell: str) -> list[str]:
    """The command lines for a step fix does not run itself (pip without --allow-install, sudo, installers)."""
    argv = getattr(step, "argv", None)
    if callable(argv):
        words = argv()
        line = command_line(shell, words)
        if "$USER" in words:
            # $USER must expand in the user's shell, so leave it unquoted.
            line = line.replace(quote(shell, "$USER"), "$USER")
        return [line]
    return []
