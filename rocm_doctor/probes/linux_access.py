"""What stands between this user and the GPU on Linux/WSL: device nodes and whether they open read-write, group
membership (now, and as /etc/group lists it), the amdgpu module and the kernel command line."""

from __future__ import annotations

import errno
import os
import stat

from rocm_doctor.facts.keys import (AMDGPU_INITSTATE_FILE, AMDGPU_MODULE_DIR, AMDGPU_VERSION_FILE, DEVICE_GROUPS,
                                    DRI_DIR, KERNEL_CMDLINE_FILE, LINUX_DEVICE_ACCESS, LINUX_GROUPS)
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux", "wsl")
FILES = (AMDGPU_VERSION_FILE, AMDGPU_INITSTATE_FILE, KERNEL_CMDLINE_FILE)


def _group_name(gid: int) -> str | None:
    import grp  # POSIX only; this module is imported (not run) on Windows too

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return None


def _stat_refused(path: str) -> bool:
    try:
        os.stat(path)
    except PermissionError:
        return True
    except OSError:
        return False
    return False


def device_access(path: str) -> dict:
    """Existence, owner, mode and whether open(O_RDWR) succeeds; the errno name and text when it does not. A node
    whose stat a security module refuses is there all the same (os.path.exists says False for it)."""
    info: dict = {"path": path, "exists": os.path.exists(path) or _stat_refused(path)}
    if not info["exists"]:
        return info
    try:
        st = os.stat(path)
        info.update(mode=stat.filemode(st.st_mode), uid=st.st_uid, gid=st.st_gid, group=_group_name(st.st_gid))
    except OSError as exc:
        info["stat_error"] = exc.strerror
    try:
        os.close(os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0)))
        info["read_write"] = True
    except OSError as exc:
        info.update(read_write=False, errno=errno.errorcode.get(exc.errno, str(exc.errno)), error=exc.strerror)
    return info


def groups() -> dict:
    """The process's groups (what a new login would not change) and the render/video entries of the group db."""
    import grp
    import pwd

    uid = os.getuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = None
    gids = sorted(set(os.getgroups()) | {os.getgid()})
    database = {}
    for name in DEVICE_GROUPS:
        try:
            entry = grp.getgrnam(name)
            database[name] = {"gid": entry.gr_gid, "members": list(entry.gr_mem)}
        except KeyError:
            database[name] = None
    return {
        "uid": uid,
        "user": user,
        "gids": gids,
        "names": [_group_name(g) for g in gids],
        "primary_gid": os.getgid(),
        "database": database,
    }


def collect(recorder: Recorder) -> None:
    dri = recorder.list_dir(DRI_DIR)
    paths = ["/dev/kfd", "/dev/dxg"] + [f"/dev/dri/{e}" for e in dri.entries or [] if e.startswith("renderD")]
    recorder.put(LINUX_DEVICE_ACCESS, {path: device_access(path) for path in paths})
    recorder.put(LINUX_GROUPS, groups())
    recorder.list_dir(AMDGPU_MODULE_DIR)
    for path in FILES:
        recorder.read_file(path)
