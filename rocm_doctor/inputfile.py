"""Every file a user names as input (`--from`, `--log`, `fleet diff`, `diff`) is read through here, bounded.

The doctor runs as root on lab machines, where a path can name anything: a FIFO nobody writes to, `/dev/zero`, a
500 MB report. So the open never blocks (O_NONBLOCK), a regular file larger than the limit is refused before it is
read, a shell's pipe (`--log -`, `--log <(…)`) is read until it closes, at most the limit and within a deadline,
and a device, a folder or a named FIFO (whose writer may never come) is refused. Every refusal is an InputError whose message is one line for the user.
"""

from __future__ import annotations

import collections
import errno
import os
import stat
import sys
import time
from pathlib import Path
from typing import Iterator, Union

MAX_BYTES = 256 * 1024 * 1024  # real snapshots and reports are a few MiB
STREAM_TIMEOUT_S = 120.0  # a pipe from `ssh node rocm-doctor snapshot` needs a live run's time
STDIN = "-"
_CHUNK = 1 << 20
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class InputError(ValueError):
    """An input that cannot be or must not be read; the message is one line."""


def read(path: Union[str, Path], limit: int = MAX_BYTES) -> bytes:
    """All of `path` (a file, or a pipe read until its writer closes it), refused beyond `limit` bytes."""
    with _Opened(path) as opened:
        if opened.size is not None and opened.size > limit:
            raise InputError(f"{path}: {_mib(opened.size)} is more than the {_mib(limit)} an input may have")
        parts, total = [], 0
        for chunk in opened.chunks():
            total += len(chunk)
            if total > limit:
                raise InputError(f"{path}: more than the {_mib(limit)} an input may have")
            parts.append(chunk)
        return b"".join(parts)


def read_tail(path: Union[str, Path], keep: int, limit: int = MAX_BYTES) -> tuple[bytes, bool]:
    """The last `keep` bytes of `path` and whether anything came before them. A file is read from its end; a pipe is
    read to its end keeping only the tail, and refused after `limit` bytes without an end."""
    with _Opened(path) as opened:
        skipped = 0
        if opened.size is not None and opened.size > keep:
            skipped = os.lseek(opened.fd, opened.size - keep, os.SEEK_SET)
        tail: collections.deque = collections.deque()
        kept = total = 0
        for chunk in opened.chunks():
            total += len(chunk)
            if opened.size is None and total > limit:
                raise InputError(f"{path}: more than {_mib(limit)} without an end; give the log's last part "
                                 "(tail -c 1000000 LOG)")
            tail.append(chunk)
            kept += len(chunk)
            while kept - len(tail[0]) >= keep:
                kept -= len(tail.popleft())
        data = b"".join(tail)
        return data[-keep:], skipped > 0 or len(data) > keep


class _Opened:
    """An input opened without blocking: `size` is the file's size, None for a pipe."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = path
        self.fd = -1
        self.size = None

    def __enter__(self) -> "_Opened":
        path = self.path
        try:
            self.fd = os.dup(sys.stdin.fileno()) if str(path) == STDIN else os.open(path, _FLAGS)
            st = os.fstat(self.fd)
        except FileNotFoundError:
            raise InputError(f"{path}: no such file") from None
        except PermissionError:
            raise InputError(f"{path}: cannot read (access denied)") from None
        except (OSError, ValueError, AttributeError) as exc:
            self._close()
            reason = "a socket, not a file" if getattr(exc, "errno", None) == errno.ENXIO else getattr(exc, "strerror", None) or exc
            raise InputError(f"{path}: cannot read ({reason})") from None
        if stat.S_ISDIR(st.st_mode):
            self._close()
            raise InputError(f"{path}: is a folder, not a file")
        if stat.S_ISREG(st.st_mode):
            self.size = st.st_size if st.st_size > 0 else None  # /proc files say 0 and are read like pipes
        elif not (stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
            kind = "a terminal" if os.isatty(self.fd) else "a device"
            self._close()
            raise InputError(f"{path}: is {kind}, not a file or a pipe")
        elif _named_pipe(path):
            self._close()
            raise InputError(f"{path}: is a named pipe (FIFO), which may never be written to; give a file, or "
                             f"the pipe as <(cat {path})")
        return self

    def __exit__(self, *exc) -> None:
        self._close()

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def chunks(self) -> Iterator[bytes]:
        if self.size is not None or not hasattr(os, "set_blocking"):
            yield from self._plain()
        else:
            yield from self._stream()

    def _plain(self) -> Iterator[bytes]:
        while True:
            chunk = self._read()
            if not chunk:
                return
            yield chunk

    def _stream(self) -> Iterator[bytes]:
        """A pipe: waits for data (or for a writer to come and go) until the deadline."""
        import select

        os.set_blocking(self.fd, False)
        poller = select.poll()
        poller.register(self.fd, select.POLLIN | select.POLLPRI)
        deadline = time.monotonic() + STREAM_TIMEOUT_S
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise InputError(f"{self.path}: no end of input within {STREAM_TIMEOUT_S:g} s (a pipe that nothing "
                                 "writes to or that never closes)")
            if not poller.poll(max(1, int(left * 1000))):
                continue
            try:
                chunk = self._read()
            except BlockingIOError:
                continue
            if not chunk:
                return
            yield chunk

    def _read(self) -> bytes:
        try:
            return os.read(self.fd, _CHUNK)
        except BlockingIOError:
            raise
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read ({exc.strerror or exc})") from None


def _named_pipe(path: Union[str, Path]) -> bool:
    """A FIFO in a folder (mkfifo), unlike a shell's pipe (`-`, `<(…)` as /dev/fd/N), which has a writer already."""
    name = str(path)
    if name == STDIN or name.startswith(("/dev/fd/", "/proc/")):
        return False
    try:
        return stat.S_ISFIFO(os.lstat(os.path.realpath(name)).st_mode)
    except OSError:
        return False


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MiB"
