"""HSA_OVERRIDE_GFX_VERSION on Linux/WSL: well formed, of the GPU's family, needed, not hitting an iGPU of
another family, and present where it is the only working path. (Windows: hsa-override-on-windows.)"""

from __future__ import annotations

from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine import remedy as S
from rocm_doctor.facts.keys import TORCH_FLAVOUR
from rocm_doctor.knowledge import overrides, wheels
from rocm_doctor.parsers.hsa_override import variables as override_variables

from rocm_doctor.checks.amd_common import (OVERRIDE, arch_list, covered, gpus, integrated, label, override_for,
                                           rc_evidence, real_gfx, recommended_override)
from rocm_doctor.checks.visibility import set_in_rc_file


class HsaOverrideGfxVersion(Check):
    id = "hsa-override-gfx-version"
    title = "HSA_OVERRIDE_GFX_VERSION against each GPU"
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
        discrete_ok = any(not integrated(facts, g) and self._fits(facts, g) for g in found)
        return [self._judge(facts, gpu, discrete_ok) for gpu in found if override_for(facts, gpu)]

    def _fits(self, facts, gpu) -> bool:
        override, gfx = override_for(facts, gpu), real_gfx(facts, gpu)
        return bool(override and gfx and overrides.matches_family(override[1], gfx))

    def _malformed(self, facts, name, value):
        fields, why = overrides.parse(value)
        if fields:
            return None
        needed = sorted({v for g in gpus(facts) if not integrated(facts, g) and (v := _needed(facts, g))})
        return self.fail(
            f"{name}={value!r} is malformed ({why}): ROCr ignores it or rejects it ('{name} {value} is invalid').",
            subject=name, evidence=[f"{name}={value!r}", *rc_evidence(facts, name)],
            remediation=[] if len(needed) == 1 else [
                "Also remove it wherever else it is set (a service unit, a container, a job script)."],
            fix=[S.set_env(name, needed[0], note="the override this GPU needs, well formed")] if len(needed) == 1
            else _unset(facts, name))

    def _judge(self, facts, gpu, discrete_ok):
        variable, value = override_for(facts, gpu)
        gfx, target = real_gfx(facts, gpu), overrides.target_of(value)
        subject = f"{gpu.get('index')}"
        evidence = [f"{variable}={value} → the runtime reports and loads {target} code",
                    f"{label(gpu)}: hardware gfx {gfx or 'unknown'}", *rc_evidence(facts, variable)]
        archs, where = arch_list(facts)
        if archs:
            evidence.append(f"torch arch list ({where}): {', '.join(archs)}")
        right = recommended_override(facts, gpu)
        if not gfx:
            return self.info(f"{variable}={value} is set for {label(gpu)}, whose real gfx is unknown (no KFD or SMI "
                             "reading)", subject=subject, evidence=evidence)
        if target == gfx:
            return self.info(f"{variable}={value} names {label(gpu)}'s own {gfx}: it changes nothing", subject=subject,
                             evidence=evidence, fix=self._replace(facts, gpu, variable))
        if not overrides.matches_family(value, gfx):
            if integrated(facts, gpu) and discrete_ok and variable == OVERRIDE:
                return self._igpu(facts, gpu, gfx, value, evidence)
            fix = self._replace(facts, gpu, variable)
            if not right:
                advice = f"No override makes {gfx} run another family's code; install a torch built for {gfx} (see " \
                         "gfx-not-in-torch-arch-list)."
            elif isinstance(fix[0], S.SetEnv):
                advice = f"The right value for {gfx} is {right} (runs {overrides.target_of(right)} code)."
            else:
                advice = f"Without it the runtime loads {gfx} code; if torch has none, see gfx-not-in-torch-arch-list."
            return self.fail(
                f"{variable}={value} makes {label(gpu)} ({gfx}) run {target} code, another family's: expect crashes, "
                "hangs, 'HIP error: invalid device function' or HSA_STATUS_ERROR_INVALID_ISA.",
                subject=subject, evidence=evidence, remediation=[advice], fix=fix,
                data={"value": value, "gfx": gfx, "right": right}, severity=Severity.CRITICAL)
        if archs and covered(archs, gfx):
            return self.warn(
                f"{variable}={value} is not needed: torch has {label(gpu)}'s own {gfx} code, and forcing {target} can "
                "hurt (libraries built for the real target lose their code objects: missing 'CO in the bundle', "
                "crashes; ROCm#4380).", subject=subject, evidence=evidence, fix=_unset(facts, variable),
                severity=Severity.MEDIUM)
        if archs and not covered(archs, target):
            return self.warn(f"{variable}={value} makes {label(gpu)} load {target} code, but torch has none either "
                             "(see gfx-not-in-torch-arch-list)", subject=subject, evidence=evidence)
        return self.ok(f"{variable}={value} is the right override for {label(gpu)} ({gfx} runs {target} code)",
                       subject=subject, evidence=evidence)

    def _igpu(self, facts, gpu, gfx, value, evidence):
        """Move the override to per-device variables (ROCm 6.2+) of the discrete GPUs it fits."""
        nodes = [g["node"] for g in gpus(facts) if not integrated(facts, g) and g.get("node") is not None
                 and overrides.matches_family(value, real_gfx(facts, g) or "")]
        per_device = [S.set_env(f"{OVERRIDE}_{node}", value, note=f"the override for KFD node {node} only")
                      for node in nodes]
        return self.warn(
            f"{OVERRIDE}={value} is meant for the discrete GPU but also applies to the integrated {label(gpu)}, whose "
            f"{gfx} is not of that family: programs that touch the iGPU crash or hang.",
            subject=str(gpu.get("index")), evidence=evidence, severity=Severity.MEDIUM,
            remediation=[
                "Per-device overrides need ROCm 6.2 or newer; before that, hide the iGPU from ROCm instead (see "
                "igpu-enumerated-first)." if nodes else
                "Hide the iGPU from ROCm (see igpu-enumerated-first), or give the override per device "
                f"({OVERRIDE}_<KFD node>, ROCm 6.2+) for the discrete GPU only."],
            fix=(per_device + _unset(facts, OVERRIDE)) if nodes else [])

    def _missing(self, facts, found):
        """No override set: warn where it is the only working path (no wheel builds the gfx natively)."""
        if facts.get(TORCH_FLAVOUR) != "rocm":
            return None
        archs, _ = arch_list(facts)
        findings = []
        for gpu in (g for g in found if not integrated(facts, g)):
            gfx = real_gfx(facts, gpu)
            value = recommended_override(facts, gpu)
            if not value or not archs or covered(archs, gfx) or wheels.native_indexes(gfx) \
                    or not covered(archs, overrides.target_of(value)):
                continue
            findings.append(self.warn(
                f"{label(gpu)} is {gfx}, which no download.pytorch.org wheel builds; {OVERRIDE}={value} (run "
                f"{overrides.target_of(value)} code, same family) is the usual way to use it with this torch.",
                subject=str(gpu.get("index")), fix=[S.set_env(OVERRIDE, value)],
                evidence=[f"{label(gpu)}: {gfx}", "torch arch list: " + ", ".join(archs)],
                data={"reason": "override-missing"}))
        return findings or None

    @staticmethod
    def _replace(facts, gpu, variable):
        """Set the override the GPU needs (torch lacks its gfx but has the target's code), else unset it."""
        value = _needed(facts, gpu)
        return [S.set_env(variable, value, note="the override of this GPU's family")] if value else _unset(
            facts, variable)


def _needed(facts, gpu):
    """The override a GPU needs with this torch: the recommended one when torch lacks the GPU's gfx and has the
    code of the override's target."""
    gfx = real_gfx(facts, gpu)
    value = recommended_override(facts, gpu)
    archs, _ = arch_list(facts)
    if facts.get(TORCH_FLAVOUR) != "rocm" or not value or not archs or covered(archs, gfx):
        return None
    return value if covered(archs, overrides.target_of(value)) else None


def _unset(facts, variable):
    return S.unset_where_set(variable, set_in_rc_file(facts, variable))
