"""The limits a process runs under, read from inside it: every rlimit, the CPUs it may run on and its cgroup's
limits. Standard library only: the runtime child (_runtime_child.py) loads this file by path in the target
interpreter, and the probe reads the doctor's own limits with it when that child could not run (a descriptor limit
too low to start it)."""

import os

RLIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_NOFILE", "RLIMIT_MEMLOCK", "RLIMIT_NPROC", "RLIMIT_STACK",
           "RLIMIT_RSS", "RLIMIT_CORE")
CGROUP_V2_FILES = ("cpu.max", "cpuset.cpus.effective", "memory.max", "memory.high", "pids.max")
CGROUP_V1_FILES = {"cpu": ("cpu.cfs_quota_us", "cpu.cfs_period_us"), "cpuset": ("cpuset.effective_cpus",),
                   "memory": ("memory.limit_in_bytes",), "pids": ("pids.max",)}


def read_limits():
    values = {"pid": os.getpid(), "cpu_count": os.cpu_count()}
    try:
        import resource
    except ImportError:  # Windows
        resource = None
    if resource is not None:
        for name in RLIMITS:
            if hasattr(resource, name):
                soft, hard = resource.getrlimit(getattr(resource, name))
                values[name] = [None if soft == resource.RLIM_INFINITY else soft,
                                None if hard == resource.RLIM_INFINITY else hard]
    if hasattr(os, "sched_getaffinity"):
        try:
            values["affinity"] = sorted(os.sched_getaffinity(0))
        except OSError as exc:
            values["affinity_error"] = str(exc)
    values["cgroup"] = read_text("/proc/self/cgroup")
    values["cgroup_files"] = cgroup_files(values["cgroup"] or "")
    return values
def read_text(path, cap=65536):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(cap)
    except OSError:
        return None


def cgroup_files(membership):
    """The limits of this process's cgroup v2 (and v1 controllers), as the files say them."""
    found = {}
    for line in membership.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2].lstrip("/")
        if not controllers:  # v2: one hierarchy
            for name in CGROUP_V2_FILES:
                found[name] = read_text(os.path.join("/sys/fs/cgroup", path, name), 4096)
        for controller in controllers.split(","):
            for name in CGROUP_V1_FILES.get(controller, ()):
                found[name] = read_text(os.path.join("/sys/fs/cgroup", controller, path, name), 4096)
    return {name: text.strip() for name, text in found.items() if text is not None}
