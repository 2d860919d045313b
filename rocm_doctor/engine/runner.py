"""The one way rocm-doctor runs an external command.

argv lists only (never a shell), a timeout that kills the whole process tree, a cap on how much output is kept,
and bytes decoded with replacement. When a tool ends or times out, every process it started ends too: its process
group, and on Linux (the doctor being their subreaper, engine/proctree.py) those that left the group with setsid().
Nothing here raises for a command that is missing, hangs, crashes or prints garbage: every outcome is recorded in
a CommandResult.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

from rocm_doctor.engine import proctree
from rocm_doctor.facts.command import CommandResult

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_OUTPUT_CAP = 1_000_000  # bytes kept per stream
CANCEL_POLL_S = 0.2  # how soon a cancelled child is ended
TREE_POLL_S = 0.5  # how often a running tool's descendants are noted, to know them once they leave its group
REAP_WAIT_S = 1.0  # how long an adopted process just killed is waited for (one stuck in a wedged driver is left)

# Every child still running, so a signal to the doctor can end them: they run in their own process groups, which
# neither the terminal's Ctrl-C nor a service manager's SIGTERM reaches.
_live: set = set()
_live_lock = threading.RLock()  # re-entrant: the signal handler runs on the main thread, which may hold it
_stopping = threading.Event()
_signalled: list[int] = []
_reported = threading.Event()
_started: set = set()  # every pid this process started: its own children are never another user of the GPU
_spawn_lock = threading.Lock()  # a child being started is not yet in _live: no scan for adopted orphans meanwhile
_adopting = threading.Event()  # set once this process is its descendants' subreaper (stop_children_on_signals)


class Interrupted(BaseException):
    """SIGTERM, SIGINT or SIGHUP reached the doctor; its children have been killed already. Not a KeyboardInterrupt,
    which click would turn into "Aborted!" and exit code 1."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass
class _Capture:
    """What is kept of one stream: its first `cap` bytes, or with `tail` its last ones from the start of a line (a
    log's newest lines); `dropped` counts the bytes not kept."""

    cap: int
    tail: bool = False
    chunks: list = field(default_factory=list)
    kept: int = 0
    dropped: int = 0
    _before: bytes = b"\n"  # with `tail`: the last byte dropped so far (a newline: the kept part starts a line)

    def feed(self, stream) -> None:
        while True:
            chunk = stream.read(65536)
            if not chunk:
                return
            if self.tail:
                self._keep_last(chunk)
                continue
            room = self.cap - self.kept
            if room > 0:
                self.chunks.append(chunk[:room])
                self.kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def _keep_last(self, chunk: bytes) -> None:
        """Keep the chunk; drop the oldest chunks that the last `cap` bytes no longer need (memory stays bounded)."""
        self.chunks.append(chunk)
        self.kept += len(chunk)
        while len(self.chunks) > 1 and self.kept - len(self.chunks[0]) >= self.cap:
            oldest = self.chunks.pop(0)
            self.kept -= len(oldest)
            self.dropped += len(oldest)
            self._before = oldest[-1:]

    def _tail_bytes(self) -> bytes:
        """The last `cap` bytes, less the rest of a line cut in two (dropped too)."""
        raw = b"".join(self.chunks)
        start = max(0, len(raw) - self.cap)
        before = raw[start - 1:start] if start else self._before
        if before != b"\n":
            newline = raw.find(b"\n", start)
            start = newline + 1 if newline >= 0 else start
        self.dropped += start
        return raw[start:]

    def text(self) -> tuple[str, bool]:
        """The kept bytes decoded, and whether they were not valid UTF-8. Called once, when the stream has ended."""
        raw = self._tail_bytes() if self.tail else b"".join(self.chunks)
        try:
            return raw.decode("utf-8"), False
        except UnicodeDecodeError:
            return raw.decode("utf-8", errors="replace"), True


def run(
    argv: Sequence[str],
    timeout: float = DEFAULT_TIMEOUT_S,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    stdin_data: Optional[bytes] = None,
    cancel: Optional[threading.Event] = None,
    keep_tail: bool = False,
) -> CommandResult:
    """Run argv and return what happened. Never raises for the command's own failures. Setting `cancel` ends
    the child's process tree as a timeout would (work started early that turned out not to be needed). Output past
    `output_cap` is dropped from the end, or with `keep_tail` from the start (a log whose newest lines matter)."""
    argv = [str(a) for a in argv]
    result = CommandResult(argv=argv, timeout_s=timeout, kept_tail=keep_tail)
    if not argv:
        result.error = "empty command"
        return result
    if _stopping.is_set():
        result.error = "not started: rocm-doctor is stopping"
        return result
    started = time.monotonic()
    try:
        proc = _spawn(argv, stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                      env=dict(env) if env is not None else None, cwd=cwd)
    except FileNotFoundError:
        result.error = "not found"
        return result
    except PermissionError as exc:
        result.error = f"permission denied ({exc.strerror or exc})"
        return result
    except OSError as exc:
        result.error = f"{type(exc).__name__}: {exc.strerror or exc}"
        return result
    except ValueError as exc:  # a NUL byte in an argument or the environment (text read from the machine)
        result.error = f"invalid command line or environment: {exc}"
        return result

    out, err = _Capture(output_cap, keep_tail), _Capture(output_cap, keep_tail)
    readers = [
        threading.Thread(target=out.feed, args=(proc.stdout,), daemon=True),
        threading.Thread(target=err.feed, args=(proc.stderr,), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if stdin_data is not None:
        # From a thread: a child that never reads stdin must not block us past the pipe buffer (64 KiB) with no
        # timeout; the write ends with BrokenPipeError once the child exits or is killed.
        threading.Thread(target=_feed_stdin, args=(proc.stdin, stdin_data), daemon=True).start()
    seen: set = set()  # its descendants noted while it ran
    try:
        _wait(proc, started + timeout, cancel, result, seen)
        if sys.platform != "win32":
            kill_group(proc.pid)  # what it left running in the background (`tool &`) ends with it
    except BaseException:  # interrupted: the child must not outlive the wait
        kill_group(proc.pid)
        raise
    finally:
        with _live_lock:
            _live.discard(proc)
    if sys.platform != "win32":
        _end_adopted(proc, seen)
    for reader in readers:
        # Grandchildren that escaped the kill may hold the pipes open; do not wait on them forever.
        reader.join(timeout=2.0)
    result.duration_s = round(time.monotonic() - started, 4)
    result.returncode = proc.returncode
    result.stdout, bad_out = out.text()
    result.stderr, bad_err = err.text()
    result.invalid_utf8 = bad_out or bad_err
    result.stdout_truncated_bytes = out.dropped
    result.stderr_truncated_bytes = err.dropped
    return result


def _wait(proc: subprocess.Popen, deadline: float, cancel: Optional[threading.Event], result: CommandResult,
          seen: set) -> None:
    """Wait for the child until the deadline or `cancel`; either ends its process tree and says so in result.
    Meanwhile its descendants are noted in `seen`, so that those that leave its process group are known."""
    poll = CANCEL_POLL_S if cancel is not None else TREE_POLL_S
    while True:
        left = deadline - time.monotonic()
        try:
            _wait_for_exit(proc, max(0.0, min(left, poll) if _adopting.is_set() or cancel is not None else left))
            return
        except subprocess.TimeoutExpired:
            if _adopting.is_set():
                seen |= proctree.descendants(proc.pid)
            if time.monotonic() >= deadline:
                result.timed_out = True
            elif cancel is not None and cancel.is_set():
                result.error = "cancelled: its result was not needed"
            else:
                continue
            kill_tree(proc)
            return


def _wait_for_exit(proc: subprocess.Popen, timeout: float) -> None:
    """proc.wait(timeout), woken the moment the child exits where the system can say so (a pidfd, Linux 5.3 and
    later): Popen.wait's own timeout polls, and sleeps up to 50 ms past the exit, every child of every run."""
    try:
        fd = os.pidfd_open(proc.pid) if proc.returncode is None else None
    except (AttributeError, OSError):  # not Linux, an older kernel, or already reaped
        fd = None
    if fd is None:
        proc.wait(timeout=timeout)
        return
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    proc.wait()


def _end_adopted(proc: subprocess.Popen, seen: set) -> None:
    """End the descendants of a tool that has ended and that left its process group (setsid): the doctor adopted
    them as their subreaper. Those known as its own (seen below it, in its session, holding its output pipes) end
    now; one that cannot be told apart ends once no other child of the doctor is running, which could need it."""
    if not _adopting.is_set() or _stopping.is_set():
        return
    pipes = {os.fstat(stream.fileno()).st_ino for stream in (proc.stdout, proc.stderr) if _open(stream)}
    with _spawn_lock:
        others = _children()
        adopted = proctree.orphans(child.pid for child in others)
        if any(child.poll() is None for child in others):
            adopted = {pid for pid in adopted if _descends_from(pid, proc.pid, seen, pipes)}
        killed = proctree.kill(adopted)
    deadline = time.monotonic() + REAP_WAIT_S
    while True:
        with _spawn_lock:
            left = proctree.reap(proctree.orphans(child.pid for child in _children())) & killed
        if not left or time.monotonic() >= deadline:
            return
        time.sleep(0.02)


def _end_all_adopted() -> None:
    with _spawn_lock:
        proctree.kill(proctree.orphans(child.pid for child in _children()))


def _children() -> list:
    with _live_lock:
        return list(_live)


def _descends_from(pid: int, tool: int, seen: set, pipes: set) -> bool:
    info = proctree.stat(pid)
    return (pid in seen or bool(seen & proctree.descendants(pid)) or (info is not None and info["sid"] == tool)
            or bool(pipes & proctree.pipes_held(pid)))


def _open(stream) -> bool:
    return stream is not None and not stream.closed


def _feed_stdin(stream, data: bytes) -> None:
    try:
        stream.write(data)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def start(argv: Sequence[str], env: Optional[Mapping[str, str]] = None) -> subprocess.Popen:
    """Start a command without waiting for it, with pipes for stdin, stdout and stderr (bytes), in its own process
    group so that kill_tree stops it and all it started. Only for a caller that watches several children at once
    (the collectives launcher); everything else uses run(). Raises OSError when the command cannot start."""
    if _stopping.is_set():
        raise OSError("not started: rocm-doctor is stopping")
    return _spawn([str(a) for a in argv], stdin=subprocess.PIPE, env=dict(env) if env is not None else None)


def _spawn(argv: list, stdin, env: Optional[dict], cwd: Optional[str] = None) -> subprocess.Popen:
    """Start a child in its own process group with piped output, and track it before any scan for adopted
    processes can take it for one."""
    with _spawn_lock:
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                                **_new_process_group())
        _track(proc)
    return proc


def _track(proc: subprocess.Popen) -> None:
    with _live_lock:
        _live.add(proc)
        _started.add(proc.pid)
        if _stopping.is_set():  # the signal came between the check and the start
            kill_group(proc.pid)


def started_pids() -> list[int]:
    """Every pid this process has started so far, running or ended: the GPU tools may still list a child that has
    just exited, when its /proc entry can no longer tell whose it was."""
    with _live_lock:
        return sorted(_started)


def stop_children_on_signals() -> None:
    """From the main thread: SIGTERM, SIGINT and SIGHUP kill every running child's process group, refuse new
    children, and raise Interrupted, so the doctor exits without leaving a probe or a benchmark running. On Linux
    the doctor also becomes the subreaper of its descendants, so one that leaves its tool's process group
    (setsid) is adopted by the doctor and ended with its tool instead of outliving both; any still running when the
    doctor exits (its tool could not be told) ends then."""
    if proctree.become_subreaper():
        _adopting.set()
        atexit.register(_end_all_adopted)
    watched = {getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)}
    for signum in watched:
        signal.signal(signum, _on_signal)
    if sys.platform != "win32":
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        threading.Thread(target=_watch, args=(read_end, watched), daemon=True, name="rocm-doctor-signals").start()


def _watch(fd: int, watched: set) -> None:
    """Kills the children the moment a signal lands, on whatever thread the kernel gave it to: the main thread,
    where Python runs the handler, may sit in a wait that ends only when the probe it waits for ends."""
    while True:
        data = os.read(fd, 64)
        if not data:
            return
        if watched.intersection(data):
            stop_children()


def _on_signal(signum, frame) -> None:
    stop_children()
    if _reported.is_set():  # the doctor is already saying why it stops
        return
    _signalled.append(signum)
    if _in_import_machinery(frame):
        # An exception raised inside importlib's bootstrap can leave the global import lock held, and every later
        # import then waits forever (seen once: an interrupt landed in a module lock's clean-up and the doctor hung).
        # The signal lands again a moment later, by when the import has moved on; `signalled` keeps it meanwhile.
        threading.Timer(0.05, signal.raise_signal, (signum,)).start()
        return
    raise Interrupted(signum)


def signalled() -> Optional[int]:
    """The first signal that stopped the doctor, whether or not its Interrupted reached the command."""
    return _signalled[0] if _signalled else None


def reported() -> None:
    """The doctor has said why it stops: a signal that lands later ends children and raises nothing."""
    _reported.set()


def _in_import_machinery(frame) -> bool:
    """Whether the code the signal interrupted is importlib's or zipimport's own, frozen or not (a module's body that
    runs during an import is not: an exception from it unwinds through importlib's clean-up)."""
    if frame is None:
        return False
    name = frame.f_code.co_filename.replace("\\", "/")
    return name.startswith(("<frozen importlib", "<frozen zipimport")) or "/importlib/_bootstrap" in name \
        or name.endswith("/zipimport.py")


def stop_children() -> None:
    """Kill every child still running and start no new one."""
    _stopping.set()
    with _live_lock:
        running = [proc for proc in _live if proc.poll() is None]
        _live.clear()
    for proc in running:
        kill_group(proc.pid)
    if _adopting.is_set():
        proctree.kill(proctree.orphans(proc.pid for proc in running))


def _new_process_group() -> dict:
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_group(pid: int) -> None:
    """Kill process `pid` and everything it started (its process group on POSIX, the job tree on Windows), for a
    process started by run() or start(); does not wait for it. Best effort: never raises."""
    if sys.platform == "win32":
        try:
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(pid)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
            )
        except (subprocess.TimeoutExpired, OSError):
            pass
    else:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_tree(proc: subprocess.Popen) -> None:
    """Kill a process and everything it started, and reap it."""
    kill_group(proc.pid)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
