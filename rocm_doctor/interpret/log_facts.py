"""log.machine: what a log given with `check --log` says about the machine it came from (targets, overrides, torch
builds, ROCm and HIP versions, interpreters), each item with its line, so checks can judge a user's log replayed
without the user's machine and say which reading came from the log. Runs after amd_derived (user.log)."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import LOG_KEY
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.log_machine import parse_log

REQUIRES = (LOG_KEY,)


def interpret(observations: Observations, facts: Facts) -> None:
    log = facts.get(LOG_KEY)
    if not isinstance(log, dict) or not log.get("text"):
        facts.set_missing("log.machine", "no log was given (check --log FILE)")
        return
    facts.set("log.machine", dict(parse_log(str(log["text"])), path=log.get("path")))
