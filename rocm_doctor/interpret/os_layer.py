"""os.* facts: the distribution (os-release), the running kernel, the C library, and whether this runs in a
container and which engine made it, and the size of /dev/shm."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.cgroup import parse_cgroup
from rocm_doctor.parsers.kernel_release import parse_kernel_release
from rocm_doctor.parsers.ldd import parse_ldd_version
from rocm_doctor.parsers.os_release import describe, parse_os_release
from rocm_doctor.facts.keys import (CONTAINER_FILES, CONTAINERENV_FILE, DOCKERENV_FILE, INIT_CGROUP_FILE, LDD_KEY,
                                    OS_CONTAINER, OS_GLIBC, OS_KERNEL, OS_RELEASE, OS_RELEASE_FACT, OS_SHM, SHM_KEY)

_ENV_MARKS = (("APPTAINER_CONTAINER", "apptainer"), ("SINGULARITY_CONTAINER", "singularity"),
              ("KUBERNETES_SERVICE_HOST", "kubernetes"))


def _release(observations: Observations) -> tuple[dict | None, str]:
    for path in OS_RELEASE:
        record = observations.file(path)
        if record is not None and record.content is not None:
            return dict(describe(parse_os_release(record.content)), source=path), ""
    legacy = (observations.platform or {}).get("os_release")
    if isinstance(legacy, dict) and legacy.get("ID"):  # snapshots before the whole file was read
        return dict(describe(legacy), source="platform probe (ID, VERSION_ID, NAME only)"), ""
    seen = [observations.file(p) for p in OS_RELEASE if observations.file(p) is not None]
    return None, (f"{seen[0].path}: {seen[0].error}" if seen else "os-release was not read")


def container(observations: Observations) -> dict | None:
    """{in_container, engine, evidence}; None when the container marks were not looked at."""
    records = {p: observations.file(p) for p in CONTAINER_FILES}
    if all(r is None for r in records.values()):
        return None
    evidence, engine = [], None
    if records[CONTAINERENV_FILE] is not None and records[CONTAINERENV_FILE].exists:
        engine = "podman"
        evidence.append("/run/.containerenv exists (podman)")
    if records[DOCKERENV_FILE] is not None and records[DOCKERENV_FILE].exists:
        engine = engine or "docker"
        evidence.append("/.dockerenv exists (docker)")
    cgroup = records[INIT_CGROUP_FILE]
    if cgroup is not None and cgroup.content:
        found = parse_cgroup(cgroup.content)["engine"]
        if found:
            engine = engine or found
            evidence.append(f"/proc/1/cgroup names {found}")
    env = observations.env
    if env.get("container"):
        engine = engine or env["container"]
        evidence.append(f"container={env['container']} in the environment")
    for variable, name in _ENV_MARKS:
        if env.get(variable):
            engine = engine or name
            evidence.append(f"{variable} is set")
    return {"in_container": bool(evidence), "engine": engine, "evidence": evidence}


def interpret(observations: Observations, facts: Facts) -> None:
    if facts.os not in ("linux", "wsl"):
        for key in (OS_RELEASE_FACT, OS_KERNEL, OS_GLIBC, OS_CONTAINER, OS_SHM):
            facts.set_missing(key, f"not collected on {facts.os}")
        return
    release, why = _release(observations)
    if release is None:
        facts.set_missing(OS_RELEASE_FACT, why)
    else:
        facts.set(OS_RELEASE_FACT, release)

    kernel = parse_kernel_release(str(observations.platform.get("release") or ""))
    if kernel is None:
        facts.set_missing(OS_KERNEL, "the kernel release was not recorded")
    else:
        facts.set(OS_KERNEL, kernel)

    ldd = observations.command(LDD_KEY)
    libc = parse_ldd_version((ldd.stdout or "") + "\n" + (ldd.stderr or "")) if ldd is not None else None
    if libc is None:
        facts.set_missing(OS_GLIBC, ldd.describe() if ldd is not None else "ldd --version was not run")
    else:
        facts.set(OS_GLIBC, libc)

    found = container(observations)
    if found is None:
        facts.set_missing(OS_CONTAINER, "the container marks were not looked at")
    else:
        facts.set(OS_CONTAINER, found)

    shm = observations.probes.get(SHM_KEY)
    if not isinstance(shm, dict):
        facts.set_missing(OS_SHM, "the size of /dev/shm was not measured")
    elif shm.get("total_bytes") is None:
        facts.set_missing(OS_SHM, f"/dev/shm: {shm.get('error') or 'no size'}")
    else:
        facts.set(OS_SHM, {"total_bytes": int(shm["total_bytes"])})
