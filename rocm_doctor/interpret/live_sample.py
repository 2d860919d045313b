"""One sample of the live GPU state taken around a stage or a bench section (probes/gpu_sample.py), read the way
`gpu.live` is read: the same parsers, the same telling apart of the doctor's own processes. Pure."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import GPU_LIVE
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import gpu_live


def read(sample: dict) -> tuple[dict | None, str]:
    """(the gpu.live-shaped state, "") or (None, why nothing could be read from the sample)."""
    if not isinstance(sample, dict):
        return None, "no sample"
    if sample.get("error"):
        return None, f"the sample failed: {sample['error']}"
    try:
        observations = Observations.from_dict({key: sample.get(key) or {} for key in ("commands", "files", "probes")})
    except (TypeError, KeyError, ValueError) as exc:
        return None, f"the sample is malformed: {exc}"
    facts = Facts(observations)
    gpu_live.interpret(observations, facts)
    state = facts.get(GPU_LIVE)
    if state:
        return state, ""
    why = [part for part in facts.why_missing(GPU_LIVE).split("; ") if "not recorded" not in part]
    return None, "; ".join(why) or "no tool reported the live state of a GPU"
