"""`/proc/1/cgroup` → the container engine its paths name, if any (cgroup v2 with a private namespace shows
only "0::/" and says nothing). Pure; never raises."""

from __future__ import annotations

_ENGINES = (("kubepods", "kubernetes"), ("libpod", "podman"), ("/docker", "docker"), ("docker-", "docker"),
            ("/lxc", "lxc"), ("containerd", "containerd"))


def parse_cgroup(text: str) -> dict:
    paths = []
    for line in (text or "").splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) == 3:
            paths.append(parts[2])
    engine = next((name for path in paths for marker, name in _ENGINES if marker in path
                   and not path.startswith("/system.slice/")), None)
    return {"engine": engine, "paths": paths, "v2_only": bool(paths) and all(
        line.startswith("0::") for line in (text or "").splitlines() if line.strip())}
