"""GPU visibility variables (the catalog's device-selection lists: ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL,
HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES): hiding every GPU, malformed or repeated entries, missing devices."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.keys import ENV_KNOWN, SHELL_RC_LINES
from rocm_doctor.knowledge.env_catalog import visibility_variables
from rocm_doctor.parsers.env_grammar import device_problem, repeated
from rocm_doctor.parsers.visible_devices import index, parse_visible

from rocm_doctor.checks.gpu_state import gpus as gpu_list, known_gpus, seen_by
from rocm_doctor.checks.symptoms import GPU_WORK


class GpuVisibilityEnv(Check):
    id = "gpu-visibility-env"
    title = "GPUs hidden by the GPU visibility variables"
    explains = ("torch-cuda-unavailable", "gpu-runtime-refuses", "windows-gpu-not-enumerated", "rocm-runtime-sees-no-gpu",
                *GPU_WORK)
    area = "environment"
    severity = Severity.HIGH
    requires = (ENV_KNOWN,)

    def run(self, facts):
        env = facts.env
        gpus = known_gpus(facts)
        below = _left_below_hip(facts)
        findings = []
        for name in visibility_variables():
            if name not in env:
                continue
            value = env[name]
            entries, bad = parse_visible(value)
            numbers = [index(e) for e in entries]
            unset = S.unset_where_set(name, set_in_rc_file(facts, name))
            where = ["Also remove it wherever else it is set (a service unit, a container definition, a job script)."]
            if not entries:
                findings.append(self.fail(
                    f"{name} is set but empty: it hides every GPU from the runtime.",
                    subject=name, evidence=[f"{name}={value!r}"], remediation=where, fix=unset))
            elif bad:
                findings.append(self.fail(
                    f"{name}={value!r} has malformed entries {', '.join(map(repr, bad))}: the runtime ignores "
                    "everything from the first bad entry on, which can hide every GPU.",
                    subject=name, evidence=[f"{name}={value!r}"], fix=unset,
                    remediation=["To keep a selection instead, use comma-separated device indices such as 0 or 0,1 "
                                 "(or UUIDs)."] + where))
            elif numbers[0] is not None and numbers[0] < 0:
                findings.append(self.fail(f"{name}={value} hides every GPU (-1 means none).", fix=unset,
                                          subject=name, evidence=[f"{name}={value!r}"], remediation=where))
            elif below and name != below[0] and numbers[0] is not None and numbers[0] >= below[1]:
                rocr, left = below
                findings.append(self.fail(
                    f"{name}={value} numbers the GPUs that {rocr}={env[rocr]} leaves (at most {left}, numbered from "
                    f"0), and its first entry {numbers[0]} names none of them: together the two hide every GPU.",
                    subject=name, evidence=[f"{rocr}={env[rocr]!r}", f"{name}={value!r}"], fix=unset,
                    remediation=[f"{rocr} already selects the GPU(s); to keep {name}, use indices from 0 to "
                                 f"{left - 1}."] + where, data={"variable": name, "below": rocr}))
            elif gpus and all(n is not None and n >= len(gpus) for n in numbers):
                findings.append(self.fail(
                    f"{name}={value} names only device indices that do not exist ({len(gpus)} GPU(s) seen: "
                    f"{seen_by(facts)}).",
                    subject=name, evidence=[f"{name}={value!r}", f"GPUs seen: {seen_by(facts)}"], fix=unset,
                    remediation=[f"To keep a selection instead, use indices from 0 to {len(gpus) - 1}."] + where))
            elif repeated(value):
                entry, first, second = repeated(value)
                findings.append(self.fail(
                    f"{name}={value} names device {entry} twice (entries {first} and {second}): a device list "
                    "must name each GPU once, and the process does not get that many distinct GPUs"
                    + (": the CUDA driver refuses the list and initialises no GPU at all (cuInit returns "
                       "CUDA_ERROR_INVALID_DEVICE, measured on an H200)." if name == "CUDA_VISIBLE_DEVICES" else "."),
                    subject=name, evidence=[f"{name}={value!r}"], fix=unset,
                    remediation=["To keep a selection instead, name each GPU once, e.g. "
                                 f"{name}={','.join(dict.fromkeys(entries))}."] + where,
                    data={"variable": name, "value": value, "repeated": entry}))
            elif gpus and device_problem(value, len(gpus)):
                findings.append(self.warn(
                    f"{name}={value}: {device_problem(value, len(gpus))} ({len(gpus)} GPU(s) seen: {seen_by(facts)}).",
                    subject=name, evidence=[f"{name}={value!r}", f"GPUs seen: {seen_by(facts)}"], fix=unset,
                    remediation=[f"To keep a selection instead, use indices from 0 to {len(gpus) - 1}."] + where))
            else:
                findings.append(self.info(f"{name}={value} limits which GPUs torch sees.", subject=name))
        return findings or self.ok("no GPU visibility variable is set")


def _left_below_hip(facts):
    """(the variable applied below HIP, how many GPUs it leaves at most) where it is set and readable, else None.
    The catalog lists the visibility variables in the order the runtimes apply them: ROCR_VISIBLE_DEVICES first,
    in ROCr below HIP, so HIP's indices count only the GPUs it left. NVIDIA's driver never reads it."""
    rocr = visibility_variables()[0]
    entries, bad = parse_visible(facts.env.get(rocr) or "")
    if not entries or bad or any(g.get("vendor") == "nvidia" for g in gpu_list(facts)):
        return None
    return rocr, len(entries)


def set_in_rc_file(facts, name: str) -> bool:
    """Whether a shell rc file the probe read sets `name` (then unsetting it in the shell alone does not last)."""
    return any(hit.get("variable") == name for hit in facts.get(SHELL_RC_LINES) or [])
