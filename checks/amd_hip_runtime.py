"""The HIP runtime torch runs on: the system HIP release against torch.version.hip, which libamdhip64 torch
loaded (its own, /opt/rocm's, or two), HIP_PLATFORM (with its pre-4.1 names read as they were meant), and
hipconfig's HCC fallback of a half-installed stack."""

from __future__ import annotations

import posixpath

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import (GPU_PCI, HIP_CONFIG, HIP_VERSION, ROCM_PATHS_KEY, TORCH_FILE, TORCH_HIP,
                                    TORCH_LIBRARIES)
from rocm_doctor.knowledge import legacy, versions

from rocm_doctor.checks.amd_common import gpus
from rocm_doctor.checks.symptoms import TORCH_GPU_WORK
from rocm_doctor.checks.visibility import set_in_rc_file

HIP_LIB = "libamdhip64.so"
LD_ADVICE = ["Let torch use the libamdhip64 it ships: keep ROCm's lib folder out of LD_LIBRARY_PATH for this "
             "environment (or install the torch wheel built for your ROCm release); where a loader configuration "
             "(/etc/ld.so.conf.d) puts it first, remove it there.",
             "Afterwards rocm-doctor check lists the libamdhip64 torch loads."]


def loaded_runtimes(facts) -> list[str]:
    return list(dict.fromkeys(p for p in facts.get(TORCH_LIBRARIES) or []
                              if posixpath.basename(p).startswith(HIP_LIB)))


def release(text) -> str | None:
    parsed = versions.parse(text)
    return f"{parsed[0]}.{parsed[1]}" if parsed else None


class HipRuntimeMismatch(Check):
    id = "hip-runtime-mismatch"
    title = "torch's HIP runtime against the HIP version of its build"
    explains = TORCH_GPU_WORK
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX, Platform.WSL)

    def run(self, facts):
        amd = bool(gpus(facts)) or any(g.get("vendor") == "amd" for g in facts.get(GPU_PCI) or [])
        findings = [f for f in (self._platform(facts, amd), self._hcc(facts)) if f]
        torch_hip, system = facts.get(TORCH_HIP), (facts.get(HIP_VERSION) or {}).get("text")
        runtimes = loaded_runtimes(facts)
        if torch_hip and (system or runtimes):
            findings.append(self._versions(facts, torch_hip, system, runtimes))
        if findings:
            return findings
        if not (torch_hip or system):
            return self.skip("neither a system HIP nor a ROCm torch was found")
        return self.ok(f"HIP {system or torch_hip}" + (" (system)" if system else " (torch's)"))

    def _platform(self, facts, amd):
        value = facts.env.get("HIP_PLATFORM")
        config = (facts.get(HIP_CONFIG) or {}).get("platform")
        # HIP up to 4.0 said hcc for amd and nvcc for nvidia; a value hipcc never knew is legacy-hip-setting's
        old = legacy.reading("HIP_PLATFORM", value) if value else None
        if old is not None and old.means is None:
            return None
        platform, reported = (old.means if old else value), _platform_today(config)
        # HIP_PLATFORM=amd decides for hipconfig and hipcc whatever else they detect
        if not amd or platform == "amd" or (value in (None, "") and reported in (None, "amd")):
            return None
        wrong = value not in (None, "")
        spelled = f" ({value} is HIP's old name for {old.means})" if old else ""
        return self.fail(
            f"HIP is set up for NVIDIA on a machine with an AMD GPU (HIP_PLATFORM={value or 'unset'}{spelled}, "
            f"hipconfig platform {config or 'unknown'}): hipcc builds CUDA code and HIP programs find no AMD device.",
            subject="platform", evidence=[f"HIP_PLATFORM={value}", f"hipconfig --full: HIP_PLATFORM {config}"],
            remediation=["Also remove it wherever else it is set (a job script, a container definition)."] if wrong
            else ["Without HIP_PLATFORM, hipconfig guesses the platform from the compilers it finds."],
            fix=S.unset_where_set("HIP_PLATFORM", set_in_rc_file(facts, "HIP_PLATFORM")) if wrong
            else [S.set_env("HIP_PLATFORM", "amd", note="make hipconfig and hipcc target the AMD GPU")])

    def _hcc(self, facts):
        """The HCC fallback of a half-installed HIP: hipconfig reports the HCC compiler on a HIP after HCC, or cannot
        run it. Platform hcc alone is HIP 4.0's name for amd; HIP_COMPILER=hcc set in the environment is a stale
        variable (legacy-hip-setting), not a broken install; an HCC-era HIP's working HCC is its real toolchain."""
        config = facts.get(HIP_CONFIG) or {}
        if (config.get("compiler") or "").lower() != "hcc" or (facts.env.get("HIP_COMPILER") or "").lower() == "hcc":
            return None
        cannot_run = any("hcc/bin/hcc" in line for line in config.get("problems") or [])
        if legacy.hcc_era((config.get("version") or {}).get("text")) and not cannot_run:
            return None
        return self.fail(
            "hipconfig falls back to the removed HCC toolchain (HIP_COMPILER hcc): the HIP install is incomplete "
            "(e.g. only hip-base, without the clang compiler and the ROCclr runtime).",
            subject="hcc", evidence=[f"HIP_PLATFORM {config.get('platform')}, HIP_COMPILER {config.get('compiler')}, "
                                     f"HIP_RUNTIME {config.get('runtime')}", *(config.get("problems") or [])[:4]],
            remediation=["Or install the packages rocm-hip-runtime and rocm-hip-sdk with the distribution's package "
                         "manager: hip-base alone is not a HIP install."],
            fix=[S.run_command(["sudo", "amdgpu-install", "--usecase=rocm"],
                               description="install the full ROCm stack, HIP runtime and compiler included",
                               needs_admin=True, note="hip-base alone is not a HIP install")])

    def _versions(self, facts, torch_hip, system, runtimes):
        torch_dir = posixpath.dirname(facts.get(TORCH_FILE) or "")
        foreign = [p for p in runtimes if not (torch_dir and p.startswith(torch_dir + "/"))]
        evidence = [f"torch.version.hip = {torch_hip}", f"system HIP (hipconfig) = {system or 'not found'}",
                    *(f"loaded: {p}" for p in runtimes)]
        if facts.env.get("LD_LIBRARY_PATH"):
            evidence.append(f"LD_LIBRARY_PATH={facts.env['LD_LIBRARY_PATH']}")
        if len(runtimes) > 1:
            return self.fail(f"torch's process loaded {len(runtimes)} HIP runtimes at once ({', '.join(runtimes)}): "
                             "two copies of HIP state crash or corrupt memory (free(): invalid pointer).",
                             subject="runtime", evidence=evidence, remediation=LD_ADVICE,
                             fix=_ld_steps(facts, foreign))
        mismatch = system and release(system) != release(torch_hip)
        if foreign and mismatch:
            return self.fail(f"torch (built for HIP {release(torch_hip)}) runs on the system's HIP {release(system)} "
                             f"({foreign[0]}), not its own: expect missing symbols, crashes or wrong results.",
                             subject="runtime", evidence=evidence, remediation=LD_ADVICE,
                             fix=_ld_steps(facts, foreign))
        if mismatch:
            return self.info(f"the system has HIP {release(system)}, torch brings its own HIP {release(torch_hip)}: "
                             "fine for torch itself; HIP/C++ extensions built with this hipcc against this torch may "
                             "not load.", subject="runtime", evidence=evidence)
        return self.ok(f"torch's HIP {release(torch_hip)} matches the runtime it uses", subject="runtime",
                       evidence=evidence)


def _platform_today(value: str | None) -> str | None:
    old = legacy.reading("HIP_PLATFORM", value) if value else None
    return old.means if old else value


def _ld_steps(facts, foreign: list[str]) -> list:
    """Drop the LD_LIBRARY_PATH entries that hold a foreign libamdhip64, in this shell and where an rc file sets it."""
    folders = {posixpath.dirname(p) for p in foreign}
    listed = (facts.get(ROCM_PATHS_KEY) or {}).get("LD_LIBRARY_PATH") or []
    real = {e.get("entry"): e.get("realpath") for e in listed if isinstance(e, dict)}
    entries = [e for e in (facts.env.get("LD_LIBRARY_PATH") or "").split(":")
               if e and {e.rstrip("/"), (real.get(e) or "").rstrip("/")} & folders]
    scopes = ["process"] + (["user"] if set_in_rc_file(facts, "LD_LIBRARY_PATH") else [])
    return [S.path_remove(e, "LD_LIBRARY_PATH", scope=scope, note="let torch load the HIP runtime it ships")
            for e in dict.fromkeys(entries) for scope in scopes]
