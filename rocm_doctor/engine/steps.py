"""Fix steps as data: what a finding's remedy changes, not code that changes it.

A step is a dataclass with a `kind` discriminator and a JSON form (`to_dict`), so plans survive `--json`, snapshots
and the verification child; rocm_doctor/engine/remedy.py builds them for checks and reads them back. How a step
may be applied (automatically, only with an explicit flag, or only printed) and what it takes to take effect (a new
shell, a restart of the service, a re-login, a reboot) are derived from the step, never read back from JSON: a
report file cannot turn a sudo command into an automatic one. `rocm-doctor fix` renders, applies, journals and
undoes them.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

from rocm_doctor.parsers.systemd_env import quoted

# How a step can be applied.
AUTO = "auto"  # `fix` applies it after confirmation
FLAG = "flag"  # applied only when the user passes `Step.flag` (e.g. --allow-install: it downloads)
PRINT = "print-only"  # needs sudo/administrator or is interactive: `fix` prints the command

# What the user must do before the change is visible.
AFTER_NOTHING = "nothing"
AFTER_NEW_SHELL = "new-shell"
AFTER_RELOGIN = "relogin"
AFTER_REBOOT = "reboot"
AFTER_RESTART = "restart"  # a service or kernel reads its environment when it starts

SCOPES = ("process", "user", "machine")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNIT = re.compile(r"^[A-Za-z0-9:_\\@][A-Za-z0-9:_.\\@-]*$")  # systemd's unit name characters
DROPIN = "rocm-doctor.conf"  # the drop-in fix owns in a unit's <unit>.d folder


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


@dataclass
class _ProgramEnvStep(Step):
    """Set (`value`) or remove (value None) one variable in the settings file `path` of a program that reads no
    shell rc file (a systemd service, a Jupyter kernel); it takes effect when that program starts again."""

    name: str = ""
    value: Optional[str] = None
    path: str = ""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name or ""):
            raise StepError(f"not an environment variable name: {self.name!r}")
        if self.value is not None and "\0" in str(self.value):
            raise StepError(f"{self.name}: a value cannot hold a NUL character")
        self.value = None if self.value is None else str(self.value)
        if not self.path or any(c in self.path for c in "\0\n\r"):
            raise StepError(f"not a file path: {self.path!r}")

    @property
    def after(self) -> str:
        return AFTER_RESTART

    def _change(self) -> str:
        return f"set {self.name}={self.value}" if self.value is not None else f"unset {self.name}"


@dataclass
class UnitEnv(_ProgramEnvStep):
    """The variable in rocm-doctor's drop-in of a systemd unit (`path`: <folder>/<unit>.d/rocm-doctor.conf, under
    /etc/systemd/system, or the user's systemd/user folder for a user unit)."""

    kind: ClassVar[str] = "unit_env"
    unit: str = ""
    user: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if not _UNIT.match(self.unit or ""):
            raise StepError(f"not a systemd unit name: {self.unit!r}")
        if not self.path.startswith(("/", "~/")) or not self.path.endswith(f"/{self.unit}.d/{DROPIN}"):
            raise StepError(f"a drop-in of {self.unit} is <folder>/{self.unit}.d/{DROPIN}, not {self.path!r}")
        self.user = bool(self.user)

    def line(self) -> str:
        """The drop-in's line under [Service], quoted as systemd reads it."""
        if self.value is None:
            return f"UnsetEnvironment={self.name}"
        return "Environment=" + quoted(f"{self.name}={self.value}")

    def summary(self) -> str:
        return f"{self._change()} for the{' user' if self.user else ''} unit {self.unit} ({self.line()} in {self.path})"


@dataclass
class KernelEnv(_ProgramEnvStep):
    """The variable in the "env" object of a Jupyter kernel's kernel.json (`path`), the rest of the file kept."""

    kind: ClassVar[str] = "kernel_env"
    kernel: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if re.split(r"[\\/]", self.path)[-1] != "kernel.json":
            raise StepError(f"not a kernel.json: {self.path!r}")
        if not self.kernel or any(c in self.kernel for c in "\0\n\r/\\"):
            raise StepError(f"not a kernel name: {self.kernel!r}")

    def entry(self) -> str:
        """The entry of "env" as kernel.json holds it (JSON)."""
        return json.dumps(self.name) + (": " + json.dumps(self.value) if self.value is not None else "")

    def summary(self) -> str:
        where = "in" if self.value is not None else "removed from"
        return f"{self._change()} for the Jupyter kernel '{self.kernel}' ({self.entry()} {where} \"env\" of " \
               f"{self.path})"
