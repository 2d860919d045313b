"""paste.summary: what `rocm-doctor triage` was given — the files, the tool outputs found in each, the programs
their line prefixes name, the platform and GPU vendor the text shows — so the checks know the judgement rests on a
paste alone and can say what to paste next. Missing on every other command."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import PASTE_KEY, PASTE_SUMMARY
from rocm_doctor.facts.observations import Observations



def interpret(observations: Observations, facts: Facts) -> None:
    value = observations.probes.get(PASTE_KEY)
    if isinstance(value, dict) and isinstance(value.get("files"), list):
        facts.set(PASTE_SUMMARY, {"files": value["files"], "platform": value.get("platform"),
                                    "vendor": value.get("vendor"),
                                    "tools": sorted({t for f in value["files"] for t in f.get("tools") or []})})
    else:
        facts.set_missing(PASTE_SUMMARY, "no paste was given (rocm-doctor triage FILE)")
