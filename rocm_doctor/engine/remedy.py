"""A finding's remedy: the steps a check attaches, built with the constructors here (`set_env`, `path_prepend`,
`pip_install`, ...), the alternatives it names, and both read back from a report's JSON (`step_from_dict`,
`steps_from_raw`). The step kinds themselves are rocm_doctor/engine/steps.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from rocm_doctor.engine.steps import (Advice, AddUserToGroup, KernelEnv, PathPrepend, PathRemove, PipInstall,
                                      RunCommand, SetEnv, Step, StepError, UnitEnv, UnsetEnv, VsComponent)
# The values of run_command's `then` (what it takes before the change is visible), named here for check authors.
from rocm_doctor.engine.steps import AFTER_NEW_SHELL, AFTER_NOTHING, AFTER_REBOOT, AFTER_RELOGIN  # noqa: F401

KINDS: dict[str, type[Step]] = {
    cls.kind: cls
    for cls in (SetEnv, UnsetEnv, PathPrepend, PathRemove, PipInstall, AddUserToGroup, VsComponent, RunCommand, Advice,
                UnitEnv, KernelEnv)
}
_DERIVED = {"kind", "apply", "flag", "after"}


def step_from_dict(raw: dict[str, Any]) -> Step:
    """Rebuild a step from its JSON form; raises StepError for an unknown kind or bad fields."""
    if not isinstance(raw, dict) or raw.get("kind") not in KINDS:
        raise StepError(f"unknown fix step kind: {raw.get('kind') if isinstance(raw, dict) else raw!r}")
    cls = KINDS[raw["kind"]]
    values = {k: v for k, v in raw.items() if k not in _DERIVED}
    if cls is RunCommand and "argv" in values:
        values["argv_"] = values.pop("argv")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(values) - known
    if unknown:
        raise StepError(f"{raw['kind']}: unknown field(s) {', '.join(sorted(unknown))}")
    try:
        return cls(**values)
    except TypeError as exc:
        raise StepError(f"{raw['kind']}: {exc}") from None


# ---- constructors for check authors -------------------------------------------------------------------------


def set_env(name: str, value: str, scope: str = "user", note: str = "") -> SetEnv:
    """Set NAME=value. scope: "user" (rc file / HKCU, applied by fix), "process" or "machine" (printed only)."""
    return SetEnv(name=name, value=str(value), scope=scope, note=note)


def unset_env(name: str, scope: str = "user", note: str = "") -> UnsetEnv:
    """Remove NAME in the given scope (user: a managed `unset` line in the rc file / delete from HKCU)."""
    return UnsetEnv(name=name, scope=scope, note=note)


def path_prepend(entry: str, variable: str = "PATH", scope: str = "user", note: str = "") -> PathPrepend:
    """Make `entry` the first entry of a list variable (PATH, LD_LIBRARY_PATH, ...)."""
    return PathPrepend(name=variable, entry=entry, scope=scope, note=note)


def path_remove(entry: str, variable: str = "PATH", scope: str = "user", note: str = "") -> PathRemove:
    """Remove every occurrence of `entry` from a list variable."""
    return PathRemove(name=variable, entry=entry, scope=scope, note=note)


def pip_install(
    python: str,
    packages: Union[str, Sequence[str]],
    index_url: Optional[str] = None,
    extra_args: Sequence[str] = (),
    note: str = "",
) -> PipInstall:
    """`<python> -m pip install [extra_args] packages [--index-url URL]`; applied only with --allow-install."""
    pkgs = packages.split() if isinstance(packages, str) else list(packages)
    return PipInstall(python=python, packages=pkgs, index_url=index_url, extra_args=list(extra_args), note=note)


def add_to_group(groups: Sequence[str] = ("render", "video"), user: str = "$USER", note: str = "") -> AddUserToGroup:
    """Print `sudo usermod -aG render,video $USER` (takes effect after logging out and in)."""
    return AddUserToGroup(groups=list(groups), user=user, note=note)


def vs_component(
    components: Union[str, Sequence[str]], install_path: Optional[str] = None, note: str = ""
) -> VsComponent:
    """Print `setup.exe modify [--installPath P] --add COMPONENT ...` for Visual Studio / Build Tools."""
    comps = [components] if isinstance(components, str) else list(components)
    return VsComponent(components=comps, install_path=install_path, note=note)


def run_command(
    argv: Sequence[str], description: str = "", needs_admin: bool = False, then: str = AFTER_NOTHING, note: str = ""
) -> RunCommand:
    """Print any other command (never run by fix). `then`: nothing, new-shell, relogin or reboot."""
    return RunCommand(argv_=list(argv), description=description, needs_admin=needs_admin, then=then, note=note)


def advice(text: str, note: str = "") -> Advice:
    """A step the user does by hand that no command expresses; shown in the plan, never applied."""
    return Advice(text=text, note=note)


def unit_env(unit: str, path: str, name: str, value: Optional[str], user: bool = False, note: str = "") -> UnitEnv:
    """Set NAME=value (value None: remove it) for a systemd unit, in rocm-doctor's drop-in `path`; fix writes it,
    the user reloads systemd and restarts the unit."""
    return UnitEnv(unit=unit, path=path, name=name, value=value, user=user, note=note)


def kernel_env(kernel: str, path: str, name: str, value: Optional[str], note: str = "") -> KernelEnv:
    """Set NAME=value (value None: remove it) in the "env" of a Jupyter kernel's kernel.json at `path`."""
    return KernelEnv(kernel=kernel, path=path, name=name, value=value, note=note)


@dataclass
class Alternative:
    """Another path to the same end: its steps, a label, and why the preferred path was chosen over it."""

    title: str
    steps: list = field(default_factory=list)
    why_not_first: str = ""
    workaround: bool = False  # it avoids the problem without removing its cause

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "why_not_first": self.why_not_first, "workaround": self.workaround,
                "steps": [step.to_dict() for step in self.steps]}


def alternative(title: str, *steps: Step, why_not_first: str = "", workaround: bool = False) -> Alternative:
    return Alternative(title=title, steps=list(steps), why_not_first=why_not_first, workaround=workaround)


def steps_from_raw(raw: Any) -> list:
    """Steps from JSON; a step this version does not know is dropped, not fatal (reports outlive versions)."""
    steps = []
    for item in raw if isinstance(raw, list) else []:
        try:
            steps.append(step_from_dict(item))
        except StepError:
            continue
    return steps


def alternatives_from_raw(raw: Any) -> list:
    return [Alternative(title=str(item.get("title") or ""), steps=steps_from_raw(item.get("steps")),
                        why_not_first=str(item.get("why_not_first") or ""), workaround=bool(item.get("workaround")))
            for item in (raw if isinstance(raw, list) else []) if isinstance(item, dict)]


def unset_where_set(name: str, in_rc_file: bool) -> list:
    """Unsetting a variable: in the running shell (printed), and in the user's persistent environment when a shell
    rc file sets it (a managed `unset` line / the HKCU value), so a new shell does not bring it back."""
    return [unset_env(name, scope="process")] + ([unset_env(name, scope="user")] if in_rc_file else [])
