"""Shell detection from the environment, and each step written as commands for that shell."""

import shutil
import subprocess

import pytest

from rocm_doctor.engine import shells
from rocm_doctor.engine import remedy as S

PS_USER = r"C:\Users\me\Documents\WindowsPowerShell\Modules;C:\Program Files\WindowsPowerShell\Modules;C:\WINDOWS\system32\WindowsPowerShell\v1.0\Modules"
PS_MACHINE = r"%ProgramFiles%\WindowsPowerShell\Modules;C:\WINDOWS\system32\WindowsPowerShell\v1.0\Modules"


@pytest.mark.parametrize("env,os_name,expected", [
    ({"SHELL": "/bin/bash"}, "linux", "bash"),
    ({"SHELL": "/usr/bin/zsh"}, "linux", "zsh"),
    ({"SHELL": "/usr/local/bin/fish"}, "macos", "fish"),
    ({"SHELL": "/bin/dash"}, "wsl", "sh"),
    ({}, "linux", "sh"),
    ({"PSModulePath": PS_USER, "ComSpec": r"C:\WINDOWS\system32\cmd.exe"}, "windows", "powershell"),
    ({"PSModulePath": PS_MACHINE, "ComSpec": r"C:\WINDOWS\system32\cmd.exe"}, "windows", "cmd"),
    ({"SHELL": r"C:\Program Files\Git\usr\bin\bash.exe", "PSModulePath": PS_USER}, "windows", "bash"),
])
def test_detect_shell(env, os_name, expected):
    assert shells.detect_shell(env, os_name) == expected


def test_normalise_aliases():
    assert shells.normalise("pwsh") == "powershell"
    assert shells.normalise("CMD.EXE") == "cmd"
    assert shells.normalise("tcsh") is None


VALUE = "it's a \"value\" with $HOME and %PATH%"


@pytest.mark.parametrize("shell,expected", [
    ("bash", "export A='it'\"'\"'s a \"value\" with $HOME and %PATH%'"),
    ("fish", "set -gx A 'it\\'s a \"value\" with $HOME and %PATH%'"),
    ("powershell", "$env:A = 'it''s a \"value\" with $HOME and %PATH%'"),
    ("cmd", 'set "A=it\'s a "value" with $HOME and %PATH%"'),
])
def test_set_env_is_quoted_for_the_shell(shell, expected):
    assert shells.session_lines(S.set_env("A", VALUE), shell) == [expected]


def test_unset_per_shell():
    step = S.unset_env("HSA_OVERRIDE_GFX_VERSION")
    assert shells.session_lines(step, "zsh") == ["unset HSA_OVERRIDE_GFX_VERSION"]
    assert shells.session_lines(step, "fish") == ["set -e HSA_OVERRIDE_GFX_VERSION"]
    assert shells.session_lines(step, "powershell") == ["Remove-Item Env:HSA_OVERRIDE_GFX_VERSION -ErrorAction SilentlyContinue"]
    assert shells.session_lines(step, "cmd") == ['set "HSA_OVERRIDE_GFX_VERSION="']


def test_bash_set_round_trips_through_a_real_shell():
    code = shells.rc_code(S.set_env("RD_T", VALUE), "bash")
    proc = subprocess.run(["bash", "-c", f"{code}\nprintf '%s' \"$RD_T\""], capture_output=True, text=True)
    assert proc.stdout == VALUE


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish not installed")
def test_fish_path_code_runs():  # pragma: no cover - only where fish exists
    code = shells.rc_code(S.path_prepend("/opt/rocm/bin"), "fish")
    proc = subprocess.run(["fish", "-c", f"{code}; echo $PATH[1]"], capture_output=True, text=True)
    assert proc.stdout.strip() == "/opt/rocm/bin"


def test_print_only_commands():
    assert shells.print_lines(S.add_to_group(), "bash") == ["sudo usermod -aG render,video $USER"]
    pip = S.pip_install("/home/me/my env/bin/python", "torch", "https://download.pytorch.org/whl/rocm6.4")
    assert shells.print_lines(pip, "bash") == [
        "'/home/me/my env/bin/python' -m pip install torch --index-url https://download.pytorch.org/whl/rocm6.4"]
    vs = S.vs_component("Microsoft.VisualStudio.Component.VC.Tools.x86.x64")
    line = shells.print_lines(vs, "powershell")[0]
    assert line.startswith("& 'C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\setup.exe' modify --add")
    script = S.run_command([r"C:\VS\Launch-VsDevShell.ps1", "-Arch", "amd64"])
    assert shells.print_lines(script, "powershell") == [r"C:\VS\Launch-VsDevShell.ps1 -Arch amd64"]
    install = S.run_command(["sudo", "amdgpu-install", "--usecase=wsl,rocm"])
    assert shells.print_lines(install, "powershell") == ["sudo amdgpu-install '--usecase=wsl,rocm'"]
    assert "--add" in line
    assert shells.print_lines(vs, "cmd")[0].startswith('"C:\\Program Files (x86)')


def test_registry_lines_keep_the_type_and_never_use_setx():
    ps = shells.registry_lines("powershell", "user", "Path", r"%USERPROFILE%\bin;C:\x", True)
    assert ps == [r"Set-ItemProperty -Path 'HKCU:\Environment' -Name 'Path' -Type ExpandString -Value '%USERPROFILE%\bin;C:\x'"]
    cmd = shells.registry_lines("cmd", "user", "Path", r"%USERPROFILE%\bin;C:\x", True)
    assert cmd == [r'reg add "HKCU\Environment" /v Path /t REG_EXPAND_SZ /d "%USERPROFILE%\bin;C:\x" /f']
    assert not any("setx" in line for line in ps + cmd)


def test_a_home_relative_path_stays_home_relative_when_quoted():
    """Redacted reports show the home folder as ~: the pasted command must still find the interpreter."""
    from rocm_doctor.engine.shells import command_line

    assert command_line("bash", ["~/venv/bin/python", "-m", "pip"]) == "~/venv/bin/python -m pip"
    assert command_line("zsh", ["~/my venv/python"]) == "~/'my venv/python'"
    assert command_line("powershell", ["~/venv/python"]) == "& '~/venv/python'"
