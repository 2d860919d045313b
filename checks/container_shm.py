"""Inside a container: /dev/shm large enough for DataLoader workers (container-shm-small). Docker gives a new
container 64 MiB of shared memory; workers pass every batch through it and die with a bus error when it runs out."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import OS_CONTAINER, OS_SHM

from rocm_doctor.checks.containers import recreate_container

MIB = 1024 * 1024
DEFAULT = 64 * MIB  # what Docker gives a container that did not ask for more (moby/moby#2606)
SHM_SIZE = "8g"  # the --shm-size AMD's PyTorch-on-ROCm docker instructions use
RECOMMENDED = 8 * 1024 * MIB


def _size(total: int) -> str:
    return f"{total / (1024 * MIB):.1f} GiB" if total >= 1024 * MIB else f"{total // MIB} MiB"


class ContainerShmSmall(Check):
    id = "container-shm-small"
    title = "The container's /dev/shm size for DataLoader workers"
    area = "torch"
    severity = Severity.MEDIUM
    platforms = (Platform.LINUX,)
    requires = (OS_CONTAINER, OS_SHM)
    docs = ("https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.0/how-to/3rd-party/pytorch-install.html",
            "https://github.com/moby/moby/issues/2606", "https://github.com/pytorch/pytorch/issues/5040")

    def run(self, facts):
        found = facts[OS_CONTAINER]
        if not found.get("in_container"):
            return self.skip("not running in a container")
        total = facts[OS_SHM]["total_bytes"]
        engine = found.get("engine") or "container"
        evidence = list(found.get("evidence") or []) + [f"/dev/shm holds {_size(total)} ({total} bytes)"]
        if total >= RECOMMENDED:
            return self.ok(f"the {engine} container's /dev/shm holds {_size(total)}", evidence=evidence)
        if total > DEFAULT:
            return self.info(
                f"the {engine} container's /dev/shm holds {_size(total)}, more than the 64 MiB default and less than "
                f"the {SHM_SIZE.upper()} AMD's PyTorch containers are started with; whether it is enough depends on "
                "num_workers and the batch size (a bus error in a DataLoader worker says it is not)", evidence=evidence)
        return self.warn(
            f"this {engine} container's /dev/shm holds only {_size(total)}, the default of a container started "
            "without --ipc or --shm-size: PyTorch DataLoader workers "
            "(num_workers > 0) pass batches through shared memory and die with \"Bus error\" or \"insufficient "
            "shared memory (shm)\" once it is full.", evidence=evidence,
            remediation=["Start the container again sharing the host's IPC namespace (--ipc=host), or with a "
                         f"larger /dev/shm (--shm-size={SHM_SIZE}); num_workers=0 avoids it at the cost of speed."],
            fix=[recreate_container("--ipc=host (docker run / podman run)")],
            alternatives=[S.alternative(
                "a larger /dev/shm of the container's own", recreate_container(f"--shm-size={SHM_SIZE}"),
                why_not_first="a fixed size can still run out; the host's /dev/shm grows to half of its memory")])
