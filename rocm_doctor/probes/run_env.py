"""What a systemd unit or a Jupyter kernel runs the model with (`--unit`, `--user-unit`, `--kernel`): its settings
and the files they name, recorded before the other probes so that the torch probe runs in the interpreter the
service or kernel starts, with its environment.

systemd: `systemctl [--user] show NAME -p …`, `show-environment`, `cat NAME`, and each EnvironmentFile (a wildcard
through a folder listing). Jupyter: `jupyter kernelspec list --json` when jupyter is on PATH, else the kernel
folders jupyter_core searches ($JUPYTER_PATH, the user's data folder, the environment's share/jupyter, the system's),
and the kernel's kernel.json. Every read is bounded and never blocks (a FIFO or device is refused, not opened)."""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
import sys
from pathlib import Path

from rocm_doctor import inputfile
from rocm_doctor.facts.observations import FileRecord
from rocm_doctor.facts.keys import (INTERPRETER_KEY, JUPYTER_KERNEL_KEY, JUPYTER_LIST_KEY, REQUEST_KEY, SYSTEMD_CAT_KEY,
                                    SYSTEMD_GLOBS_KEY, SYSTEMD_SHOW_ENV_KEY, SYSTEMD_SHOW_KEY)
from rocm_doctor.interpret.run_env import compose
from rocm_doctor.parsers.unit_limits import UNIT_LIMITS
from rocm_doctor.parsers import kernelspec, secret_values, shell_secrets, systemd_unit
from rocm_doctor.probes._base import Recorder

FILE_CAP = 1_000_000
PROPERTIES = ("Id", "LoadState", "Environment", "EnvironmentFiles", "UnsetEnvironment", "PassEnvironment", "User",
              "ExecStart", "FragmentPath", "DropInPaths") + UNIT_LIMITS


def observe(recorder: Recorder) -> None:
    context = recorder.context
    request = dict(context.run_target or {})
    recorder.put(REQUEST_KEY, request)
    if request.get("kind") == "systemd":
        _systemd(recorder, request)
    else:
        _jupyter(recorder, request)
    run = compose(recorder.observations)
    if run is not None and run.get("env") is not None:
        _adopt(recorder, run)


def _systemd(recorder: Recorder, request: dict) -> None:
    base = ["systemctl"] + (["--user"] if request.get("scope") == "user" else [])
    name = str(request.get("name") or "")
    argv = base + ["show", name] + [a for p in PROPERTIES for a in ("-p", p)] + ["--no-pager"]
    show = _masked(recorder.command(SYSTEMD_SHOW_KEY, argv))
    props = systemd_unit.show_properties(show.stdout) if show.returncode == 0 else {}
    if not props or systemd_unit.first(props, "LoadState") == "not-found":
        return
    _masked(recorder.command(SYSTEMD_SHOW_ENV_KEY, base + ["show-environment"]))
    _masked(recorder.command(SYSTEMD_CAT_KEY, base + ["cat", name, "--no-pager"]))
    globs = {}
    for entry in systemd_unit.environment_files(props.get("EnvironmentFiles", []) + props.get("EnvironmentFile", [])):
        pattern = entry["path"]
        paths = [pattern]
        if any(c in pattern for c in "*?["):
            listing = recorder.list_dir(os.path.dirname(pattern))
            paths = globs[pattern] = glob_matches(pattern, listing.entries or [])
        for path in paths:
            read_bounded(recorder, path)
    if globs:
        recorder.put(SYSTEMD_GLOBS_KEY, globs)


def _masked(result):
    """A unit's settings often carry tokens (Environment="HF_TOKEN=…"): their values are masked before they are
    recorded, as in shell rc lines; the GPU variables are never secret-named."""
    result.stdout = shell_secrets.mask(result.stdout or "")
    return result


def read_bounded(recorder: Recorder, path: str) -> FileRecord:
    """A regular file's text, at most FILE_CAP bytes, secret values masked; a FIFO, device or folder is named,
    never opened."""
    record = FileRecord(path=path)
    try:
        kind = os.stat(path).st_mode
        record.exists = True
        if not stat.S_ISREG(kind):
            record.error = "a named pipe (FIFO), not a file: not read" if stat.S_ISFIFO(kind) else \
                "not a regular file: not read"
        else:
            text = inputfile.read(path, FILE_CAP).decode("utf-8", errors="replace")
            record.content = secret_values.mask_text(text)  # kernel.json by its structure, env files as lines
    except FileNotFoundError:
        record.error = "not found"
    except PermissionError:
        record.error = "permission denied"
    except (OSError, inputfile.InputError) as exc:
        record.error = str(exc).replace(f"{path}: ", "", 1)[:200]
    recorder.observations.add_file(record)
    return record


def _jupyter(recorder: Recorder, request: dict) -> None:
    env, name = recorder.context.env, str(request.get("name") or "").lower()
    found: dict = {"searched": []}
    program = shutil.which("jupyter", path=env.get("PATH"))
    if program:
        listing = recorder.command(JUPYTER_LIST_KEY, [program, "kernelspec", "list", "--json"],
                                   timeout=max(recorder.context.command_timeout_s, 30.0))
        specs, _ = kernelspec.kernelspec_list(listing.stdout) if listing.returncode == 0 else ({}, None)
        if specs.get(name, {}).get("resource_dir"):
            found["resource_dir"] = specs[name]["resource_dir"]
    if "resource_dir" not in found:
        for folder in kernel_folders(env, recorder.context.platform_os, recorder.context.python):
            found["searched"].append(folder)
            entries = recorder.list_dir(folder).entries or []
            match = next((e for e in entries if e.lower() == name), None)
            if match:
                found["resource_dir"] = os.path.join(folder, match)
                break
    if found.get("resource_dir"):
        found["kernel_json"] = os.path.join(found["resource_dir"], "kernel.json")
        read_bounded(recorder, found["kernel_json"])
    recorder.put(JUPYTER_KERNEL_KEY, found)


def _user_data(env, platform_os: str) -> str:
    if env.get("JUPYTER_DATA_DIR"):
        return env["JUPYTER_DATA_DIR"]
    home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
    if platform_os == "windows":
        return os.path.join(env.get("APPDATA") or os.path.join(home, "AppData", "Roaming"), "jupyter")
    if platform_os == "macos":
        return os.path.join(home, "Library", "Jupyter")
    return os.path.join(env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "jupyter")


def kernel_folders(env, platform_os: str, python: str) -> list[str]:
    """The kernels folders in jupyter_core's order: $JUPYTER_PATH, the user's, the environments', the system's."""
    data = [p for p in (env.get("JUPYTER_PATH") or "").split(os.pathsep) if p]
    data.append(_user_data(env, platform_os))
    for prefix in (str(Path(python).parent.parent), sys.prefix):
        data.append(os.path.join(prefix, "share", "jupyter"))
    if platform_os == "windows":
        data.append(os.path.join(env.get("PROGRAMDATA") or r"C:\ProgramData", "jupyter"))
    else:
        data += ["/usr/local/share/jupyter", "/usr/share/jupyter"]
    return list(dict.fromkeys(os.path.join(d, "kernels") for d in data))


def _adopt(recorder: Recorder, run: dict) -> None:
    """The service's or kernel's Python becomes the target (unless --python chose one); the torch probe then runs
    in the environment the service or kernel has. The GPU tools run in that environment in any case."""
    context, interp = recorder.context, run.get("interpreter") or {}
    context.run_env = dict(run["env"])  # the GPU tools run in it, whatever program the service or kernel starts
    record: dict = {"program": interp.get("program", "")}
    if interp.get("python"):
        program = interp["program"]
        path = program if os.path.isabs(program) else shutil.which(program, path=run["env"].get("PATH"))
        record.update(path=path, exists=bool(path) and os.path.isfile(path) and os.access(path, os.X_OK))
    recorder.put(INTERPRETER_KEY, record)
    adopted = record.get("exists") and not context.python_given
    if adopted:
        context.python, context.python_reason = record["path"], interp["reason"]
    if adopted or context.python_given:
        context.torch_env = dict(run["env"])


def glob_matches(pattern: str, listing: list[str]) -> list[str]:
    """The entries of a folder listing that an EnvironmentFile= wildcard matches, sorted as systemd reads them."""
    folder, name = os.path.split(pattern)
    return sorted(os.path.join(folder, entry) for entry in listing if fnmatch.fnmatchcase(entry, name))
