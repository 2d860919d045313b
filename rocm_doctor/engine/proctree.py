"""The descendants of the doctor's tools on Linux, read from /proc, so the runner can end every one of them.

A tool's background child stays in the tool's process group and is ended with it; one that calls setsid() leaves
the group and, when its parent exits, would be adopted by init and outlive the doctor. Once the doctor is a child
subreaper (prctl PR_SET_CHILD_SUBREAPER), such an orphan is adopted by the doctor instead: it shows up among the
doctor's own children, which the doctor did not start itself. Best effort throughout: never raises.
"""

from __future__ import annotations

import ctypes
import glob
import os
import signal
import sys
from typing import Iterable, Optional

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
MAX_PROCESSES = 4096  # a walk of a tree stops there (a fork bomb is not followed forever)


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants; False where that cannot be done (not Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols, libc's among them: no ldconfig run
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def stat(pid: int) -> Optional[dict]:
    """{state, ppid, pgid, sid} of a process from /proc/<pid>/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()  # the name in parentheses may hold spaces and parentheses
    try:
        return {"state": fields[0], "ppid": int(fields[1]), "pgid": int(fields[2]), "sid": int(fields[3])}
    except (IndexError, ValueError):
        return None


def children(pid: int) -> set[int]:
    """The children of a process (of every one of its threads)."""
    found: set[int] = set()
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path, "rb") as handle:
                found.update(int(word) for word in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, as /proc shows the tree now."""
    found: set[int] = set()
    todo = list(children(pid))
    while todo and len(found) < MAX_PROCESSES:
        child = todo.pop()
        if child not in found:
            found.add(child)
            todo.extend(children(child))
    return found


def pipes_held(pid: int) -> set[int]:
    """The inodes of the pipes a process holds open (a tool's stdout and stderr, when it inherited them)."""
    inodes = set()
    for link in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            target = os.readlink(link)
        except OSError:
            continue
        if target.startswith("pipe:["):
            try:
                inodes.add(int(target[6:-1]))
            except ValueError:
                continue
    return inodes


def orphans(exclude: Iterable[int]) -> set[int]:
    """This process's children but `exclude` (the ones it started): descendants of its tools that it adopted as
    subreaper."""
    return children(os.getpid()) - set(exclude)


def kill(pids: Iterable[int]) -> set[int]:
    """SIGKILL each process and its subtree (walked first: a killed parent's children move up to this process);
    a process that leads its own group (setsid) has its group killed too. Returns what was signalled."""
    doomed: set[int] = set()
    for pid in pids:
        doomed.add(pid)
        doomed |= descendants(pid)
    for pid in doomed:
        info = stat(pid)
        if info is None:
            continue
        try:
            if info["pgid"] == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    return doomed


def reap(pids: Iterable[int]) -> set[int]:
    """Collect the exit status of each of these children that has ended (so none is left a zombie); returns the
    ones still running. Only for children no Popen waits for: it would lose their status."""
    running = set()
    for pid in pids:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        if done == 0:
            running.add(pid)
    return running
