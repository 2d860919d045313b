"""Start one child per rank, watch them, and never hang: the parent side of the collectives.

Each rank is a child of the target interpreter running `_collectives_child.py` with RANK / WORLD_SIZE /
LOCAL_RANK / MASTER_ADDR / MASTER_PORT in its environment (the rest of the environment is passed through
unchanged: NCCL_* settings such as NCCL_NVLS_ENABLE stay as the user set them). Every child is started in its
own process group and killed as a group.

Watchdogs, checked ten times a second:
- startup: until every rank printed "ready" (torch imported, process group up), no rank may go `startup_s`
  without printing anything;
- progress: after that, no `op_s` without a record from any rank (a hung collective);
- a rank that exits with an error while others still run: the others get `grace_s`, then are killed (they
  would otherwise wait in the collective forever);
- total: `total_s` for the whole run.
When a watchdog fires every remaining child is killed and the reason is recorded.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from rocm_doctor.engine import runner
from rocm_doctor.engine.child import child_env
from rocm_doctor.engine.runner import kill_tree
from rocm_doctor.facts.command import signal_name

CHILD = Path(__file__).with_name("_collectives_child.py")
MARKER = "coll"
STDERR_CAP = 200_000


@dataclass
class Watchdogs:
    startup_s: float = 180.0
    op_s: float = 60.0
    grace_s: float = 10.0
    total_s: float = 1800.0


@dataclass
class RankRun:
    rank: int
    records: list[dict[str, Any]] = field(default_factory=list)
    returncode: Optional[int] = None
    stderr: str = ""
    error: Optional[str] = None  # could not start
    killed: bool = False
    seconds: float = 0.0

    @property
    def finished(self) -> bool:
        return bool(self.records) and self.records[-1].get(MARKER) == "done"

    @property
    def ready(self) -> bool:
        return any(r.get(MARKER) == "ready" for r in self.records)

    def state(self) -> tuple[str, str]:
        if self.error:
            return "not-run", f"could not start: {self.error}"
        if self.killed:
            return "killed", "killed by the watchdog"
        if self.returncode is not None and self.returncode < 0:
            return "crashed", f"killed by {signal_name(-self.returncode)}"
        if not self.finished:
            errors = [r for r in self.records if r.get(MARKER) == "error"]
            if errors:
                return "error", str(errors[-1].get("error"))
            return "crashed", f"exited with code {self.returncode} before finishing"
        return "ok", "completed"

    def stderr_tail(self, lines: int = 12) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()][-lines:]

    def to_dict(self) -> dict[str, Any]:
        state, detail = self.state()
        return {"rank": self.rank, "state": state, "detail": detail, "returncode": self.returncode,
                "seconds": round(self.seconds, 3), "records": self.records, "stderr_tail": self.stderr_tail()}


@dataclass
class LaunchResult:
    ranks: list[RankRun]
    watchdog: Optional[str] = None  # which watchdog fired and why; None when every child ended on its own
    watchdog_kind: Optional[str] = None  # startup | progress | failure | total
    seconds: float = 0.0


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free right now on `host` (the usual small race with other programs is accepted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class _Watched:
    def __init__(self, run: RankRun, proc: subprocess.Popen, progress: Callable[[dict], None]):
        self.run, self.proc = run, proc
        self._progress = progress
        self._err: list[bytes] = []
        self._err_kept = 0
        self.readers = [threading.Thread(target=self._read_out, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read_out(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace").strip()
            if not line.startswith("{"):
                continue
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and MARKER in value:
                value.setdefault("rank", self.run.rank)
                self.run.records.append(value)
                self._progress(value)

    def _read_err(self) -> None:
        while True:
            chunk = self.proc.stderr.read(8192)
            if not chunk:
                return
            room = STDERR_CAP - self._err_kept
            if room > 0:
                self._err.append(chunk[:room])
                self._err_kept += min(room, len(chunk))

    def finish(self) -> None:
        for reader in self.readers:
            reader.join(timeout=2.0)
        self.run.stderr = b"".join(self._err).decode("utf-8", errors="replace")


def launch(
    python: str,
    payload: Mapping[str, Any],
    ranks: Sequence[Mapping[str, str]],
    env: Optional[Mapping[str, str]] = None,
    watchdogs: Optional[Watchdogs] = None,
    on_record: Optional[Callable[[dict], None]] = None,
    script: Path = CHILD,
) -> LaunchResult:
    """Run one child per entry of `ranks` (each the per-rank env: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_*).

    `env` is the base environment (default: this process's), passed through unchanged apart from the rank
    variables. Never raises for a child's failure; returns every record each rank printed.
    """
    watchdogs = watchdogs or Watchdogs()
    lock = threading.Lock()
    state = {"last": time.monotonic()}
    data = json.dumps(dict(payload)).encode("utf-8")

    def progress(record: dict) -> None:
        with lock:
            state["last"] = time.monotonic()
        if on_record is not None:
            try:
                on_record(record)
            except Exception:
                pass

    started = time.monotonic()
    watched: list[_Watched] = []
    result = LaunchResult(ranks=[])
    try:
        for spec in ranks:
            run = RankRun(rank=int(spec.get("RANK", len(result.ranks))))
            result.ranks.append(run)
            try:
                proc = runner.start([str(python), str(script)], env=child_env(env, dict(spec)))
            except OSError as exc:
                run.error = f"{type(exc).__name__}: {exc.strerror or exc}"
                continue
            try:
                proc.stdin.write(data)
                proc.stdin.close()
            except OSError:
                pass
            watched.append(_Watched(run, proc, progress))
        if not watched:
            return result
        first_failure: Optional[float] = None
        while True:
            alive = [w for w in watched if w.proc.poll() is None]
            if not alive:
                break
            now = time.monotonic()
            for w in watched:
                if w.proc.returncode is not None and w.proc.returncode != 0 and first_failure is None:
                    first_failure = now
            with lock:
                quiet = now - state["last"]
            all_ready = all(w.run.ready for w in watched)
            reason = kind = None
            if now - started > watchdogs.total_s:
                kind, reason = "total", f"the whole run took longer than {watchdogs.total_s:g} s"
            elif first_failure is not None and now - first_failure > watchdogs.grace_s:
                failed = [w.run.rank for w in watched if w.proc.returncode not in (None, 0)]
                kind = "failure"
                reason = (f"rank{'s' if len(failed) > 1 else ''} {', '.join(map(str, failed))} ended with an error "
                          f"and the others were still running {watchdogs.grace_s:g} s later")
            elif not all_ready and quiet > watchdogs.startup_s:
                waiting = [w.run.rank for w in alive if not w.run.ready]
                kind = "startup"
                reason = (f"no output for {watchdogs.startup_s:g} s while starting up (ranks not ready: "
                          f"{', '.join(map(str, waiting))})")
            elif all_ready and quiet > watchdogs.op_s:
                kind, reason = "progress", f"no rank made progress for {watchdogs.op_s:g} s"
            if reason:
                result.watchdog, result.watchdog_kind = reason, kind
                for w in alive:
                    w.run.killed = True
                    kill_tree(w.proc)
                break
            time.sleep(0.1)
    finally:
        for w in watched:
            if w.proc.poll() is None:  # interrupted (KeyboardInterrupt) or an internal error: never leave ranks
                w.run.killed = True
                kill_tree(w.proc)
        for w in watched:
            try:
                w.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            w.finish()
            w.run.returncode = w.proc.returncode
            w.run.seconds = time.monotonic() - started
        result.seconds = round(time.monotonic() - started, 3)
    return result


# Under torchrun the environment says "use the agent's store" (TORCHELASTIC_USE_AGENT_STORE=True): our ranks form
# their own group on their own port, so rank 0 must host the store itself.
OWN_STORE = {"TORCHELASTIC_USE_AGENT_STORE": "False"}


def local_rank_envs(world_size: int, port: int, addr: str = "127.0.0.1") -> list[dict[str, str]]:
    return [{"RANK": str(r), "WORLD_SIZE": str(world_size), "LOCAL_RANK": str(r), "LOCAL_WORLD_SIZE": str(world_size),
             "MASTER_ADDR": addr, "MASTER_PORT": str(port), **OWN_STORE} for r in range(world_size)]
