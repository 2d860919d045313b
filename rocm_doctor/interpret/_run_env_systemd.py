"""The environment a systemd service runs in, from what the run_env probe recorded: the service manager's
environment (`systemctl show-environment`), then the unit's Environment=, then its EnvironmentFile= files (which
override Environment=), then UnsetEnvironment=. Nothing of the user's shell, ~/.bashrc or /etc/environment is in
it: a system service reads none of them. Pure."""

from __future__ import annotations

from rocm_doctor.facts.keys import (SYSTEMD_CAT_KEY as CAT_KEY, SYSTEMD_GLOBS_KEY as GLOBS_KEY,
                                    SYSTEMD_SHOW_ENV_KEY as SHOW_ENV_KEY, SYSTEMD_SHOW_KEY as SHOW_KEY)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers import systemd_env, systemd_unit

MANAGER = "the service manager's environment (systemctl show-environment)"


def command_problem(observations: Observations, key: str, what: str) -> str | None:
    """One line for a systemctl call that could not answer, else None."""
    result = observations.command(key)
    if result is None:
        return f"{what} was not run"
    if result.error == "not found":
        return "systemctl was not found on PATH"
    if result.error or result.timed_out:
        return f"{' '.join(result.argv[:3])} did not answer ({result.error or 'timed out'})"
    if result.returncode != 0:
        tail = (result.stderr or result.stdout or "").strip().splitlines()
        called = " ".join(result.argv[:result.argv.index("-p")] if "-p" in result.argv else result.argv)
        return f"{called} failed: {tail[-1] if tail else f'exit code {result.returncode}'}"
    return None


def compose(observations: Observations, request: dict) -> dict:
    name, scope = str(request.get("name") or ""), request.get("scope") or "system"
    run: dict = {"kind": "systemd", "scope": scope, "name": name, "notes": [], "files": [], "sources": {}}
    problem = command_problem(observations, SHOW_KEY, "systemctl show")
    props = systemd_unit.show_properties(observations.command(SHOW_KEY).stdout) if not problem else {}
    if not problem and systemd_unit.first(props, "LoadState") == "not-found":
        problem = f"no unit {name}{' for this user' if scope == 'user' else ''} (systemctl show: LoadState=not-found)"
    unit = systemd_unit.first(props, "Id") or name
    run.update(name=unit, label=f"the {unit} environment" + (" (a user unit)" if scope == "user" else ""))
    if problem:
        return dict(run, problem=f"cannot read {name}: {problem}", env=None)
    if systemd_unit.first(props, "LoadState") == "masked":
        run["notes"].append(f"{unit} is masked: systemd will not start it")
    env = _manager_env(observations, run)
    origins, notes = _origins(observations)
    run["notes"] += notes
    for value in props.get("Environment") or []:
        pairs, found = systemd_env.assignments(value, strict=False)
        for var, val in pairs:
            env[var] = val
            run["sources"][var] = f"Environment= in {origins[var]}" if var in origins else "Environment="
        run["notes"] += [n for n in found if not n.startswith("not a variable") and not any(n in c for c in notes)]
    for entry in systemd_unit.environment_files(props.get("EnvironmentFiles", []) + props.get("EnvironmentFile", [])):
        _apply_file(observations, entry, env, run)
    for word in systemd_env.split_words(" ".join(props.get("UnsetEnvironment") or []), strict=False)[0]:
        var, sep, val = word.partition("=")
        run.setdefault("unset", []).append(var)  # systemd removes it after every Environment= setting
        if var in env and (not sep or env[var] == val):
            env.pop(var)
            run["sources"][var] = "removed by UnsetEnvironment="
    passed = systemd_env.split_words(" ".join(props.get("PassEnvironment") or []), strict=False)[0]
    if passed:
        run["notes"].append(f"PassEnvironment= hands {', '.join(passed)} over from the service manager's own "
                            "process environment, which was not read")
    command = systemd_unit.exec_start((props.get("ExecStart") or [""])[0])
    run.update(env=env, user=systemd_unit.first(props, "User") or ("root" if scope == "system" else ""),
               fragment=systemd_unit.first(props, "FragmentPath"),
               dropins=systemd_env.split_words(systemd_unit.first(props, "DropInPaths"), strict=False)[0],
               command=command, basis="its Environment= and EnvironmentFile= settings on top of the service "
               "manager's environment, not your shell's (a service reads no ~/.bashrc, ~/.profile or /etc/environment)")
    return run


def _manager_env(observations: Observations, run: dict) -> dict:
    problem = command_problem(observations, SHOW_ENV_KEY, "systemctl show-environment")
    if problem:
        run["notes"].append(f"the service manager's environment could not be read ({problem}): only the unit's own "
                            "settings are known")
        return {}
    env = systemd_env.show_environment(observations.command(SHOW_ENV_KEY).stdout)
    run["sources"].update({var: MANAGER for var in env})
    return env


def _origins(observations: Observations) -> tuple[dict, list]:
    result = observations.command(CAT_KEY)
    if result is None or result.returncode != 0:
        return {}, []
    return systemd_unit.environment_origins(systemd_unit.cat_files(result.stdout))


def _apply_file(observations: Observations, entry: dict, env: dict, run: dict) -> None:
    pattern = entry["path"]
    globs = observations.probes.get(GLOBS_KEY) or {}
    paths = globs.get(pattern, []) if any(c in pattern for c in "*?[") else [pattern]
    if not paths:
        run["notes"].append(f"EnvironmentFile={pattern} matches no file")
    for path in paths:
        record = observations.file(path)
        state = {"path": path, "optional": entry["optional"]}
        if record is None:
            state.update(state="not read", error="not read")
        elif record.content is None:
            missing = record.error == "not found" or not record.exists
            state.update(state="missing" if missing else "unreadable", error=record.error or "not read")
        else:
            state["state"] = "read"
            pairs, notes = systemd_env.env_file(record.content)
            for var, val in pairs:
                env[var] = val
                run["sources"][var] = f"EnvironmentFile {path}"
            run["notes"] += [f"{path}: {note}" for note in notes]
        run["files"].append(state)
        if state["state"] == "missing" and entry["optional"]:
            run["notes"].append(f"EnvironmentFile=-{path} does not exist (optional: systemd skips it)")
        elif state["state"] == "unreadable":
            run["notes"].append(f"{path} could not be read ({state['error']}): the variables it sets are not known"
                                + (" (run as root to read it)" if "permission" in state["error"] else ""))
