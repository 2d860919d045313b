"""Settings and hipconfig values from older ROCm/HIP releases (data/legacy_values.json), read with the meaning they
had: HIP_PLATFORM=hcc is amd, not "not amd"; HIP_COMPILER=hcc in the environment is a stale variable, not a
half-installed HIP; HCC_AMDGPU_TARGET still picks hipcc's targets. Each is reported as stale, with what it did then
and what today's tools do with it."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.keys import HIP_CONFIG
from rocm_doctor.knowledge import legacy

from rocm_doctor.checks.amd_common import effective_gfx, gpus, rc_evidence

HIPCC_TARGETS = "HCC_AMDGPU_TARGET"


class LegacyHipSetting(Check):
    id = "legacy-hip-setting"
    title = "Settings that keep a meaning from an older ROCm release"
    area = "amd"
    severity = Severity.MEDIUM
    docs = ("https://github.com/ROCm/hip/issues/2104",)

    def run(self, facts):
        findings = [f for f in (self._variable(facts, name) for name in legacy.variables()) if f]
        findings += self._hipconfig(facts)
        return findings or self.ok("no HIP variable or hipconfig value from an older release")

    def _variable(self, facts, name):
        value = (facts.env.get(name) or "").strip()
        old = legacy.reading(name, value) if value else None
        if old is None:
            return None
        evidence = [f"{name}={value}", *rc_evidence(facts, name), f"then: {old.then}", f"now: {old.now} [{old.source}]"]
        remediation = [f"Remove {name} where it is set (a shell rc file, a job script, a container definition)"
                       + (f", or set {name}={old.means}." if old.means else ".")]
        if name == HIPCC_TARGETS:
            return self._targets(facts, value, evidence, remediation)
        if old.means:
            return self.info(f"{name}={value} is the name HIP used for {old.means} up to 4.0: today's hipcc and "
                             f"hipconfig read it as {old.means} and print a deprecation warning.", subject=name,
                             severity=Severity.LOW, evidence=evidence, remediation=remediation)
        if name == "HCC_HOME":
            return self.info(f"{name}={value} is left from an HCC-era setup: {old.now}.", subject=name,
                             severity=Severity.LOW, evidence=evidence, remediation=remediation)
        return self.warn(f"{name}={value} is a value from an older HIP ({old.then}); now {old.now}.", subject=name,
                         evidence=evidence, remediation=remediation)

    def _targets(self, facts, value, evidence, remediation):
        targets = [t.strip().split(":")[0] for t in value.split(",") if t.strip()]
        missing = [(g, effective_gfx(facts, g)) for g in gpus(facts)
                   if effective_gfx(facts, g) and effective_gfx(facts, g) not in targets]
        if missing:
            names = ", ".join(sorted({gfx for _, gfx in missing}))
            return self.warn(f"{HIPCC_TARGETS}={value} makes hipcc build only {', '.join(targets)} when its command "
                             f"line names no --offload-arch, and this machine's GPU runs {names}: HIP code built that "
                             "way fails with 'invalid device function'. torch and the runtime ignore the variable.",
                             subject=HIPCC_TARGETS, evidence=evidence, remediation=remediation)
        return self.info(f"{HIPCC_TARGETS}={value} only sets hipcc's default targets; it does nothing for torch or the "
                         "HIP runtime (an HSA_OVERRIDE_GFX_VERSION does not need it).", subject=HIPCC_TARGETS,
                         severity=Severity.LOW, evidence=evidence, remediation=remediation)

    def _hipconfig(self, facts):
        config = facts.get(HIP_CONFIG) or {}
        version = (config.get("version") or {}).get("text")
        said = {"HIP_PLATFORM": config.get("platform"), "HIP_COMPILER": config.get("compiler"),
                "HIP_RUNTIME": config.get("runtime")}
        stale = [(name, value, legacy.reading(name, value)) for name, value in said.items()
                 if value and name not in facts.env]  # a variable set here is judged above
        stale = [(name, value, old) for name, value, old in stale if old is not None]
        if not stale:
            return []
        era = legacy.hcc_era(version)
        readings = [f"{name} {value} = {old.means}" if old.means else f"{name} {value}: {old.then}"
                    for name, value, old in stale]
        if era or all(old.means for _, _, old in stale):
            return [self.info(f"hipconfig of HIP {version or '(version unknown)'} prints the names of its time ("
                              + "; ".join(readings) + ")" + (": an HCC-era HIP, older than every release PyTorch or "
                              "rocm-doctor's tables cover." if era else ", read with that meaning."),
                              subject="hipconfig", severity=Severity.LOW,
                              evidence=[f"hipconfig --full: {name} : {value}" for name, value, _ in stale])]
        return []
