"""Fix steps as data: what a finding's remedy changes, not code that changes it.

Checks build steps with the constructors at the bottom (`set_env`, `path_prepend`, `pip_install`, ...) and attach
them to findings; `rocm-doctor fix` renders, applies, journals and undoes them. A step is a dataclass with a
`kind` discriminator and round-trips through JSON (`to_dict` / `step_from_dict`), so plans survive `--json`,
snapshots and the verification child. How a step may be applied (automatically, only with an explicit flag, or
only printed) and what it takes to take effect (a new shell, a re-login, a reboot) are derived from the step, never
read back from JSON: a report file cannot turn a sudo command into an automatic one.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, Sequence, Union

# How a step can be applied.
AUTO = "auto"  # `fix` applies it after confirmation
FLAG = "flag"  # applied only when the user passes `Step.flag` (e.g. --allow-install: it downloads)
PRINT = "print-only"  # needs sudo/administrator or is interactive: `fix` prints the command

# What the user must do before the change is visible.
AFTER_NOTHING = "nothing"
AFTER_NEW_SHELL = "new-shell"
AFTER_RELOGIN = "relogin"
AFTER_REBOOT = "reboot"

SCOPES = ("process", "user", "machine")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class StepError(ValueError):
    """A step was built or loaded with invalid fields."""


@dataclass
class Step:
    """Base of every step. `note` is one line saying why, shown in the plan."""

    kind: ClassVar[str] = ""
    note: str = ""

    @property
    def mode(self) -> str:
        return AUTO

    @property
    def flag(self) -> Optional[str]:
        """The CLI flag that unlocks a FLAG step."""
        return None

    @property
    def why_manual(self) -> str:
        """Why a PRINT/FLAG step is not applied automatically (empty for AUTO)."""
        return ""

    @property
    def after(self) -> str:
        return AFTER_NOTHING

    def summary(self) -> str:  # pragma: no cover - every kind overrides it
        return self.kind

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, (list, tuple)) else value
        out["apply"] = self.mode
        if self.flag:
            out["flag"] = self.flag
        out["after"] = self.after
        return out


@dataclass
class _EnvStep(Step):
    name: str = ""
    scope: str = "user"

    def __post_init__(self) -> None:
        if not _NAME.match(self.name or ""):
            raise StepError(f"not an environment variable name: {self.name!r}")
        if self.scope not in SCOPES:
            raise StepError(f"scope must be one of {', '.join(SCOPES)}, not {self.scope!r}")

    @property
    def mode(self) -> str:
        # process scope lives only in the user's running shell: we can only print it. machine scope needs root/admin.
        return AUTO if self.scope == "user" else PRINT

    @property
    def why_manual(self) -> str:
        if self.scope == "process":
            return "applies to your running shell only; run it there"
        if self.scope == "machine":
            return "machine-wide: needs sudo/administrator"
        return ""

    @property
    def after(self) -> str:
        return AFTER_NOTHING if self.scope == "process" else AFTER_NEW_SHELL


@dataclass
class SetEnv(_EnvStep):
    kind: ClassVar[str] = "set_env"
    value: str = ""

    def summary(self) -> str:
        return f"set {self.name}={self.value} ({self.scope})"


@dataclass
class UnsetEnv(_EnvStep):
    kind: ClassVar[str] = "unset_env"

    def summary(self) -> str:
        return f"unset {self.name} ({self.scope})"


@dataclass
class _PathStep(_EnvStep):
    name: str = "PATH"
    entry: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.entry or any(sep in self.entry for sep in ("\n", "\r", "\0")):
            raise StepError(f"not a path entry: {self.entry!r}")


@dataclass
class PathPrepend(_PathStep):
    """Put `entry` first in a list variable (PATH, LD_LIBRARY_PATH, ...); other entries keep their order."""

    kind: ClassVar[str] = "path_prepend"

    def summary(self) -> str:
        return f"put {self.entry} first in {self.name} ({self.scope})"


@dataclass
class PathRemove(_PathStep):
    """Drop every occurrence of `entry` from a list variable; other entries keep their order."""

    kind: ClassVar[str] = "path_remove"

    def summary(self) -> str:
        return f"remove {self.entry} from {self.name} ({self.scope})"


@dataclass
class PipInstall(Step):
    """`<python> -m pip install ...` in the target interpreter (never the doctor's own, unless that is the target)."""

    kind: ClassVar[str] = "pip_install"
    python: str = ""
    packages: list = field(default_factory=list)
    index_url: Optional[str] = None
    extra_args: list = field(default_factory=list)
    installer: str = "pip"  # uv: an environment uv made has no pip, `uv pip install --python` installs into it

    def __post_init__(self) -> None:
        if not self.python or not self.packages:
            raise StepError("pip_install needs an interpreter and at least one package")
        self.packages = [str(p) for p in self.packages]
        self.extra_args = [str(a) for a in self.extra_args]

    @property
    def mode(self) -> str:
        return FLAG

    @property
    def flag(self) -> Optional[str]:
        return "--allow-install"

    @property
    def why_manual(self) -> str:
        return "downloads packages"

    def argv(self) -> list[str]:
        head = ["uv", "pip", "install", "--python", self.python] if self.installer == "uv" else [self.python, "-m", "pip", "install"]
        argv = [*head, *self.extra_args, *self.packages]
        if self.index_url:
            argv += ["--index-url", self.index_url]
        return argv

    def summary(self) -> str:
        where = f" from {self.index_url}" if self.index_url else ""
        return f"install {' '.join(self.packages)}{where} into {self.python}"


@dataclass
class AddUserToGroup(Step):
    """Linux group membership for GPU device nodes; needs sudo and a re-login, so it is printed only."""

    kind: ClassVar[str] = "add_user_to_group"
    groups: list = field(default_factory=lambda: ["render", "video"])
    user: str = "$USER"

    @property
    def mode(self) -> str:
        return PRINT

    @property
    def why_manual(self) -> str:
        return "needs sudo"

    @property
    def after(self) -> str:
        return AFTER_RELOGIN

    def argv(self) -> list[str]:
        return ["sudo", "usermod", "-aG", ",".join(self.groups), self.user]

    def summary(self) -> str:
        return f"add {self.user} to the groups {', '.join(self.groups)}"


VS_INSTALLER = r"C:\Program Files (x86)\Microsoft Visual Studio\Installer\setup.exe"


@dataclass
class VsComponent(Step):
    """Add Visual Studio / Build Tools components with the VS installer; needs administrator and a download."""

    kind: ClassVar[str] = "vs_component"
    components: list = field(default_factory=list)
    install_path: Optional[str] = None
    installer: str = VS_INSTALLER

    def __post_init__(self) -> None:
        if not self.components:
            raise StepError("vs_component needs at least one component id")

    @property
    def mode(self) -> str:
        return PRINT

    @property
    def why_manual(self) -> str:
        return "needs administrator and downloads components"

    @property
    def after(self) -> str:
        return AFTER_NEW_SHELL

    def argv(self) -> list[str]:
        argv = [self.installer, "modify"]
        if self.install_path:
            argv += ["--installPath", self.install_path]
        for component in self.components:
            argv += ["--add", component]
        return argv + ["--passive", "--norestart"]

    def summary(self) -> str:
        return f"add Visual Studio component(s) {', '.join(self.components)}"


@dataclass
class RunCommand(Step):
    """Any other command the user should run; always printed, never run by `fix`."""

    kind: ClassVar[str] = "run_command"
    argv_: list = field(default_factory=list)
    description: str = ""
    needs_admin: bool = False
    then: str = AFTER_NOTHING

    def __post_init__(self) -> None:
        if not self.argv_:
            raise StepError("run_command needs a command")
        if self.then not in (AFTER_NOTHING, AFTER_NEW_SHELL, AFTER_RELOGIN, AFTER_REBOOT):
            raise StepError(f"unknown 'then': {self.then!r}")

    @property
    def mode(self) -> str:
        return PRINT

    @property
    def why_manual(self) -> str:
        return "needs sudo/administrator" if self.needs_admin else "run it yourself"

    @property
    def after(self) -> str:
        return self.then

    def argv(self) -> list[str]:
        return [str(a) for a in self.argv_]

    def summary(self) -> str:
        return self.description or " ".join(self.argv())

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["argv"] = out.pop("argv_")
        return out


@dataclass
class Advice(Step):
    """Something only the user can do that is no command (enrol a key in the firmware, pick a driver in a UI)."""

    kind: ClassVar[str] = "advice"
    text: str = ""

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise StepError("advice needs a text")

    @property
    def mode(self) -> str:
        return PRINT

    @property
    def why_manual(self) -> str:
        return "only you can do this"

    def summary(self) -> str:
        return self.text


KINDS: dict[str, type[Step]] = {
    cls.kind: cls
    for cls in (SetEnv, UnsetEnv, PathPrepend, PathRemove, PipInstall, AddUserToGroup, VsComponent, RunCommand, Advice)
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
