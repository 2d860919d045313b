"""run.env: the environment the model runs in when it is not this shell's, with `--unit`, `--user-unit` or
`--kernel`: a systemd service's (its Environment= and EnvironmentFile= settings on the service manager's
environment) or a Jupyter kernel's (the server's environment plus kernel.json's env). Facts.env returns it, so
every check of the environment judges that environment; Facts.shell_env keeps the shell's. Every other interpreter
runs after this one, so gpu_targets reads the override in effect there. Also says which interpreter the service
or kernel starts."""

from __future__ import annotations

import re
from typing import Optional

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import ENV_KNOWN, INTERPRETER_KEY, PASTE_KEY, REQUEST_KEY, RUN_ENV
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import _run_env_jupyter, _run_env_systemd
from rocm_doctor.parsers.kernelspec import is_python

_SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}


def compose(observations: Observations) -> Optional[dict]:
    """The run environment the observations describe; None when none was asked for."""
    request = observations.probes.get(REQUEST_KEY)
    if not isinstance(request, dict):
        return None
    builder = _run_env_systemd if request.get("kind") == "systemd" else _run_env_jupyter
    run = builder.compose(observations, request)
    if run.get("env") is not None:
        run["interpreter"] = interpreter_of((run.get("command") or {}).get("argv") or [], run)
        _interpreter_notes(observations, run)
    return run


def problem_of(observations: Observations) -> Optional[str]:
    """Why the service or kernel asked for could not be read (one line), else None."""
    run = compose(observations)
    return run.get("problem") if run else None


def interpreter_of(argv: list[str], run: dict) -> dict:
    """The program that runs the model: argv[0], through `env`; whether it is a Python interpreter, and if not,
    why the torch checks cannot judge the one it starts."""
    program, rest = (argv[0], argv[1:]) if argv else ("", [])
    if re.split(r"[\\/]", program)[-1] == "env":
        rest = list(rest)
        while rest and (rest[0].startswith("-") or "=" in rest[0]):
            rest.pop(0)
        program = rest[0] if rest else ""
    what = "ExecStart" if run["kind"] == "systemd" else "argv[0] of kernel.json"
    if not program:
        return {"program": "", "python": False, "why": f"{run['name']} has no command"}
    if is_python(program):
        return {"program": program, "python": True,
                "reason": f"the Python that {run['name']}'s {what} runs" if run["kind"] == "systemd"
                else f"{what} of the Jupyter kernel '{run['name']}' ({run.get('kernel_json')})"}
    name = re.split(r"[\\/]", program)[-1]
    why = (f"{what} runs a shell command line ({name} -c): which Python it starts cannot be told" if name in _SHELLS
           else f"{what} runs {program}, not a Python interpreter (a wrapper script or another program)")
    return {"program": program, "python": False, "why": why}


def _interpreter_notes(observations: Observations, run: dict) -> None:
    found = observations.probes.get(INTERPRETER_KEY) or {}
    interp = run["interpreter"]
    interp.update({k: found[k] for k in ("path", "exists") if k in found and found.get("program") == interp["program"]})
    if interp["python"] and found and not interp.get("exists"):
        run["notes"].append(f"{interp['program']} ({interp['reason']}) does not exist here: the torch checks judge "
                            "the default interpreter instead")
    elif not interp["python"]:
        run["notes"].append(f"{interp['why']}; the torch checks judge the default interpreter")


def interpret(observations: Observations, facts: Facts) -> None:
    if observations.probes.get(PASTE_KEY) is not None and not observations.env:
        facts.set_missing(ENV_KNOWN, "the paste states no environment variable: what is set on that machine is not "
                          "known")
    else:
        facts.set(ENV_KNOWN, True)
    run = compose(observations)
    if run is None:
        facts.set_missing(RUN_ENV, "no --unit, --user-unit or --kernel was given: the checks judge this shell's "
                          "environment")
        return
    facts.set(RUN_ENV, run)


def report_target(facts: Facts) -> dict:
    """{"environment": label} for the report's header when a service's or kernel's environment was judged."""
    run = facts.get(RUN_ENV)
    if isinstance(run, dict) and run.get("env") is not None:
        return {"environment": f"{run['label']}: {run.get('basis', '')}".rstrip(": ")}
    return {}
