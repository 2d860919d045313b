"""Child processes of the target interpreter that speak JSON lines: the torch probe, GPU kernels, benchmarks.

A child prints one JSON object per line and flushes, so when it crashes or hangs the parent still has every
record up to that point. `classify` turns how the process ended into one of a closed set of states.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from rocm_doctor import safefile
from rocm_doctor.engine import runner
from rocm_doctor.facts.command import CommandResult, signal_name

def parse_json_lines(stdout: str, marker: str = "stage") -> list[dict[str, Any]]:
    """The JSON objects carrying `marker` that a child printed; any other line (library chatter) is ignored."""
    records = []
    for line in (stdout or "").splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and marker in value:
            records.append(value)
    return records


def classify(result: CommandResult, finished: bool) -> tuple[str, str]:
    """(state, detail) for a child run; `finished` says whether it printed its closing record."""
    if result.error:
        return "not-run", f"could not start: {result.error}"
    if result.timed_out:
        return "hung", f"no answer within {result.timeout_s:g} s"
    if result.signal:
        return "crashed", f"killed by {signal_name(result.signal)}"
    if not finished:
        return "crashed", f"exited with code {result.returncode} before finishing"
    return "ok", "completed"


def child_env(base: Optional[Mapping[str, str]] = None, extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


WORK_FOLDER = "gpu-work"


@dataclass
class ChildRun:
    result: CommandResult
    records: list[dict[str, Any]] = field(default_factory=list)
    state: str = "ok"
    detail: str = ""

    @property
    def stderr_tail(self) -> list[str]:
        return [line for line in self.result.stderr.splitlines() if line.strip()][-12:]


def work_folder(device: str) -> Optional[str]:
    """The folder a GPU child computes from, the same on every run: WORK_FOLDER in the doctor's state folder, this
    user's alone. On an H200 the two cuDNN attention cases took about 0.5 s each in every working folder new to the
    machine and 0.05-0.13 s in one it had run from before (the driver's compute cache gained entries each time). None
    on the CPU device, or where no such folder can be had: the child then stays where the doctor started."""
    if device == "cpu":
        return None
    folder = safefile.private_folder(safefile.state_dir() / WORK_FOLDER)
    return str(folder) if folder is not None else None


class GoFile:
    """A file a child started ahead of its turn waits for (childlib.wait_for) before it goes on, in a folder of its
    own that only this user may write to. `open` lets the child go; `remove` takes the folder away."""

    def __init__(self, prefix: str) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix=prefix)
        self.path = os.path.join(self.folder.name, "go")

    def open(self) -> None:
        try:
            open(self.path, "a").close()
        except OSError:  # the folder went with the run it was for
            pass

    def remove(self) -> None:
        try:
            self.folder.cleanup()
        except OSError:  # opened while it went: one small folder stays behind
            pass


def run_child(
    python: str,
    script: Path,
    payload: Mapping[str, Any],
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    marker: str = "stage",
    done_value: str = "done",
    cancel: Optional[threading.Event] = None,
) -> ChildRun:
    """Run `script` in `python` with `payload` as JSON on stdin; the child ends with {marker: done_value}."""
    result = runner.run(
        [python, str(script)],
        timeout=timeout,
        env=child_env(env),
        stdin_data=json.dumps(payload).encode("utf-8"),
        cancel=cancel,
    )
    records = parse_json_lines(result.stdout, marker)
    finished = bool(records) and records[-1].get(marker) == done_value
    state, detail = classify(result, finished)
    return ChildRun(result=result, records=records, state=state, detail=detail)
