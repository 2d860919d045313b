"""Remediation text for Windows findings, in PowerShell and cmd forms. Never `setx PATH` (it truncates at 1024
characters and writes the expanded Machine+User PATH into the User scope); PATH edits go through
[Environment]::SetEnvironmentVariable or the Settings UI. Pure."""

from __future__ import annotations

SETTINGS_UI = (
    "Settings UI: Start > type \"environment variables\" > \"Edit environment variables for your account\" "
    "(User) or \"Edit the system environment variables\" > Environment Variables... (Machine, needs admin)"
)
SCOPE_NOTE = {"User": "", "Machine": " (in an elevated PowerShell: Run as administrator)"}


def q(value: str) -> str:
    """A PowerShell single-quoted literal."""
    return "'" + str(value).replace("'", "''") + "'"


def ps_in_cmd(script: str) -> str:
    """Run a PowerShell one-liner from cmd (the script uses only single quotes)."""
    return f'powershell -NoProfile -Command "{script}"'


def scope_name(scope: str) -> str:
    return "Machine" if scope.lower() == "machine" else "User"


def set_var(name: str, value: str, scope: str = "user") -> list[str]:
    scope = scope_name(scope)
    script = f"[Environment]::SetEnvironmentVariable({q(name)}, {q(value)}, {q(scope)})"
    return [f"PowerShell{SCOPE_NOTE[scope]}: {script}", f"cmd{' (as administrator)' if scope == 'Machine' else ''}: {ps_in_cmd(script)}"]


def unset_var(name: str, scope: str = "user") -> list[str]:
    scope = scope_name(scope)
    script = f"[Environment]::SetEnvironmentVariable({q(name)}, $null, {q(scope)})"
    return [f"PowerShell{SCOPE_NOTE[scope]}: {script}", f"cmd{' (as administrator)' if scope == 'Machine' else ''}: {ps_in_cmd(script)}"]


def unset_in_shell(name: str) -> list[str]:
    return [f"PowerShell (this window only): Remove-Item Env:{name}", f"cmd (this window only): set {name}="]


def set_in_shell(name: str, value: str) -> list[str]:
    return [f"PowerShell (this window only): $env:{name} = {q(value)}", f"cmd (this window only): set {name}={value}"]


def _read_raw_path(scope: str) -> str:
    hive = "HKLM:\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment" if scope == "Machine" else "HKCU:\\Environment"
    return f"$raw = (Get-Item {q(hive)}).GetValue('Path', '', 'DoNotExpandEnvironmentNames')"


def remove_path_entries(entries: list[str], scope: str = "user") -> list[str]:
    """Remove folders from the User (or Machine) PATH, keeping every other entry as written."""
    scope = scope_name(scope)
    drop = ", ".join(q(e.rstrip("\\").lower()) for e in entries)
    script = (
        f"{_read_raw_path(scope)}; $drop = @({drop}); "
        f"$new = ($raw -split ';' | Where-Object {{ $_ -and ($drop -notcontains $_.TrimEnd('\\').ToLower()) }}) -join ';'; "
        f"[Environment]::SetEnvironmentVariable('Path', $new, {q(scope)})"
    )
    return [
        f"PowerShell{SCOPE_NOTE[scope]}: {script}",
        f"cmd{' (as administrator)' if scope == 'Machine' else ''}: {ps_in_cmd(script)}",
        SETTINGS_UI,
    ]


def path_edit_advice() -> list[str]:
    return [
        "Never run `setx PATH ...`: setx cuts values at 1024 characters and `setx PATH \"%PATH%;...\"` also copies the "
        "Machine PATH into your User PATH.",
        "PowerShell: $raw = (Get-Item 'HKCU:\\Environment').GetValue('Path', '', 'DoNotExpandEnvironmentNames'); "
        "[Environment]::SetEnvironmentVariable('Path', $raw + ';C:\\new\\folder', 'User')",
        SETTINGS_UI,
    ]


def new_shell() -> str:
    return (
        "Open a new terminal. Programs started earlier (the terminal app itself, VS Code, Explorer-launched IDEs) keep "
        "the environment they started with: restart them, or sign out and back in."
    )
