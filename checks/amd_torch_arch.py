"""torch's compiled GPU targets against each AMD GPU's real gfx: the predictor of hipErrorNoBinaryForGpu and
"HIP error: invalid device function"."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.facts import target_python
from rocm_doctor.fix import steps as S
from rocm_doctor.knowledge import overrides, wheels
from rocm_doctor.knowledge.store import load

from rocm_doctor.checks.amd_common import (arch_list, covered, effective_gfx, gpus, integrated, label, override_for,
                                           real_gfx, set_lines)
from rocm_doctor.checks.torch_install import flavour_name

SOURCE_BUILD = ("Build torch for it: PYTORCH_ROCM_ARCH={gfx} python setup.py develop in a pytorch checkout "
                "(https://github.com/pytorch/pytorch#amd-rocm-support); slow, last resort.")


def remedies(facts, gfx: str, archs: list[str] | None) -> tuple[list[str], list]:
    """(advice, fix steps) in order: a wheel index that builds gfx natively, then (Linux/WSL) an override to a
    compatible family target, then building from source."""
    python = target_python(facts, "python")
    base = load("torch_wheels.json")["index_base"]
    advice, fix = [], []
    native = wheels.native_indexes(gfx) if facts.os != "windows" else []
    if native:
        url = base + native[-1]
        advice.append(f"Install a torch built for {gfx} ({native[-1]} wheels): {wheels.pip_install_command(python, url)}")
        fix.append(S.pip_install(python, ["torch"], url, extra_args=["--force-reinstall"],
                                 note=f"a torch build whose arch list has {gfx}"))
    family = wheels.therock_family(gfx)
    if family and (facts.os != "windows" or family.get("windows")):
        advice.append(f"AMD's TheRock wheels for {family['family']} build {gfx} natively: "
                      + wheels.pip_install_command(python, family["index"]))
    multi = wheels.therock_multi_arch(gfx)
    if multi and not family:
        advice.append("AMD's TheRock multi-arch wheels: "
                      + wheels.pip_install_command(python, multi["index"], packages=f"'{multi['torch']}'"))
    value = overrides.recommended(gfx) if facts.os != "windows" else None
    if value and (archs is None or covered(archs, overrides.target_of(value))):
        advice += [f"Or make the runtime load {overrides.target_of(value)} code (same family) with "
                   f"HSA_OVERRIDE_GFX_VERSION={value}:"] + set_lines(facts, "HSA_OVERRIDE_GFX_VERSION", value)
        if not native:
            fix.append(S.set_env("HSA_OVERRIDE_GFX_VERSION", value, note=f"run {overrides.target_of(value)} code on {gfx}"))
    advice.append(SOURCE_BUILD.format(gfx=gfx))
    return advice, fix


class GfxNotInTorchArchList(Check):
    id = "gfx-not-in-torch-arch-list"
    title = "torch has GPU code for this GPU's gfx target"
    area = "amd"
    severity = Severity.HIGH
    requires = ("gpu.inventory", "torch.flavour")

    def run(self, facts):
        found = gpus(facts)
        judged = [g for g in found if not integrated(g)] or found
        if not judged:
            return self.skip("no AMD GPU found")
        if facts["torch.flavour"] != "rocm":
            return self._not_rocm(facts, judged)
        archs, where = arch_list(facts)
        if archs is None:
            return self.skip("torch did not report its arch list (see torch-cuda-unavailable)")
        return [self._one(facts, gpu, archs, where) for gpu in judged]

    def _one(self, facts, gpu, archs, where):
        gfx, subject = real_gfx(gpu, facts.env), str(gpu.get("index"))
        evidence = [f"{label(gpu)}: hardware gfx {gfx}", f"torch {facts.get('torch.version')} arch list ({where}): "
                    + ", ".join(archs)]
        if not gfx:
            return self.skip(f"{label(gpu)}: its real gfx is unknown", subject=subject, evidence=evidence)
        if covered(archs, gfx):
            return self.ok(f"torch has {gfx} code for {label(gpu)}", subject=subject, evidence=evidence)
        override = override_for(facts.env, gpu)
        runs = effective_gfx(gpu, facts.env)
        if override and covered(archs, runs) and overrides.matches_family(override[1], gfx):
            return self.info(f"torch has no {gfx} code, but {override[0]}={override[1]} makes the runtime load its "
                             f"{runs} code for {label(gpu)} (same family)", subject=subject,
                             evidence=evidence + [f"{override[0]}={override[1]}"])
        advice, fix = remedies(facts, gfx, archs)
        message = (f"torch {facts.get('torch.version')} has no code for {label(gpu)}'s {gfx}: GPU work fails with "
                   "hipErrorNoBinaryForGpu or 'HIP error: invalid device function'.")
        if override:
            message += f" {override[0]}={override[1]} does not fix it (see hsa-override-gfx-version)."
            evidence.append(f"{override[0]}={override[1]} → {runs}")
        finding = self.fail(message, subject=subject, evidence=evidence, remediation=advice,
                            data={"gfx": gfx, "arch_list": archs})
        return self.with_fix(finding, *fix)

    def _not_rocm(self, facts, judged):
        index = wheels.latest_rocm_index()
        name = index.rstrip("/").rsplit("/", 1)[-1]
        archs = wheels.index_archs(index) if facts.os != "windows" else None
        missing = [(g, real_gfx(g, facts.env)) for g in judged if real_gfx(g, facts.env)
                   and (archs is None or not covered(archs, real_gfx(g, facts.env)))]
        if not missing or facts.os == "windows":
            return self.skip(f"torch is a {flavour_name(facts['torch.flavour'])} build (see torch-build-mismatch)")
        findings = []
        for gpu, gfx in missing:
            advice, fix = remedies(facts, gfx, None)
            findings.append(self.with_fix(self.warn(
                f"torch is a {flavour_name(facts['torch.flavour'])} build (see torch-build-mismatch), and the ROCm wheels "
                f"of {name} have no code for {label(gpu)}'s {gfx} either: installing them alone "
                "gives hipErrorNoBinaryForGpu / 'invalid device function'.",
                subject=str(gpu.get("index")), remediation=advice,
                evidence=[f"{label(gpu)}: {gfx}", f"{index} targets: {', '.join(archs)}"], data={"gfx": gfx}), *fix))
        return findings
