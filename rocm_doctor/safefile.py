"""Every file rocm-doctor writes goes through here, because it often runs as root in shared folders.

A regular file (or a new path) is replaced atomically: the bytes go to a randomly named temporary file created
exclusively beside it (never through a link), are synced, and are renamed over it. A device, FIFO or socket
(`-o /dev/null`, `-o /dev/stdout`) is written through as a stream and never replaced. A symlink is followed to
the file it names, except one that another user owns in a sticky world-writable folder (the kernel's
protected_symlinks rule). A failed or short write raises WriteError, whose message is one line for the user.
A temporary file that a killed run left beside a target is removed by the next write of that target (`sweep`).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import sys
import time
from pathlib import Path
from typing import Mapping, Optional, Union

TMP_SUFFIX = ".rocm-doctor-tmp"
STALE_S = 600  # a write takes a second at most: a temporary file this old was left by a killed run
_TMP_NAME = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{12}" + re.escape(TMP_SUFFIX))
_MAX_LINKS = 40
_CHUNK = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_EXTRA = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class WriteError(OSError):
    """A file could not be written (or was refused); nothing half-written is left at the target."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "write failed"


def _error(path: Path, exc: OSError, verb: str = "write") -> WriteError:
    reason = "access denied" if isinstance(exc, PermissionError) else (exc.strerror or str(exc))
    return WriteError(f"cannot {verb} {path}: {reason}")


def _bytes(data: Union[bytes, str]) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def is_stream(path: Path) -> bool:
    """Whether `path` is something written as a stream (device, FIFO, socket), not a file that can be replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def unsafe_device(path: Union[str, Path]) -> Optional[str]:
    """Why writing to `path` would harm the machine: a block device (a disk: as root `-o /dev/sdb` overwrites it)
    or a character device other than a terminal, /dev/null or a standard stream (/dev/mem, a GPU's node). None for
    files, pipes, sockets, terminals and what does not exist."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISBLK(mode):
        return "it is a block device (a disk or a partition)"
    if stat.S_ISCHR(mode) and not _harmless_character_device(path):
        return "it is a device, not a file"
    return None


# Terminals by device number (Linux, Documentation/admin-guide/devices.txt: 4 "TTY devices", 5 "Alternate TTY
# devices" (/dev/tty, /dev/console, /dev/ptmx), 136-143 "Unix98 PTY slaves"); judged by stat alone, since opening
# a device to ask can act on it (a watchdog starts counting when opened).
_TERMINAL_MAJORS = {4, 5, *range(136, 144)}


def _harmless_character_device(path: Union[str, Path]) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    if os.path.realpath(path) == os.devnull:
        return True
    return hasattr(os, "major") and os.major(st.st_rdev) in _TERMINAL_MAJORS


def write(path: Union[str, Path], data: Union[bytes, str], mode: Optional[int] = None, stream: bool = True) -> None:
    """Put `data` at `path`: atomic replace for files, written through for devices and FIFOs (or refused when
    `stream` is False, for files that must be real files: rc files, installed data)."""
    path, raw = Path(path), _bytes(data)
    try:
        st: Optional[os.stat_result] = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _error(path, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise WriteError(f"cannot write {path}: it is a folder")
    if st is not None and not stat.S_ISREG(st.st_mode):
        if not stream:
            raise WriteError(f"refusing to write {path}: it is not a regular file (a device, pipe or socket)")
        _stream(path, raw, truncate=False)
        return
    real = resolve(path)
    if st is not None and not _same_file(real, st):
        _stream(path, raw, truncate=True)  # a file reached through a link that names no path (/proc/self/fd/N)
        return
    _replace(real, raw, mode if mode is not None else (stat.S_IMODE(st.st_mode) if st else _default_mode()), st)


def create(path: Union[str, Path], data: Union[bytes, str], mode: int = 0o600) -> None:
    """A new file, created exclusively (an existing file or link at `path` is an error), synced."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _EXTRA, mode)
    except OSError as exc:
        raise _error(path, exc, "create") from None
    _finish(fd, path, _bytes(data), sync=True)


def append(path: Union[str, Path], data: Union[bytes, str], mode: int = 0o600) -> None:
    """Append to a file (created if missing) without following a link at `path`, synced."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _EXTRA, mode)
    except OSError as exc:
        raise _error(path, exc) from None
    _finish(fd, path, _bytes(data), sync=True)


def resolve(path: Union[str, Path]) -> Path:
    """The file a write to `path` lands in: links of the last component followed, each one checked."""
    current = Path(os.path.abspath(path))
    for _ in range(_MAX_LINKS):
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break
        except OSError as exc:
            raise _error(current, exc) from None
        if not stat.S_ISLNK(st.st_mode):
            break
        _check_link(current, st)
        current = Path(os.path.join(os.path.realpath(current.parent), os.readlink(current)))
    else:
        raise WriteError(f"cannot write {path}: too many levels of symbolic links")
    return Path(os.path.realpath(current.parent)) / current.name


def state_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    """ROCM_DOCTOR_STATE_DIR, else %LOCALAPPDATA%\\rocm-doctor (Windows), else $XDG_STATE_HOME/rocm-doctor,
    else ~/.local/state/rocm-doctor."""
    env = os.environ if env is None else env
    if env.get("ROCM_DOCTOR_STATE_DIR"):
        return Path(env["ROCM_DOCTOR_STATE_DIR"])
    if sys.platform == "win32" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "rocm-doctor"
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"]) / "rocm-doctor"
    home = env.get("HOME") or env.get("USERPROFILE") or str(Path.home())
    return Path(home) / ".local" / "state" / "rocm-doctor"


def private_folder(path: Union[str, Path]) -> Optional[Path]:
    """`path`, made (0700) where missing, when it is this user's alone: None where it cannot be made, or it is not a
    folder, or (POSIX) not this user's own, or others may write to it."""
    path = Path(path)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
        return None
    return path


def untrusted_by_root(path: Union[str, Path]) -> Optional[str]:
    """As root, why state at `path` (the fix journal, the run history, the data bundle) must not be trusted: it or a
    folder above it (as written and as resolved) is owned by another user, or writable by others (a sticky shared
    folder like /tmp is fine above it). Under `sudo -E` HOME stays the user's, whose files a root run must not
    follow. None when it may be trusted, or when not running as root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    written = Path(os.path.abspath(path))
    for chain in (written, Path(os.path.realpath(written))):
        for index, part in enumerate([chain, *chain.parents]):
            try:
                st = os.lstat(part)
            except FileNotFoundError:
                continue
            except OSError as exc:
                return f"refusing to use {written} as root: {part} cannot be checked ({exc.strerror or exc})"
            if st.st_uid != 0:
                return (f"refusing to use {written} as root: {part} belongs to {_owner(st.st_uid)}, not root (run it "
                        "without sudo -E, or point ROCM_DOCTOR_STATE_DIR / ROCM_DOCTOR_DATA_DIR at a folder of root's)")
            shared = st.st_mode & stat.S_ISVTX and index > 0
            if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not shared and not stat.S_ISLNK(st.st_mode):
                return f"refusing to use {written} as root: {part} can be written by other users"
    return None


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def temporary_target(name: str) -> Optional[str]:
    """The name of the file a temporary file of this module was to become, or None when `name` is no such file."""
    match = _TMP_NAME.fullmatch(name)
    return match.group("name") if match else None


def sweep(path: Union[str, Path]) -> list[Path]:
    """Remove the temporary files a killed write of `path` left beside it, where that is safe: named as this module
    names them, plain files (not links), owned by this user or by the target's owner, untouched for STALE_S (so
    never one a concurrent run is writing). Returns what was removed; never raises."""
    try:
        real = resolve(path)
        owners = {os.geteuid()} if hasattr(os, "geteuid") else set()
        try:
            owners.add(os.stat(real).st_uid)
        except OSError:
            pass
        names = os.listdir(real.parent)
    except OSError:
        return []
    removed = []
    for name in names:
        match = _TMP_NAME.fullmatch(name)
        if match is None or match.group("name") != real.name:
            continue
        leftover = real.parent / name
        try:
            st = os.lstat(leftover)
            foreign = owners and st.st_uid not in owners
            if not stat.S_ISREG(st.st_mode) or foreign or time.time() - st.st_mtime < STALE_S:
                continue
            os.unlink(leftover)
        except OSError:
            continue
        removed.append(leftover)
    return removed


def _check_link(link: Path, st: os.stat_result) -> None:
    if not hasattr(os, "geteuid"):
        return
    try:
        folder = os.stat(link.parent)
    except OSError:
        return
    shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
    if shared and st.st_uid not in (os.geteuid(), folder.st_uid):
        raise WriteError(f"refusing to write {link}: it is a link owned by another user in a shared folder")


def _same_file(real: Path, st: os.stat_result) -> bool:
    try:
        other = os.stat(real)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _default_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _stream(path: Path, raw: bytes, truncate: bool) -> None:
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | _NONBLOCK | _EXTRA | (os.O_TRUNC if truncate else 0)
    try:
        fd = os.open(path, flags)  # non-blocking: a FIFO with no reader fails at once instead of hanging
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise WriteError(f"cannot write {path}: it is a pipe that nothing reads") from None
        raise _error(path, exc) from None
    if _NONBLOCK:
        os.set_blocking(fd, True)
    _finish(fd, path, raw, sync=False)


def _replace(real: Path, raw: bytes, mode: int, old: Optional[os.stat_result]) -> None:
    folder = real.parent
    sweep(real)
    for _ in range(8):
        tmp = folder / f".{real.name}.{secrets.token_hex(6)}{TMP_SUFFIX}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _EXTRA, 0o600)
            break
        except FileExistsError:
            continue
        except OSError as exc:
            raise _error(real, exc) from None
    else:
        raise WriteError(f"cannot write {real}: no free temporary name in {folder}")
    try:
        if old is not None and hasattr(os, "fchown") and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.fchown(fd, old.st_uid, old.st_gid)  # root editing a user's file keeps it the user's
            except OSError:
                pass
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        _finish(fd, real, raw, sync=True)
        if not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise _error(real, exc) from None
        raise


def _finish(fd: int, path: Path, raw: bytes, sync: bool) -> None:
    """Write all of `raw` and close `fd`; a short or failed write is a WriteError."""
    try:
        view = memoryview(raw)
        while view:
            written = os.write(fd, view[:_CHUNK])
            if written <= 0:
                raise WriteError(f"cannot write {path}: the write stopped short")
            view = view[written:]
        if sync:
            os.fsync(fd)
    except WriteError:
        raise
    except OSError as exc:
        raise _error(path, exc) from None
    finally:
        os.close(fd)
