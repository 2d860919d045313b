"""Each AMD GPU's gfx against AMD's support matrix for this OS and the installed ROCm / HIP release; a release newer
than the tables is judged by what the machine shows (torch's arch list, the libraries' kernel files)."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import GPU_INVENTORY, GPU_TARGETS, ROCM_LIBRARIES, TORCH_ARCH_LIST
from rocm_doctor.knowledge import currency, support

from rocm_doctor.checks.amd_common import covered, gpus, integrated, label, real_gfx, rocm_version


def machine_shows(facts, gfx: str) -> tuple[str, list[str]]:
    """What the installed software says about `gfx` when the tables cannot: ("has-code" | "lacks-code" | "silent",
    evidence). torch's own arch list and the kernel files rocBLAS / hipBLASLt / MIOpen ship are the witnesses."""
    evidence, verdicts = [], []
    archs = facts.get(TORCH_ARCH_LIST)
    if archs:
        verdicts.append(covered(archs, gfx))
        evidence.append(f"torch.cuda.get_arch_list(): {', '.join(archs)} ({'has' if verdicts[-1] else 'no'} {gfx})")
    for folder in facts.get(ROCM_LIBRARIES) or []:
        if folder.get("exists") and folder.get("files"):
            verdicts.append(gfx in (folder.get("gfx") or []))
            evidence.append(f"{folder.get('library')} kernel files in {folder.get('path')}: "
                            f"{'has' if verdicts[-1] else 'no'} {gfx}")
    if not verdicts:
        return "silent", ["neither torch's arch list nor a library's kernel files were found to tell"]
    return ("has-code" if all(verdicts) else "lacks-code"), evidence


def paths_text(gfx: str, platform: str) -> list[str]:
    return [f"Closest working path: {p['text']} (source: {support.source_name(p['source'])})"
            for p in support.closest_working_path(gfx, platform)]


class GfxSupportMatrix(Check):
    id = "gfx-support-matrix"
    title = "The GPU on AMD's support list for the installed ROCm"
    area = "amd"
    severity = Severity.MEDIUM
    platforms = (Platform.LINUX, Platform.WINDOWS)  # WSL has its own list: wsl-rocm-support
    requires = (GPU_INVENTORY, GPU_TARGETS)

    def run(self, facts):
        found = gpus(facts)
        if not found:
            return self.skip("no AMD GPU found")
        version, where = rocm_version(facts)
        only_igpus = all(integrated(facts, g) for g in found)
        findings = []
        for gpu in found:
            gfx = real_gfx(facts, gpu)
            if not gfx:
                findings.append(self.skip(f"{label(gpu)}: gfx unknown", subject=str(gpu.get("index"))))
                continue
            findings.append(self._one(facts, gpu, gfx, version, where, minor=integrated(facts, gpu) and not only_igpus))
        return findings

    def _one(self, facts, gpu, gfx, version, where, minor):
        subject = str(gpu.get("index"))
        os_name = "Windows HIP SDK" if facts.os == "windows" else "Linux ROCm"
        evidence = [f"{label(gpu)}: {gfx}", f"installed release: {version} (from {where})" if version
                    else "installed release: unknown (no hipconfig, no .info/version, torch has no HIP)"]
        if version is None:
            return self.info(f"{label(gpu)} is {gfx}; the installed ROCm/HIP release is unknown, so support cannot be "
                             "judged", subject=subject, evidence=evidence, remediation=paths_text(gfx, facts.os))
        if facts.os == "windows":
            result = support.windows(gfx, version)
            status = ("supported" if result.sdk == "supported" else "runtime-only") if result.runtime == "supported" \
                else result.runtime
        else:
            result = support.linux(gfx, version)
            status = result.status
        evidence.append(f"{os_name} {result.release or version}: {status}" + (f" ({result.note})" if result.note else "")
                        + (f" (source: {support.source_name(result.source)})" if result.source else ""))
        data = {"gfx": gfx, "release": result.release, "status": status}
        if status == "supported":
            return self.ok(f"{label(gpu)} ({gfx}) is supported by {os_name} {result.release}", subject=subject,
                           evidence=evidence, data=data)
        if status == "unknown":
            return self.info(f"{label(gpu)} ({gfx}): {os_name} {version} is not in rocm-doctor's tables", subject=subject,
                             evidence=evidence, data=data)
        if status == "newer":
            return self._newer(facts, gpu, gfx, result.note, evidence, data)
        meaning = {
            "deprecated": "still works but is on its way out: a later release may drop it",
            "runtime-only": "the HIP runtime runs it, but the HIP SDK's math libraries (rocBLAS, hipBLAS...) have no "
                            "kernels for it; torch wheels that bundle their own libraries are the way",
            "unsupported": "AMD does not build or test this release for it: libraries may lack its kernels",
        }[status]
        message = f"{label(gpu)} ({gfx}) is {status} on {os_name} {result.release or version}: {meaning}."
        remediation = paths_text(gfx, facts.os)
        if minor:
            return self.info(message + " It is an integrated GPU next to a discrete one; see igpu-enumerated-first.",
                             subject=subject, evidence=evidence, remediation=remediation, data=data)
        return self.warn(message, subject=subject, evidence=evidence, remediation=remediation, data=data,
                         severity=Severity.LOW if status == "deprecated" else None)

    def _newer(self, facts, gpu, gfx, note, evidence, data):
        """A release past the tables: never 'unsupported' for want of a row; the machine's own answer instead."""
        verdict, shown = machine_shows(facts, gfx)
        data = dict(data, machine=verdict)
        said = {"has-code": f"the installed software has code for {gfx}",
                "lacks-code": f"the installed software lacks code for {gfx} (see gfx-not-in-torch-arch-list and "
                              "rocblas-library-coverage)",
                "silent": f"nothing installed shows whether it has code for {gfx}"}[verdict]
        message = f"{label(gpu)} ({gfx}): {note}; judged by the machine instead: {said}"
        return self.info(message, subject=str(gpu.get("index")), evidence=evidence + shown,
                         remediation=[currency.advice()], data=data)
