"""Runs the benchmark child in the target interpreter and gathers its records per section.

One child runs the sections in order. When it ends early (a section overran its budget and the child's watchdog
ended it, the whole child hung past its budget plus a grace period and the parent stopped it, or it crashed), the section it was in is recorded as
`timeout` or `crashed` and a fresh child runs the sections that are left. Progress reaches the caller through a
file the child appends the same JSON lines to, so the one runner in engine/ stays the only way to run a command.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from rocm_doctor.engine import runner
from rocm_doctor.engine.child import run_child, work_folder
from rocm_doctor.gpu.bench.plan import Section
from rocm_doctor.knowledge import env_catalog, gpu_env_vars

CHILD = Path(__file__).with_name("_bench_child.py")
MARKER = "bench"
RESULTS_SCHEMA = 1
STARTUP_ALLOWANCE_S = 90.0  # torch import + GPU initialisation, per child
HEADER_KINDS = ("start", "import", "cpu", "device", "device_note")

OnRecord = Callable[[dict[str, Any]], None]


class _Tail:
    """Follows the child's progress file from a thread: hands each new record to a callback, and stops a child
    whose section runs past its budget plus a grace period even when the child's own watchdog cannot fire (a
    call that hangs holding the GIL)."""

    def __init__(self, path: Path, callback: Optional[OnRecord], interval: float = 0.2, grace_s: float = 5.0) -> None:
        self.path, self.callback, self.interval, self.grace_s = path, callback, interval, grace_s
        self.offset = 0
        self.pid: Optional[int] = None
        self.section: Optional[str] = None
        self.deadline: Optional[float] = None
        self.killed: Optional[str] = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "_Tail":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=2)
        self._poll()

    def _run(self) -> None:
        while not self.stop.wait(self.interval):
            self._poll()
            if self.deadline is not None and time.monotonic() > self.deadline and self.pid and not self.killed:
                self.killed = self.section
                runner.kill_group(self.pid)  # the runner started the child in its own process group

    def _track(self, record: dict[str, Any]) -> None:
        kind = record.get("bench")
        if kind == "start":
            self.pid = record.get("pid")
        elif kind == "section_start":
            self.section = record.get("section")
            self.deadline = time.monotonic() + float(record.get("timeout_s") or 60) + self.grace_s
        elif kind in ("section_end", "section_timeout"):
            self.section, self.deadline = None, None

    def _poll(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.offset += end + 1
        for line in data[: end + 1].decode("utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            self._track(record)
            if self.callback is None:
                continue
            try:
                self.callback(record)
            except Exception:  # a display problem must not stop the measurement
                pass


def run_bench(
    python: str,
    plan: Sequence[Section],
    device: str = "auto",
    device_index: int = 0,
    on_record: Optional[OnRecord] = None,
    env: Optional[Mapping[str, str]] = None,
    watchdog: bool = True,
    startup_allowance_s: float = STARTUP_ALLOWANCE_S,
    preset: str = "custom",
    grace_s: float = 5.0,
    hold_dir: Optional[str] = None,
) -> dict[str, Any]:
    """Run `plan` in `python`; return the results object stored as the `bench.results` fact. With `hold_dir`, each
    section waits for `on_record` to drop its go file there (the caller samples the GPU's state first)."""
    started = time.monotonic()
    environment = dict(os.environ if env is None else env)
    results: dict[str, Any] = {
        "schema": RESULTS_SCHEMA,
        "preset": preset,
        "python": python,
        "requested_device": device,
        "device_index": device_index,
        "env": {k: v for k, v in sorted(environment.items()) if gpu_env_vars.matters(k)},
        "header": {},
        "sections": {s.name: {"state": "not-run", "detail": "not started", "records": []} for s in plan},
        "children": [],
    }
    remaining = list(plan)
    while remaining:
        payload = {"device": device, "device_index": device_index, "watchdog": watchdog,
                   "hold_dir": os.path.abspath(hold_dir) if hold_dir else None,  # the child changes folder
                   "workdir": work_folder(device),
                   "thread_variables": list(env_catalog.role("cpu-threads")),
                   "sections": [s.to_payload() for s in remaining]}
        timeout = startup_allowance_s + sum(s.timeout_s for s in remaining) + 5.0
        with tempfile.TemporaryDirectory(prefix="rocm-doctor-bench-") as tmp:
            progress = Path(tmp) / "progress.jsonl"
            progress.touch()
            payload["progress_file"] = str(progress)
            with _Tail(progress, on_record, interval=0.02 if hold_dir else 0.2, grace_s=grace_s) as tail:
                child = run_child(python, CHILD, payload, timeout, env=environment, marker=MARKER)
        results["children"].append({
            "argv": child.result.argv, "state": child.state, "detail": child.detail,
            "returncode": child.result.returncode, "duration_s": child.result.duration_s,
            "stderr_tail": child.stderr_tail,
        })
        if tail.killed:
            results["children"][-1]["stopped_in"] = tail.killed
        remaining = _absorb(results, remaining, child, tail.killed)
    results["elapsed_s"] = round(time.monotonic() - started, 3)
    results["measured_s"] = round(sum(s.get("seconds") or 0.0 for s in results["sections"].values()), 3)
    return results


def _absorb(results: dict[str, Any], remaining: list[Section], child, killed: Optional[str] = None) -> list[Section]:
    """File one child's records under their sections; return the sections a fresh child should still run."""
    sections = results["sections"]
    started, ended, timed_out = [], set(), {killed} if killed else set()
    for record in child.records:
        kind, name = record.get("bench"), record.get("section")
        if kind in HEADER_KINDS and not name:
            results["header"].setdefault(kind, record)
            continue
        if name not in sections:
            continue
        entry = sections[name]
        if kind == "section_start":
            started.append(name)
            entry.update(state="running", detail="started", records=[], timeout_s=record.get("timeout_s"))
        elif kind == "section_end":
            ended.add(name)
            entry.update(state=record.get("state", "ok"), detail=record.get("error") or "completed",
                         seconds=record.get("seconds"))
        elif kind == "section_timeout":
            timed_out.add(name)
        elif kind != "section_error":
            entry["records"].append(record)
        else:
            entry["traceback"] = record.get("traceback")
    header = results["header"]
    if not started:
        # Nothing ran: torch missing, no device, or the child died before the first section. Retrying won't help.
        reason = _why_nothing_ran(header, child)
        for section in remaining:
            sections[section.name].update(state="not-run", detail=reason)
        return []
    if child.state == "ok":
        return [s for s in remaining if s.name not in ended and s.name not in started]
    broken = [name for name in started if name not in ended]
    for name in broken:
        entry = sections[name]
        if name in timed_out or child.state == "hung":
            entry.update(state="timeout", detail=f"no result within its {entry.get('timeout_s')} s budget; the child "
                                                  "was stopped and the remaining sections ran in a fresh one",
                         seconds=entry.get("timeout_s"))
        else:
            tail = "; ".join(child.stderr_tail[-3:])
            entry.update(state="crashed", detail=f"{child.detail}" + (f" ({tail})" if tail else ""))
    done = ended | set(broken)
    return [s for s in remaining if s.name not in done]


def _why_nothing_ran(header: dict[str, Any], child) -> str:
    imported = header.get("import") or {}
    if imported and not imported.get("ok", True):
        return f"torch could not be imported: {imported.get('error')}"
    device = header.get("device") or {}
    if device.get("error"):
        return str(device["error"])
    if child.state != "ok":
        tail = "; ".join(child.stderr_tail[-3:])
        return f"the benchmark child {child.state}: {child.detail}" + (f" ({tail})" if tail else "")
    return "the child ended before running any section"
