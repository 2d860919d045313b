"""The NVIDIA driver against the CUDA the installed torch was built with (nvidia-driver-older-than-torch-cuda): a
driver below the least one of torch's CUDA major (NVIDIA's minor version compatibility) cannot start CUDA at all,
so torch sees no GPU; one between that minimum and the driver torch's CUDA release ships with runs it with a
limited feature set. The driver is read from what recorded it (data/nvidia_driver_cuda.json for the versions)."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.installs import install_into
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import (GPU_PCI, NVIDIA_DRIVER, PYTHON_TARGET, TORCH_AVAILABLE, TORCH_CUDA_VERSION,
                                    TORCH_FLAVOUR, TORCH_VERSION)
from rocm_doctor.knowledge import cuda_driver as table
from rocm_doctor.knowledge import currency

from rocm_doctor.checks.layer_common import in_container, is_ubuntu
from rocm_doctor.checks.symptoms import NVIDIA_GPU_WORK

COMPAT_DOCS = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
NOTES_DOCS = "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html"
DOWNLOAD = "https://www.nvidia.com/Download/index.aspx"


def _nvidia_absent(facts) -> bool:
    """PCI lists GPUs and none is NVIDIA (a container or WSL often lists none: that says nothing)."""
    vendors = {g.get("vendor") for g in facts.get(GPU_PCI) or [] if isinstance(g, dict)}
    return bool(vendors) and "nvidia" not in vendors


def _windows(facts) -> bool:
    return facts.os in ("windows", "wsl")


def _needs(facts, cuda: str) -> tuple[str, str, str | None]:
    """(major minimum here, the same for the other OS in words, the driver torch's CUDA release ships with)."""
    major = table.cuda_key(cuda)[0]
    here = table.minimum(cuda, facts.os)
    other_os = "linux" if _windows(facts) else "windows"
    other = table.minimum(cuda, other_os)
    words = f"{other} on {'Linux' if other_os == 'linux' else 'Windows'}" if other and other != here else ""
    return here or f"the {major}.x branch", words, table.release_driver(cuda, facts.os)


def _update_steps(facts, least: str, full: str | None, cuda: str) -> list:
    wanted = f"{least} or newer" + (f" ({full} or newer for every CUDA {cuda} feature)" if full else "")
    if in_container(facts):
        return [S.advice(f"Update the NVIDIA driver on the host that runs this container to {wanted}, then start "
                         "the container again: a container uses the host's driver, and nothing installed in it "
                         "changes that")]
    if _windows(facts):
        where = " on Windows (WSL uses the Windows driver; none goes inside WSL)" if facts.os == "wsl" else ""
        return [S.advice(f"Install the NVIDIA driver {wanted}{where} from {DOWNLOAD}, then restart")]
    if is_ubuntu(facts):
        return [S.run_command(["sudo", "ubuntu-drivers", "install"], needs_admin=True, then=S.AFTER_REBOOT,
                              description=f"install Ubuntu's recommended NVIDIA driver, then reboot; it must be "
                              f"{wanted}", note="ubuntu-drivers list shows the drivers Ubuntu offers for this GPU")]
    return [S.advice(f"Install the NVIDIA driver {wanted} from your distribution's packages or from {DOWNLOAD}, "
                     "then reboot")]


def _torch_alternatives(facts, driver_cuda: str | None) -> list:
    """A torch built for a CUDA the driver runs: the newest CUDA index in the driver's CUDA major."""
    found = table.index_for_driver(driver_cuda)
    if not found:
        return []
    index, cuda = found
    python = target_python(facts, "python")
    limited = table.cuda_key(cuda) > table.cuda_key(driver_cuda)
    return [S.alternative(
        f"install a torch built for CUDA {cuda}" + (f", which CUDA {driver_cuda} drivers from "
                                                    f"{table.minimum(cuda, facts.os)} on run" if limited else
                                                    ", which this driver runs"),
        install_into(facts.get(PYTHON_TARGET), python, ["torch"], index, extra_args=["--force-reinstall"],
                     note="installs the newest torch that index has; torchvision and torchaudio must come from it too"),
        why_not_first="it keeps the old driver and may mean an older torch release; a driver update serves every "
        "CUDA program" + (f"; CUDA {cuda} on a CUDA {driver_cuda} driver runs with a limited feature set (minor "
                          "version compatibility)" if limited else ""))]


class NvidiaDriverOlderThanTorchCuda(Check):
    id = "nvidia-driver-older-than-torch-cuda"
    title = "The NVIDIA driver version against the CUDA of torch's build"
    explains = NVIDIA_GPU_WORK
    area = "torch"
    severity = Severity.CRITICAL
    platforms = (Platform.LINUX, Platform.WINDOWS, Platform.WSL)
    requires = (NVIDIA_DRIVER, TORCH_FLAVOUR)
    docs = (COMPAT_DOCS, NOTES_DOCS)

    def run(self, facts):
        version, cuda = facts.get(TORCH_VERSION), facts.get(TORCH_CUDA_VERSION)
        if facts[TORCH_FLAVOUR] != "cuda":
            return self.skip(f"torch {version} is not a CUDA build")
        if table.cuda_key(cuda) is None:
            return self.skip(f"torch {version} does not say which CUDA it was built with")
        driver = facts[NVIDIA_DRIVER]
        evidence = [f"torch {version}: torch.version.cuda = {cuda}"] + driver["lines"]
        if driver["version"]:
            evidence.append(f"NVIDIA driver {driver['version']} ({driver['version_from']})")
        if driver["cuda"]:
            evidence.append(f"the driver supports CUDA {driver['cuda']} ({driver['cuda_from']})")
        later_driver = table.newer_driver(driver["version"], facts.os)
        driver_cuda = driver["cuda"] or (None if later_driver else table.cuda_of_driver(driver["version"], facts.os))
        for later in (currency.newer("cuda", cuda), later_driver):  # past the table: the driver's own answer decides
            if later:
                evidence.append(f"{later}: judged by the CUDA major's minimum and what the driver itself reports")
        if driver["cuda"] is None and driver_cuda:
            evidence.append(f"CUDA {driver_cuda} ships with driver {table.release_driver(driver_cuda, facts.os)}, "
                            f"the newest CUDA release whose driver is not newer than {driver['version']} [NVIDIA CUDA "
                            "Toolkit release notes, Table 3]")
        reached = facts.get(TORCH_AVAILABLE) is True
        if not (driver["version"] or driver_cuda or driver["insufficient"]):
            if reached:
                return self.ok(f"torch {version} (CUDA {cuda}) reached the GPU, so the driver runs CUDA {cuda}; which "
                               "driver version it is was not recorded", evidence=evidence)
            if _nvidia_absent(facts):
                return self.skip("no NVIDIA GPU shows on PCI, and nothing recorded an NVIDIA driver")
            return self.skip("nothing recorded which NVIDIA driver runs: torch printed no driver warning, it loaded "
                             "no versioned driver library, and no log with nvidia-smi's header was given",
                             evidence=evidence)
        least, other, full = _needs(facts, cuda)
        said = driver["too_old"] or driver["insufficient"]
        too_old = bool(said or table.runs(driver["version"], cuda, facts.os) is False
                       or (driver["cuda"] and table.cuda_key(driver["cuda"])[0] < table.cuda_key(cuda)[0]))
        named = "this NVIDIA driver" + (f" ({driver['version']})" if driver["version"] else "")
        supports = f"supports CUDA {driver_cuda} at most" if driver_cuda else "is older than CUDA " + cuda + " needs"
        if too_old and not reached:
            return self.fail(
                f"torch {version} was built with CUDA {cuda}; {named} {supports}, so CUDA cannot start and torch sees "
                f"no GPU. A CUDA {table.cuda_key(cuda)[0]}.x build needs NVIDIA driver {least} or newer"
                + (f" ({other})" if other else "") + (f"; {full} is the driver CUDA {cuda} ships with." if full else "."),
                evidence=evidence, fix=_update_steps(facts, least, full, cuda),
                alternatives=_torch_alternatives(facts, driver_cuda),
                data={"torch_cuda": cuda, "driver_cuda": driver_cuda, "driver": driver["version"], "minimum": least})
        return self._runs(facts, version, cuda, named, driver, driver_cuda, full, evidence, reached)

    def _runs(self, facts, version, cuda, named, driver, driver_cuda, full, evidence, reached):
        """The driver runs torch's CUDA: in full, or under minor version compatibility."""
        below_release = (table.driver_key(driver["version"]) < table.driver_key(full)
                         if driver["version"] and full else
                         bool(driver_cuda) and table.cuda_key(driver_cuda) < table.cuda_key(cuda))
        if reached and (driver["too_old"] or driver["insufficient"]):
            evidence.append("torch reached the GPU here, so the message about an old driver is not about this run")
        if below_release:
            return self.info(
                f"torch {version} was built with CUDA {cuda}; {named} supports CUDA {driver_cuda or 'older releases'} "
                f"in full and runs CUDA {cuda} under NVIDIA's minor version compatibility, with a limited feature "
                "set" + (f"; {full} is the driver CUDA {cuda} ships with." if full else "."), evidence=evidence,
                remediation=[f"For every CUDA {cuda} feature, update the NVIDIA driver to {full or 'a newer one'}."])
        return self.ok(f"torch {version} was built with CUDA {cuda}; {named} supports CUDA "
                       f"{driver_cuda or cuda}" + (" (torch reached the GPU)" if reached else ""), evidence=evidence)
