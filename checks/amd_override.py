"""HSA_OVERRIDE_GFX_VERSION on Linux/WSL: well formed, of the GPU's family, needed, not hitting an iGPU of
another family, and present where it is the only working path. (Windows: hsa-override-on-windows.)"""

from __future__ import annotations

from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine import remedy as S
from rocm_doctor.knowledge import overrides, wheels

from rocm_doctor.checks.amd_common import (OVERRIDE, arch_list, covered, gpus, integrated, label, override_for,
                                           override_variables, rc_evidence, real_gfx, set_lines, unset_lines)


class HsaOverrideGfxVersion(Check):
    id = "hsa-override-gfx-version"
    title = "HSA_OVERRIDE_GFX_VERSION is right for each GPU"
    explains = (Explains("torch-cuda-unavailable", when_failing), Explains("torch-probe-crashed", when_failing),
                Explains("gpu-kernel*", when_failing), Explains("hsa-override-kernels-fail", when_failing),
                Explains("sdpa-math-fallback", when_failing), Explains("bench-*", when_failing),
                Explains("gfx-not-in-torch-arch-list", when_failing))
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX, Platform.WSL)
    docs = ("https://github.com/ROCm/ROCm/issues/2353", "https://github.com/ROCm/ROCm/issues/4380")

    def run(self, facts):
        variables = override_variables(facts.env)
        found = gpus(facts)
        findings = [f for name, value in variables.items() if (f := self._malformed(facts, name, value))]
        if findings:
            return findings
        if not variables:
            if not found:
                return self.skip("no AMD GPU found and no override set")
            return self._missing(facts, found) or self.ok(f"{OVERRIDE} is not set")
        if not found:
            return self.skip(f"{OVERRIDE} is set, but no AMD GPU was found to judge it against")
        discrete_ok = any(not integrated(g) and self._fits(facts, g) for g in found)
        return [self._judge(facts, gpu, discrete_ok) for gpu in found if override_for(facts.env, gpu)]

    def _fits(self, facts, gpu) -> bool:
        override, gfx = override_for(facts.env, gpu), real_gfx(gpu, facts.env)
        return bool(override and gfx and overrides.matches_family(override[1], gfx))

    def _malformed(self, facts, name, value):
        fields, why = overrides.parse(value)
        if fields:
            return None
        right = sorted({v for g in gpus(facts) if (v := overrides.recommended(real_gfx(g, facts.env) or ""))})
        return self.fail(
            f"{name}={value!r} is malformed ({why}): ROCr ignores it or rejects it ('{name} {value} is invalid').",
            subject=name, evidence=[f"{name}={value!r}", *rc_evidence(facts, name)],
            remediation=(set_lines(facts, name, right[0]) if len(right) == 1 else []) + unset_lines(
                facts, name, facts.get("shell.rc_lines")))

    def _judge(self, facts, gpu, discrete_ok):
        variable, value = override_for(facts.env, gpu)
        gfx, target = real_gfx(gpu, facts.env), overrides.target_of(value)
        subject = f"{gpu.get('index')}"
        evidence = [f"{variable}={value} → the runtime reports and loads {target} code",
                    f"{label(gpu)}: hardware gfx {gfx or 'unknown'}", *rc_evidence(facts, variable)]
        archs, where = arch_list(facts)
        if archs:
            evidence.append(f"torch arch list ({where}): {', '.join(archs)}")
        right = overrides.recommended(gfx) if gfx else None
        unset = unset_lines(facts, variable, facts.get("shell.rc_lines"))
        if not gfx:
            return self.info(f"{variable}={value} is set for {label(gpu)}, whose real gfx is unknown (no KFD or SMI "
                             "reading)", subject=subject, evidence=evidence)
        if target == gfx:
            return self.info(f"{variable}={value} names {label(gpu)}'s own {gfx}: it changes nothing", subject=subject,
                             evidence=evidence, remediation=unset)
        if not overrides.matches_family(value, gfx):
            if integrated(gpu) and discrete_ok and variable == OVERRIDE:
                return self._igpu(facts, gpu, gfx, value, evidence)
            fix = [f"The right value for {gfx} is {right} (runs {overrides.target_of(right)} code):",
                   *set_lines(facts, variable, right)] if right else [
                       f"No override makes {gfx} run another family's code; unset it and install a torch built for "
                       f"{gfx} (see gfx-not-in-torch-arch-list)."]
            return self.with_fix(self.fail(
                f"{variable}={value} makes {label(gpu)} ({gfx}) run {target} code, another family's: expect crashes, "
                "hangs, 'HIP error: invalid device function' or HSA_STATUS_ERROR_INVALID_ISA.",
                subject=subject, evidence=evidence, remediation=fix + ([] if right else unset),
                data={"value": value, "gfx": gfx, "right": right}, severity=Severity.CRITICAL),
                S.set_env(variable, right) if right else S.unset_env(variable))
        if archs and covered(archs, gfx):
            return self.with_fix(self.warn(
                f"{variable}={value} is not needed: torch has {label(gpu)}'s own {gfx} code, and forcing {target} can "
                "hurt (libraries built for the real target lose their code objects: missing 'CO in the bundle', "
                "crashes; ROCm#4380).", subject=subject, evidence=evidence, remediation=unset,
                severity=Severity.MEDIUM), S.unset_env(variable))
        if archs and not covered(archs, target):
            return self.warn(f"{variable}={value} makes {label(gpu)} load {target} code, but torch has none either "
                             "(see gfx-not-in-torch-arch-list)", subject=subject, evidence=evidence)
        return self.ok(f"{variable}={value} is the right override for {label(gpu)} ({gfx} runs {target} code)",
                       subject=subject, evidence=evidence)

    def _igpu(self, facts, gpu, gfx, value, evidence):
        node = gpu.get("node")
        return self.warn(
            f"{OVERRIDE}={value} is meant for the discrete GPU but also applies to the integrated {label(gpu)}, whose "
            f"{gfx} is not of that family: programs that touch the iGPU crash or hang.",
            subject=str(gpu.get("index")), evidence=evidence, severity=Severity.MEDIUM,
            remediation=[
                "Hide the iGPU from ROCm (see igpu-enumerated-first for the exact value), e.g. ROCR_VISIBLE_DEVICES "
                "listing only the discrete GPU(s).",
                f"Or give the override per device (ROCm 6.2+): {OVERRIDE}_<KFD node>=... for the discrete GPU"
                + (f" and unset {OVERRIDE} (this iGPU is node {node})" if node is not None else ""),
            ])

    def _missing(self, facts, found):
        """No override set: warn where it is the only working path (no wheel builds the gfx natively)."""
        if facts.get("torch.flavour") != "rocm":
            return None
        archs, _ = arch_list(facts)
        findings = []
        for gpu in (g for g in found if not integrated(g)):
            gfx = real_gfx(gpu, facts.env)
            value = overrides.recommended(gfx) if gfx else None
            if not value or not archs or covered(archs, gfx) or wheels.native_indexes(gfx) \
                    or not covered(archs, overrides.target_of(value)):
                continue
            findings.append(self.with_fix(self.warn(
                f"{label(gpu)} is {gfx}, which no download.pytorch.org wheel builds; {OVERRIDE}={value} (run "
                f"{overrides.target_of(value)} code, same family) is the usual way to use it with this torch.",
                subject=str(gpu.get("index")), remediation=set_lines(facts, OVERRIDE, value),
                evidence=[f"{label(gpu)}: {gfx}", "torch arch list: " + ", ".join(archs)],
                data={"reason": "override-missing"}),
                S.set_env(OVERRIDE, value)))
        return findings or None
