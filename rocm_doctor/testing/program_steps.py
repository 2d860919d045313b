"""A service's or kernel's environment step carried out on a case's recorded observations, as the machine reports
it afterwards: once a unit's drop-in has the line and systemd has reloaded it, `systemctl show` lists the assignment
in Environment= (or the name in UnsetEnvironment=); once kernel.json is edited, the recorded kernel.json is the
file fix writes (its own edit, so a case runs the code that writes it)."""

from __future__ import annotations

from pathlib import Path

from rocm_doctor.engine import steps as S
from rocm_doctor.facts.keys import SYSTEMD_SHOW_KEY as SHOW_KEY
from rocm_doctor.fix import kerneljson
from rocm_doctor.parsers.systemd_env import quoted
from rocm_doctor.testing.cases import CaseError

KINDS = (S.UnitEnv.kind, S.KernelEnv.kind)


def apply_program_step(observations: dict, step: S.Step, case_name: str) -> None:
    if isinstance(step, S.UnitEnv):
        _reloaded_unit(observations, step, case_name)
    else:
        _edited_kernel_json(observations, step, case_name)


def _reloaded_unit(observations: dict, step: S.UnitEnv, case_name: str) -> None:
    command = (observations.get("commands") or {}).get(SHOW_KEY)
    if not isinstance(command, dict) or command.get("stdout") is None:
        raise CaseError(f"case {case_name!r}: a unit_env step needs the recorded {SHOW_KEY} output")
    key = "Environment" if step.value is not None else "UnsetEnvironment"
    word = quoted(f"{step.name}={step.value}", specifiers=False) if step.value is not None else step.name
    lines = command["stdout"].splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith(f"{key}=")), None)
    if at is None:
        lines.append(f"{key}={word}")
    else:
        lines[at] = f"{lines[at]} {word}" if lines[at] != f"{key}=" else f"{key}={word}"
    command["stdout"] = "\n".join(lines) + "\n"


def _edited_kernel_json(observations: dict, step: S.KernelEnv, case_name: str) -> None:
    record = (observations.get("files") or {}).get(step.path)
    if not isinstance(record, dict) or record.get("content") is None:
        raise CaseError(f"case {case_name!r}: a kernel_env step needs the recorded {step.path}")
    edited = kerneljson.with_env(record["content"].encode("utf-8"), Path(step.path), step.name, step.value)
    record["content"] = edited.decode("utf-8")
