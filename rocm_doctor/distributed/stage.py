"""`check --collectives` / `bench --collectives`: run the local collectives, set the fact, judge it.

The fact is `collectives.results`, read from the observation probe "collectives", so a snapshot or report that
carries it re-judges the same way. The checks live in checks/collectives.py.
"""

from __future__ import annotations

from typing import Any, Optional

from rocm_doctor.engine.engine import run_one, sort_findings
from rocm_doctor.engine.pipeline import Stage
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts.facts import Facts, target_python
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import stage_results

PROBE_KEY, FACT, NOT_RUN = stage_results.COLLECTIVES
# the checks that judge measured results (the env and cmdline checks run in every `check`)
RESULT_CHECKS = ("collective-hang", "collective-wrong-result", "collective-bandwidth-low", "gpu-peer-access-missing")


def judge(results: dict[str, Any], facts: Optional[Facts] = None, ids: Optional[tuple] = RESULT_CHECKS) -> list:
    """The collectives checks' verdicts on `results`: those that require the fact, plus `ids` when given (None:
    every check of the collectives area)."""
    facts = facts if facts is not None else Facts(Observations())
    facts.observations.add_probe(PROBE_KEY, results)
    stage_results.interpret(facts.observations, facts)
    registry = load_registry(include_plugins=False)
    wanted = [c for c in registry.checks if (c.area == "multi-gpu" if ids is None else c.id in ids)]
    findings = []
    for check in wanted:
        findings.extend(run_one(check, facts))
    return sort_findings(findings)


class CollectivesStage(Stage):
    """Collectives across every local GPU (one rank per GPU) and the peer matrix."""

    name = "collectives"
    probe_key = PROBE_KEY
    provides = (FACT,)

    def __init__(self, device: str = "auto", preset: str = "full") -> None:
        self.device, self.preset = device, preset

    def run(self, facts, progress=None) -> dict[str, Any]:
        from rocm_doctor.distributed.local import LocalOptions, run_local

        env = dict(facts.env) if facts is not None and facts.env else None
        return run_local(target_python(facts), LocalOptions(device=self.device, preset=self.preset, env=env,
                                                            on_record=progress_notes(progress) if progress else None))

    def interpret(self, observations, facts) -> None:
        stage_results.interpret(observations, facts)


def progress_notes(progress):
    """An `on_record` callback that tells `progress` (the caller's status line) which collective rank 0 is timing
    now; the stage itself never writes to the terminal."""
    from rocm_doctor.parsers.collectives_formulas import human_bytes

    def show(record: dict) -> None:
        if record.get("coll") == "begin" and record.get("phase") == "timed" and str(record.get("rank")) == "0":
            progress(f"collectives: {record.get('op')} {human_bytes(record.get('bytes') or 0)}")

    return show
