"""What a log given with `check --log` says about the machine it came from (log.machine), judged where the machine's
own observations lack it, as when a maintainer replays a user's log without the user's machine: the GPU target the
log names against the torch build and the ROCm release it shows, the NVIDIA GPU and driver its tool tables show
(nvidia-smi, deviceQuery, clinfo) against the CUDA torch build it names, and the interpreter it ran in against the
one diagnosed. Every reading is marked as coming from the log."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import (LOG_MACHINE, PASTE_SUMMARY, PLATFORM_MACHINE, PYTHON_TARGET, PYTHON_TARGET_VERSION,
                                    TORCH_DEVICES, TORCH_FLAVOUR, TORCH_VERSION)
from rocm_doctor.knowledge import catalog, currency, nvidia_arch, overrides, support, wheels
from rocm_doctor.knowledge import cuda_driver as table

from rocm_doctor.checks.amd_common import arch_list, covered, gpus, index_of

def from_log(log: dict, item: dict) -> str:
    return f"from the log {log.get('path') or ''}: {item['line']}"


def _archs(version: str) -> tuple[list[str] | None, str | None]:
    """The gfx targets of the wheels of the index a torch version names ("2.4.0+rocm6.3.4" → rocm6.3.4, else rocm6.3)."""
    index = index_of(version)
    if not index:
        return None, None
    for name in (index, ".".join(index.split(".")[:2])):
        archs = wheels.index_archs(name)
        if archs:
            return archs, name
    return None, index


class LogGfxNotInTorchBuild(Check):
    id = "log-gfx-not-in-torch-build"
    title = "GPU code in the log's torch build for the log's GPU target"
    area = "amd"
    severity = Severity.HIGH
    requires = (LOG_MACHINE,)

    def run(self, facts):
        log = facts[LOG_MACHINE]
        if not log["targets"]:
            return self.skip("the log names no GPU target")
        if gpus(facts) and facts.get(TORCH_FLAVOUR) == "rocm":
            return self.skip("this machine's own GPU and torch are judged (gfx-not-in-torch-arch-list)")
        override = log["overrides"][0] if log["overrides"] else None
        evidence = [f"GPU target {t['gfx']} {from_log(log, t)}" for t in log["targets"][:4]]
        if override:
            evidence.append(f"{override['variable']}={override['value']} {from_log(log, override)}")
        if facts.get(TORCH_FLAVOUR) == "rocm":
            archs, where = arch_list(facts)
            build = f"this machine's torch {facts.get(TORCH_VERSION)}"
        elif log["torch"]:
            torch = log["torch"][0]
            build = f"torch {torch['version']} (named in the log)"
            evidence.append(f"torch {torch['version']} {from_log(log, torch)}")
            if torch["version"].lower().split("+")[-1].startswith(("cu", "cpu")):
                return self.fail(f"{build} is a {'CUDA' if '+cu' in torch['version'] else 'CPU'} build, but the log "
                                 f"shows an AMD GPU ({log['targets'][0]['gfx']}): it never uses that GPU.",
                                 evidence=evidence, remediation=self._install(log["targets"][0]["gfx"]))
            archs, where = _archs(torch["version"])
            where = f"the {where} wheels' targets (data/torch_wheels.json)" if archs else where
        else:
            return self.skip("neither this machine nor the log names a torch build")
        if not archs:
            return self.skip(f"the targets of {build} are not known", evidence=evidence)
        evidence.append(f"{build} targets ({where}): {', '.join(archs)}")
        runs = overrides.target_of(override["value"]) if override else None
        missing = [t["gfx"] for t in log["targets"] if not covered(archs, t["gfx"])]
        if not missing:
            return self.ok(f"{build} has code for {', '.join(t['gfx'] for t in log['targets'])}, the target the log "
                           "names; the failure in the log lies elsewhere (see known-error-signatures)",
                           evidence=evidence)
        gfx = missing[0]
        under = (f" The log sets {override['variable']}={override['value']}, so the runtime looked for {runs} code."
                 if override and runs == gfx else "")
        return self.fail(f"{build} has no code for {', '.join(missing)}, the GPU target the log names: GPU work fails "
                         f"with hipErrorNoBinaryForGpu or 'invalid device function'.{under}", evidence=evidence,
                         remediation=self._install(gfx), data={"gfx": missing, "arch_list": archs})

    @staticmethod
    def _install(gfx: str) -> list[str]:
        native = wheels.native_indexes(gfx)
        return ([f"On the machine the log comes from, install torch from the {native[-1]} index "
                 f"(download.pytorch.org/whl/{native[-1]}), whose wheels have {gfx} code."] if native else
                [f"No download.pytorch.org ROCm index builds {gfx}: on the machine the log comes from, run "
                 "rocm-doctor check for the options (TheRock's multi-arch wheels, an override of its family)."])


class LogFromAnotherInterpreter(Check):
    id = "log-from-another-interpreter"
    title = "The log's interpreter against the one rocm-doctor diagnosed"
    area = "torch"
    severity = Severity.MEDIUM
    requires = (LOG_MACHINE, PYTHON_TARGET)

    def run(self, facts):
        log = facts[LOG_MACHINE]
        if not log["pythons"]:
            return self.skip("the log names no Python environment")
        if facts.has(PASTE_SUMMARY):
            return self.skip("a paste is judged alone: no interpreter of this machine to compare it with")
        python = target_python(facts)
        diagnosed = python.replace("\\", "/").lower()
        version = ".".join(str(facts.get(PYTHON_TARGET_VERSION) or "").split(".")[:2])
        theirs = [p for p in log["pythons"] if not diagnosed.startswith(p["prefix"].replace("\\", "/").lower() + "/")
                  and not (p["prefix"].endswith("/.local") and p.get("python") == version)]  # pip --user site
        if len(theirs) < len(log["pythons"]):
            return self.ok(f"the log's program ran in the environment of {python}, the one diagnosed")
        first = theirs[0]
        return self.warn(f"the log's program ran in {first['prefix']}" + (f" (Python {first['python']})"
                                                                          if first.get("python") else "")
                         + f", but rocm-doctor diagnosed {python}: its torch and libraries may not be the log's.",
                         evidence=[f"{p['prefix']} {from_log(log, p)}" for p in theirs[:3]] + [f"diagnosed: {python}"],
                         remediation=[f"Run rocm-doctor check --python with the interpreter of {first['prefix']} "
                                      "(its bin/python, or Scripts\\python.exe on Windows)."])


class LogGfxUnsupportedByRocm(Check):
    id = "log-gfx-unsupported-by-rocm"
    title = "The log's ROCm release against the log's GPU target"
    area = "amd"
    severity = Severity.HIGH
    requires = (LOG_MACHINE,)

    def run(self, facts):
        log = facts[LOG_MACHINE]
        release = (log["rocm"] or log["hip"] or [None])[0]
        if not (log["targets"] and release):
            return self.skip("the log names no GPU target or no ROCm release")
        if gpus(facts):
            return self.skip("this machine's own GPUs are judged (gfx-support-matrix)")
        findings = []
        for target in log["targets"][:4]:
            gfx, result = target["gfx"], support.linux(target["gfx"], release["version"])
            evidence = [f"GPU target {gfx} {from_log(log, target)}", f"ROCm {release['version']} {from_log(log, release)}",
                        f"Linux ROCm {result.release or release['version']}: {gfx} {result.status}"
                        + (f" ({result.note})" if result.note else "") + (f" [{result.source}]" if result.source else "")]
            if result.status == "newer":  # no row to judge by; the log has no machine to ask
                findings.append(self.info(f"{gfx} on ROCm {release['version']} (both from the log): {result.note}",
                                          subject=gfx, evidence=evidence, remediation=[currency.advice()]))
                continue
            if result.status in ("supported", "unknown"):
                findings.append(self.ok(f"{gfx} is {result.status} on ROCm {release['version']} (both from the log)",
                                        subject=gfx, evidence=evidence))
                continue
            findings.append(self.warn(
                f"the log's GPU target {gfx} is {result.status} on the ROCm {release['version']} its paths name"
                + (f": {result.note}" if result.note else "") + ".", subject=gfx, evidence=evidence,
                remediation=[f"Closest working path: {p['text']} [{p['source']}]"
                             for p in support.closest_working_path(gfx, "linux")]))
        return findings


def cuda_torch(log: dict) -> tuple[dict | None, str | None]:
    """(the first CUDA torch build the log names, its wheel index: "cu121")."""
    for torch in log.get("torch") or []:
        local = torch["version"].lower().split("+")[-1]
        if local.startswith("cu") and table.index_cuda(local):
            return torch, local
    return None, None


def _capability(gpu: dict) -> tuple[tuple[int, int] | None, str]:
    """A GPU's compute capability: stated by the tool (deviceQuery), else its name in the GPU catalog."""
    if gpu.get("cc"):
        return tuple(gpu["cc"]), f"{gpu['how']} states it"
    found = catalog.by_name(str(gpu.get("name") or "")) if gpu.get("name") else None
    code = nvidia_arch.parse(found.gfx) if found is not None and found.vendor == "nvidia" else None
    return (code.cc, f"{found.names[0]} in the GPU catalog") if code else (None, "")


class LogDriverOlderThanTorchCuda(Check):
    id = "log-driver-older-than-torch-cuda"
    title = "The log's NVIDIA driver against the CUDA of the log's torch build"
    area = "torch"
    severity = Severity.CRITICAL
    requires = (LOG_MACHINE,)

    def run(self, facts):
        log = facts[LOG_MACHINE]
        driver = next((d for d in log.get("drivers") or [] if d.get("cuda")), None)
        if driver is None:
            return self.skip("the log shows no NVIDIA driver's CUDA version (nvidia-smi's header, deviceQuery, clinfo)")
        if facts.get(TORCH_FLAVOUR) == "cuda":
            return self.skip("this machine's own torch and driver are judged (nvidia-driver-older-than-torch-cuda)")
        torch, index = cuda_torch(log)
        if torch is None:
            return self.skip("the log names no CUDA torch build")
        cuda, have = table.index_cuda(index), driver["cuda"]
        evidence = [f"the NVIDIA driver supports CUDA {have} ({driver['tool']}) {from_log(log, driver)}",
                    f"torch {torch['version']} (CUDA {cuda}) {from_log(log, torch)}"]
        least = table.minimum(cuda, facts.os)
        older_major = table.cuda_key(have)[0] < table.cuda_key(cuda)[0]
        if older_major or table.runs(driver.get("version"), cuda, facts.os) is False:
            found = table.index_for_driver(have)
            return self.fail(
                f"torch {torch['version']} (named in the log) was built with CUDA {cuda}, but the NVIDIA driver the "
                f"log shows supports CUDA {have} at most: CUDA cannot start, so torch sees no GPU."
                + (f" A CUDA {table.cuda_key(cuda)[0]}.x build needs NVIDIA driver {least} or newer." if least else ""),
                evidence=evidence, data={"torch_cuda": cuda, "driver_cuda": have, "minimum": least},
                remediation=[f"On the machine the log comes from, update the NVIDIA driver"
                             + (f" to {least} or newer." if least else "."),
                             *([f"Or install torch from {found[0]} (CUDA {found[1]}), which this driver runs."]
                               if found else [])])
        if table.cuda_key(have) < table.cuda_key(cuda):
            return self.info(f"the driver the log shows supports CUDA {have}, torch {torch['version']} was built with "
                             f"{cuda}: it runs under minor version compatibility, with a limited feature set",
                             evidence=evidence, severity=Severity.LOW)
        return self.ok(f"the driver the log shows (CUDA {have}) runs torch {torch['version']} (CUDA {cuda})",
                       evidence=evidence)


class LogSmNotInTorchBuild(Check):
    id = "log-sm-not-in-torch-build"
    title = "GPU code in the log's CUDA torch build for the log's NVIDIA GPU"
    area = "torch"
    severity = Severity.HIGH
    requires = (LOG_MACHINE,)

    def run(self, facts):
        log = facts[LOG_MACHINE]
        named = [(gpu, *_capability(gpu)) for gpu in log.get("gpus") or []]
        known = [(gpu, cc, how) for gpu, cc, how in named if cc]
        if not known:
            return self.skip("the log names no NVIDIA GPU whose compute capability is known"
                             + (" (a GPU name the catalog lacks, or truncated by nvidia-smi)" if named else ""))
        if facts.get(TORCH_FLAVOUR) == "cuda" and facts.get(TORCH_DEVICES):
            return self.skip("this machine's own GPUs and torch are judged (sm-not-in-torch-arch-list)")
        torch, index = cuda_torch(log)
        if torch is None:
            return self.skip("the log names no CUDA torch build")
        archs = nvidia_arch.wheel_archs(index, facts.get(PLATFORM_MACHINE))
        if not archs:
            return self.skip(f"the machine code of the {index} wheels is not recorded (data/nvidia_arch.json)")
        findings = []
        for gpu, cc, how in known[:4]:
            sm, name = nvidia_arch.sm_name(cc), gpu.get("name") or "the GPU"
            evidence = [f"{name}: compute capability {cc[0]}.{cc[1]} ({how}) {from_log(log, gpu)}",
                        f"torch {torch['version']} {from_log(log, torch)}",
                        f"the {index} wheels' machine code (data/nvidia_arch.json): {', '.join(archs)}"]
            native, ptx = nvidia_arch.code_for(archs, cc)
            if native or ptx:
                findings.append(self.ok(f"torch {torch['version']} has {native or ptx + ' PTX'} for {name} ({sm})",
                                        subject=sm, evidence=evidence))
                continue
            wheel = nvidia_arch.index_for(cc, facts.get(PLATFORM_MACHINE), torch["version"])
            findings.append(self.fail(
                f"torch {torch['version']} (named in the log) has no code for {name} ({sm}): CUDA kernels fail with "
                "'no kernel image is available for execution on the device'.", subject=sm, evidence=evidence,
                data={"sm": sm, "arch_list": archs},
                remediation=[f"On the machine the log comes from, install torch from {wheel}." if wheel else
                             f"No recorded download.pytorch.org CUDA index has {sm} code: an older torch release or a "
                             "source build with TORCH_CUDA_ARCH_LIST is the way."]))
        return findings
