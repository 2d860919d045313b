"""What each plan step would change on this machine: the target, the current value and the new one.

The same computation serves `--dry-run` (shown, nothing touched) and apply (written, journalled). User-scope
environment changes persist in the rc file's managed block on Linux/WSL/macOS and in HKCU\\Environment on Windows;
a service's in rocm-doctor's systemd drop-in, a kernel's in its kernel.json; process and machine scope, group
membership and installers are print-only; pip runs only with --allow-install.
Previews of several steps touching one file are cumulative (an overlay stands in for the writes not yet made).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from rocm_doctor.engine import steps as S
from rocm_doctor.engine import shells
from rocm_doctor.fix import dropin, kerneljson, pathlist, rcfile
from rocm_doctor.engine.plan import PlanItem
from rocm_doctor.fix.regvalue import REG_EXPAND_SZ, REG_SZ, RegValue
from rocm_doctor.fix.winenv import LOCATION, EnvRegistry

# What fix will do with a step.
APPLY = "apply"
ALREADY = "already-applied"
NEEDS_FLAG = "needs-flag"
PRINT = "print-only"

ROOT_HINT = "re-run with sudo -E (-E keeps your shell's variables, which the plan compares)"


@dataclass
class Context:
    """Where fix runs: OS family, shell, home folder, the diagnosed environment, the registry seam (Windows)."""

    os: str
    shell: str
    home: Path
    env: dict
    registry: Optional[EnvRegistry] = None
    allow_install: bool = False
    installed: dict = field(default_factory=dict)  # package -> version, for display
    target_env: dict = field(default_factory=dict)  # the service's or kernel's environment, with --unit / --kernel

    @property
    def windows(self) -> bool:
        return self.os == "windows"

    @property
    def sep(self) -> str:
        return pathlist.separator_for(self.os)

    @property
    def rc_shell(self) -> str:
        return self.shell if self.shell in ("bash", "zsh", "fish", "sh") else "sh"

    def rc_path(self) -> Path:
        return rcfile.rc_path(self.rc_shell, self.home, self.env, self.os)

    def expand(self, path: str) -> Path:
        return self.home / path[2:] if path.startswith("~/") else Path(path)

    def show_path(self, path: Path) -> str:
        try:
            return "~/" + path.relative_to(self.home).as_posix()
        except ValueError:
            return str(path)


@dataclass
class FileWrite:
    path: Path
    old: Optional[bytes]  # None: the file does not exist yet
    new: bytes
    old_code: Optional[str]
    new_code: str
    kind: str = "rc-file"  # rc-file, drop-in or kernel.json
    needs_root: bool = False  # a system unit's drop-in

    def to_dict(self, ctx: Context) -> dict:
        return {"type": self.kind, "path": str(self.path), "display": ctx.show_path(self.path),
                "old": self.old_code, "new": self.new_code, "new_file": self.old is None}


def write_problem(write: FileWrite, ctx: Context) -> Optional[str]:
    """Why `write` would fail (one line), None when it can be made."""
    try:
        rcfile.check_writable(write.path, ctx.home if write.kind == "rc-file" else None)
    except rcfile.RcFileError as exc:
        if write.needs_root and hasattr(os, "geteuid") and os.geteuid() != 0:
            return f"writing {write.path} needs root; nothing was changed: {ROOT_HINT}"
        return str(exc)
    return None


@dataclass
class RegistryWrite:
    name: str
    old: Optional[RegValue]
    new: Optional[RegValue]  # None: delete the value

    def to_dict(self, ctx: Context) -> dict:
        return {"type": "registry", "location": f"{LOCATION}\\{self.name}",
                "old": self.old.to_dict() if self.old else None, "new": self.new.to_dict() if self.new else None}


@dataclass
class CommandRun:
    argv: list

    def to_dict(self, ctx: Context) -> dict:
        return {"type": "command", "argv": list(self.argv)}


Write = Union[FileWrite, RegistryWrite, CommandRun]


@dataclass
class Preview:
    item: PlanItem
    action: str
    why: str = ""  # why print-only / needs a flag / cannot persist
    error: str = ""  # the target cannot be read or changed (apply refuses the plan)
    variable: Optional[str] = None
    env_old: Optional[str] = None
    env_new: Optional[str] = None
    write: Optional[Write] = None
    session: list = field(default_factory=list)  # commands for the running shell
    manual: list = field(default_factory=list)  # commands to do it by hand, each whole and runnable
    instructions: list = field(default_factory=list)  # what to do by hand that is no command (edit a file)

    @property
    def step(self) -> S.Step:
        return self.item.step

    def to_dict(self, ctx: Context) -> dict[str, Any]:
        out = self.item.to_dict()
        out.update({"action": self.action, "why": self.why, "after": self.step.after,
                    "session_commands": list(self.session), "manual_commands": list(self.manual),
                    "manual_instructions": list(self.instructions)})
        if self.variable:
            out["variable"] = {"name": self.variable, "current": self.env_old, "new": self.env_new}
        out["change"] = self.write.to_dict(ctx) if self.write else None
        return out


class State:
    """Reads the current rc files and registry values, overlaid with writes previewed but not made."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.files: dict[Path, Optional[bytes]] = {}
        self.reg: dict[str, Optional[RegValue]] = {}

    def read_file(self, path: Path) -> Optional[bytes]:
        return self.files[path] if path in self.files else rcfile.read(path)

    def read_reg(self, name: str) -> Optional[RegValue]:
        key = name.lower()
        if key in self.reg:
            return self.reg[key]
        return self.ctx.registry.get(name) if self.ctx.registry is not None else None

    def record(self, write: Optional[Write]) -> None:
        if isinstance(write, FileWrite):
            self.files[write.path] = write.new
        elif isinstance(write, RegistryWrite):
            self.reg[write.name.lower()] = write.new


def env_after(step: S.Step, env: dict, ctx: Context) -> dict:
    """`env` with the step's effect on the environment of a new shell."""
    out = dict(env)
    if isinstance(step, S.SetEnv):
        out[step.name] = step.value
    elif isinstance(step, S.UnsetEnv):
        out.pop(step.name, None)
    elif isinstance(step, (S.PathPrepend, S.PathRemove)):
        name = _env_key(out, step.name, ctx.windows)
        op = pathlist.prepend if isinstance(step, S.PathPrepend) else pathlist.remove
        out[name] = op(out.get(name), step.entry, ctx.sep, ctx.windows)
    return out


def _env_key(env: dict, name: str, windows: bool) -> str:
    if windows:
        for key in env:
            if key.lower() == name.lower():
                return key
    return name


def preview(item: PlanItem, ctx: Context, state: State) -> Preview:
    step = item.step
    if isinstance(step, (S.SetEnv, S.UnsetEnv, S.PathPrepend, S.PathRemove)):
        return _preview_env(item, step, ctx, state)
    if isinstance(step, (S.UnitEnv, S.KernelEnv)):
        return _preview_program(item, step, ctx, state)
    if isinstance(step, S.PipInstall):
        result = Preview(item, APPLY if ctx.allow_install else NEEDS_FLAG, why="" if ctx.allow_install else step.why_manual)
        result.write = CommandRun(step.argv())
        result.manual = shells.print_lines(step, ctx.shell)
        wanted = [p for p in step.packages if p.split("=")[0].split("<")[0].split(">")[0] in ctx.installed]
        if wanted:
            name = wanted[0].split("=")[0]
            result.variable = name
            result.env_old = f"{name} {ctx.installed[name]}"
            result.env_new = f"{' '.join(step.packages)}" + (f" from {step.index_url}" if step.index_url else "")
        return result
    return Preview(item, PRINT, why=step.why_manual, manual=shells.print_lines(step, ctx.shell))


def _preview_env(item: PlanItem, step: S._EnvStep, ctx: Context, state: State) -> Preview:
    name = step.name
    old = ctx.env.get(_env_key(ctx.env, name, ctx.windows))
    new = env_after(step, ctx.env, ctx).get(_env_key(ctx.env, name, ctx.windows))
    result = Preview(item, APPLY, variable=name, env_old=old, env_new=new)
    result.session = shells.session_lines(step, ctx.shell, new)
    if step.scope != "user":
        result.action = ALREADY if step.scope == "process" and old == new else PRINT
        result.why = step.why_manual
        if step.scope == "process":
            result.manual = list(result.session)
        else:
            result.manual, result.instructions = _machine_lines(step, ctx, new)
        return result
    if ctx.windows:
        return _preview_registry(result, step, ctx, state)
    return _preview_rc(result, step, ctx, state)


def _preview_rc(result: Preview, step: S._EnvStep, ctx: Context, state: State) -> Preview:
    path = ctx.rc_path()
    old_bytes = state.read_file(path)
    text = rcfile.decode(old_bytes or b"")
    key, code = shells.rc_key(step), shells.rc_code(step, ctx.rc_shell)
    old_code = rcfile.code_for(text, key)
    new_text = rcfile.with_entry(text, key, code)
    result.write = FileWrite(path, old_bytes, rcfile.encode(new_text), old_code, code)
    result.instructions = [f"add to {ctx.show_path(path)}: {code}"]
    if old_code == code:
        result.action = ALREADY
    return result


def _preview_program(item: PlanItem, step: S.Step, ctx: Context, state: State) -> Preview:
    """A service's drop-in or a kernel's kernel.json, previewed and written like the rc file."""
    path, unit = ctx.expand(step.path), isinstance(step, S.UnitEnv)
    old = state.read_file(path)
    if unit:
        text = rcfile.decode(old or b"")
        new, old_code = rcfile.encode(dropin.with_line(text, step.name, step.line())), dropin.current(text, step.name)
    elif old is None:
        raise rcfile.RcFileError(f"{path} does not exist; nothing was changed")
    else:
        new, old_code = kerneljson.with_env(old, path, step.name, step.value), kerneljson.current(old, path, step.name)
    new_code = step.line() if unit else step.entry()
    result = Preview(item, APPLY, variable=step.name, env_old=ctx.target_env.get(step.name), env_new=step.value)
    result.write = FileWrite(path, old, new, old_code, new_code, kind="drop-in" if unit else "kernel.json",
                             needs_root=unit and not step.user)
    result.instructions = [f"in {ctx.show_path(path)}: {new_code}"]
    problem = write_problem(result.write, ctx) if old != new else None
    if old == new:
        result.action = ALREADY
    elif problem:
        result.why = f"needs root: {ROOT_HINT}" if ROOT_HINT in problem else problem
    return result


def _preview_registry(result: Preview, step: S._EnvStep, ctx: Context, state: State) -> Preview:
    if ctx.registry is None:  # e.g. previewing a Windows snapshot elsewhere: show how to do it by hand
        result.action = PRINT
        result.why = "the Windows registry is not reachable from here"
        result.manual, result.instructions = _registry_manual(step, ctx, None)
        return result
    current = state.read_reg(step.name)
    new = _registry_new(step, current, ctx)
    result.write = RegistryWrite(step.name, current, new)
    result.manual, result.instructions = _registry_manual(step, ctx, new)
    if current == new:
        result.action = ALREADY
    return result


def _registry_new(step: S._EnvStep, current: Optional[RegValue], ctx: Context) -> Optional[RegValue]:
    if isinstance(step, S.UnsetEnv):
        return None
    if isinstance(step, S.SetEnv):
        kind = current.type if current else (REG_EXPAND_SZ if "%" in step.value else REG_SZ)
        return RegValue(step.value, kind)
    op = pathlist.prepend if isinstance(step, S.PathPrepend) else pathlist.remove
    if current is None and isinstance(step, S.PathRemove):
        return None
    value = op(current.value if current else None, step.entry, ";", True)
    return RegValue(value, current.type if current else REG_EXPAND_SZ)


def _registry_manual(step: S._EnvStep, ctx: Context, new: Optional[RegValue]) -> tuple[list[str], list[str]]:
    """(commands, instructions) that make the registry change by hand."""
    shell = ctx.shell if ctx.shell in ("powershell", "cmd") else "powershell"
    if isinstance(step, S.SetEnv):
        return shells.registry_lines(shell, "user", step.name, step.value, "%" in step.value), []
    if isinstance(step, S.UnsetEnv):
        return shells.registry_lines(shell, "user", step.name, None, False), []
    if new is None:
        return [], [f"edit {step.name} in System Properties > Environment Variables (user) and "
                    f"{'put ' + step.entry + ' first' if isinstance(step, S.PathPrepend) else 'remove ' + step.entry}"]
    return shells.registry_lines(shell, "user", step.name, new.value, new.type == REG_EXPAND_SZ), []


def _machine_lines(step: S._EnvStep, ctx: Context, new: Optional[str]) -> tuple[list[str], list[str]]:
    """(commands, instructions) that make a machine-wide change by hand."""
    if ctx.windows:
        shell = ctx.shell if ctx.shell in ("powershell", "cmd") else "powershell"
        return shells.registry_step_lines(step, shell, "machine"), ["run these as administrator"]
    if isinstance(step, S.SetEnv):
        return [f"echo {shells.quote('sh', f'{step.name}={step.value}')} | sudo tee -a /etc/environment"], []
    if isinstance(step, S.UnsetEnv):
        return [f"sudo sed -i '/^{step.name}=/d' /etc/environment"], []
    return [], [f"edit {step.name} in /etc/environment as root so that it reads: {new or ''}"]


def preview_all(items: list[PlanItem], ctx: Context) -> list[Preview]:
    """Previews of every item, cumulative over shared files and registry values; touches nothing."""
    state = State(ctx)
    out = []
    for item in items:
        try:
            result = preview(item, ctx, state)
        except rcfile.RcFileError as exc:
            result = Preview(item, PRINT, why=str(exc), error=str(exc))
        state.record(result.write if result.action == APPLY else None)
        out.append(result)
    return out
