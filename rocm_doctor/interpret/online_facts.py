"""The connectivity probe's records as the fact online.package_index (missing, with why, unless --online ran)."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import ONLINE_INDEX_KEY as KEY
from rocm_doctor.facts.observations import Observations



def interpret(observations: Observations, facts: Facts) -> None:
    value = observations.probes.get(KEY)
    if isinstance(value, dict) and isinstance(value.get("checked"), list) and value["checked"]:
        facts.set(KEY, [r for r in value["checked"] if isinstance(r, dict)])
    else:
        facts.set_missing(KEY, "not checked (the network is only used with --online)")
