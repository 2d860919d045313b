"""`check --collectives` / `bench --collectives`: run the local collectives and set the fact.

The fact is `collectives.results`, read from the observation probe "collectives", so a snapshot or report that
carries it re-judges the same way. The pipeline judges it (diagnose.py) with the checks in checks/collectives.py.
"""

from __future__ import annotations

from typing import Any

from rocm_doctor.engine.pipeline import Stage
from rocm_doctor.facts.facts import target_python
from rocm_doctor.interpret import stage_results

PROBE_KEY, FACT, NOT_RUN = stage_results.COLLECTIVES


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
