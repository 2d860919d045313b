"""torch's compiled GPU targets against each AMD GPU's real gfx: the predictor of hipErrorNoBinaryForGpu and
"HIP error: invalid device function"."""

from __future__ import annotations

from rocm_doctor.engine.relations import Explains, override_missing, same_gpu
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.facts import target_python
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.installs import install_into
from rocm_doctor.facts.keys import GPU_INVENTORY, GPU_TARGETS, PYTHON_TARGET, TORCH_FLAVOUR, TORCH_VERSION
from rocm_doctor.knowledge import overrides, wheels
from rocm_doctor.knowledge.store import load

from rocm_doctor.checks.amd_common import (arch_list, covered, effective_gfx, gpus, integrated, label, override_for,
                                           real_gfx, recommended_override)
from rocm_doctor.checks.torch_install import flavour_name

SOURCE_BUILD = ("Build torch for it from a pytorch checkout with PYTORCH_ROCM_ARCH set to {gfx} "
                "(https://github.com/pytorch/pytorch#amd-rocm-support).")


def remedies(facts, gpu: dict, gfx: str, archs: list[str] | None) -> tuple[list, list]:
    """(preferred steps, alternatives). A torch built for `gfx` removes the cause and comes first (a
    download.pytorch.org index, else AMD's TheRock multi-arch index with the gfx's device extra); the override
    gpu.targets recommends for `gpu` (a compatible family target, Linux/WSL) is a workaround with this torch;
    building from source is the last resort."""
    python = target_python(facts, "python")
    base = load("torch_wheels.json")["index_base"]
    paths = []  # (title, step, workaround)
    native = wheels.native_indexes(gfx) if facts.os != "windows" else []
    if native:
        paths.append((f"install a torch built for {gfx} ({native[-1]} wheels)", install_into(
            facts.get(PYTHON_TARGET), python, ["torch"], base + native[-1], extra_args=["--force-reinstall"],
            note=f"a torch build whose arch list has {gfx}"), False))
    multi = wheels.therock_multi_arch(gfx)
    if multi:
        paths.append((f"install AMD's TheRock {multi['channel']} multi-arch torch for {gfx}", install_into(
            facts.get(PYTHON_TARGET), python, [multi["torch"]], multi["index"], extra_args=["--force-reinstall"],
            note=f"TheRock multi-arch wheels build {gfx}"), False))
    value = recommended_override(facts, gpu) if facts.os != "windows" else None
    if value and (archs is None or covered(archs, overrides.target_of(value))):
        target = overrides.target_of(value)
        paths.append((f"keep this torch and run {target} code on {gfx} (same family) with HSA_OVERRIDE_GFX_VERSION",
                       S.set_env("HSA_OVERRIDE_GFX_VERSION", value, note=f"run {target} code on {gfx}"), True))
    paths.append((f"build torch for {gfx} from source (slow, last resort)", S.advice(SOURCE_BUILD.format(gfx=gfx)), False))
    (_, first, _), rest = paths[0], paths[1:]
    removes = not isinstance(first, S.SetEnv)
    alternatives = [S.alternative(t, step, workaround=w, why_not_first=_why_second(step, w, gfx, removes))
                    for t, step, w in rest]
    return [first], alternatives


def override_runs_covered(facts, gpu: dict, archs: list[str]) -> bool:
    """An override in effect for the GPU, of its own family, makes the runtime load code that `archs` has."""
    override, gfx = override_for(facts, gpu), real_gfx(facts, gpu)
    return bool(override and gfx and covered(archs, effective_gfx(facts, gpu))
                and overrides.matches_family(override[1], gfx))


def _why_second(step, workaround: bool, gfx: str, first_removes_cause: bool) -> str:
    if workaround:
        return (f"torch still has no {gfx} code and runs its family's instead, which works for most "
                "operators; the first path gives torch real code for it" if first_removes_cause else "")
    if isinstance(step, S.Advice):
        return "takes hours and a ROCm build toolchain"
    return "the first index is the one built for this GPU by this OS's wheel table"


class GfxNotInTorchArchList(Check):
    id = "gfx-not-in-torch-arch-list"
    title = "torch's GPU code for this GPU's gfx target"
    explains = (Explains("rocblas-library-coverage", same_gpu), Explains("gfx-support-matrix", same_gpu),
                Explains("hsa-override-gfx-version", override_missing), "gpu-kernel*", "sdpa-math-fallback",
                "bench-*")
    area = "amd"
    severity = Severity.HIGH
    requires = (GPU_INVENTORY, GPU_TARGETS, TORCH_FLAVOUR)

    def run(self, facts):
        found = gpus(facts)
        judged = [g for g in found if not integrated(facts, g)] or found
        if not judged:
            return self.skip("no AMD GPU found")
        if facts[TORCH_FLAVOUR] != "rocm":
            return self._not_rocm(facts, judged)
        archs, where = arch_list(facts)
        if archs is None:
            return self.skip("torch did not report its arch list (see torch-cuda-unavailable)")
        return [self._one(facts, gpu, archs, where) for gpu in judged]

    def _one(self, facts, gpu, archs, where):
        gfx, subject = real_gfx(facts, gpu), str(gpu.get("index"))
        evidence = [f"{label(gpu)}: hardware gfx {gfx}", f"torch {facts.get(TORCH_VERSION)} arch list ({where}): "
                    + ", ".join(archs)]
        if not gfx:
            return self.skip(f"{label(gpu)}: its real gfx is unknown", subject=subject, evidence=evidence)
        if covered(archs, gfx):
            return self.ok(f"torch has {gfx} code for {label(gpu)}", subject=subject, evidence=evidence)
        override = override_for(facts, gpu)
        runs = effective_gfx(facts, gpu)
        if override_runs_covered(facts, gpu, archs):
            return self.info(f"torch has no {gfx} code, but {override[0]}={override[1]} makes the runtime load its "
                             f"{runs} code for {label(gpu)} (same family)", subject=subject,
                             evidence=evidence + [f"{override[0]}={override[1]}"])
        fix, alternatives = remedies(facts, gpu, gfx, archs)
        message = (f"torch {facts.get(TORCH_VERSION)} has no code for {label(gpu)}'s {gfx}: GPU work fails with "
                   "hipErrorNoBinaryForGpu or 'HIP error: invalid device function'.")
        if override:
            message += f" {override[0]}={override[1]} does not fix it (see hsa-override-gfx-version)."
            evidence.append(f"{override[0]}={override[1]} → {runs}")
        return self.fail(message, subject=subject, evidence=evidence, data={"gfx": gfx, "arch_list": archs},
                         fix=fix, alternatives=alternatives)

    def _not_rocm(self, facts, judged):
        index = wheels.latest_rocm_index()
        name = index.rstrip("/").rsplit("/", 1)[-1]
        archs = wheels.index_archs(index) if facts.os != "windows" else None
        missing = [(g, real_gfx(facts, g)) for g in judged if real_gfx(facts, g)
                   and (archs is None or not covered(archs, real_gfx(facts, g)))
                   and not (archs and override_runs_covered(facts, g, archs))]
        if not missing or facts.os == "windows":
            return self.skip(f"torch is a {flavour_name(facts[TORCH_FLAVOUR])} build (see torch-build-mismatch)")
        findings = []
        for gpu, gfx in missing:
            fix, alternatives = remedies(facts, gpu, gfx, None)
            findings.append(self.with_fix(self.warn(
                f"torch is a {flavour_name(facts[TORCH_FLAVOUR])} build (see torch-build-mismatch), and the ROCm wheels "
                f"of {name} have no code for {label(gpu)}'s {gfx} either: installing them alone "
                "gives hipErrorNoBinaryForGpu / 'invalid device function'.",
                subject=str(gpu.get("index")), alternatives=alternatives,
                evidence=[f"{label(gpu)}: {gfx}", f"{index} targets: {', '.join(archs)}"], data={"gfx": gfx}), *fix))
        return findings
