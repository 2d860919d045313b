"""`check --collectives` / `bench --collectives`: run the local collectives, set the fact, judge it.

The fact is `collectives.results` (also stored as the observation probe "collectives", so a snapshot or report
that carries it re-judges the same way). The checks live in checks/collectives.py.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from rocm_doctor.facts.facts import Facts, target_python
from rocm_doctor.facts.observations import Observations

FACT = "collectives.results"
PROBE_KEY = "collectives"
CHECK_MODULE = "rocm_doctor.checks.collectives"
# the checks that judge measured results (the env and cmdline checks run in every `check`)
RESULT_CHECKS = ("collective-hang", "collective-wrong-result", "collective-bandwidth-low", "gpu-peer-access-missing")


def collectives_checks(ids: Optional[tuple] = None) -> list:
    from rocm_doctor.engine.registry import load_registry

    checks = [c for c in load_registry(include_plugins=False).checks if c.__module__ == CHECK_MODULE]
    return [c for c in checks if ids is None or c.id in ids]


def judge(results: dict[str, Any], facts: Optional[Facts] = None, ids: Optional[tuple] = RESULT_CHECKS) -> list:
    """The collectives checks' findings for `results` (pure apart from loading the check classes)."""
    from rocm_doctor.engine.engine import run_one, sort_findings

    if facts is None:
        facts = Facts(Observations())
    facts.observations.add_probe(PROBE_KEY, results)
    facts.set(FACT, results)
    findings = []
    for check in collectives_checks(ids):
        findings.extend(run_one(check, facts))
    return sort_findings(findings)


def run_stage(facts: Facts, findings: list, python: Optional[str] = None, device: str = "auto",
              preset: str = "full", show_progress: bool = False) -> tuple[dict[str, Any], list]:
    """Run the local collectives for `check --collectives`; returns (stage dict, the report's new findings).

    The result checks' placeholders in `findings` are replaced by their verdicts on the measured results.
    Never raises: a failure of the stage itself becomes a not-run stage.
    """
    from rocm_doctor.distributed.local import LocalOptions, not_run, run_local
    from rocm_doctor.engine.engine import sort_findings

    python = python or target_python(facts)
    try:
        env = dict(facts.env) if facts is not None and facts.env else None
        results = run_local(python, LocalOptions(device=device, preset=preset, env=env,
                                                 on_record=_progress_printer() if show_progress else None))
    except Exception as exc:  # the stage must never take the report down
        results = not_run(f"the collectives stage failed: {type(exc).__name__}: {exc}")
    new = judge(results, facts)
    ids = {f.check for f in new}
    return results, sort_findings([f for f in findings if f.check not in ids] + new)


def _progress_printer():
    """A one-line progress note on stderr per collective (only when stderr is a terminal)."""
    if not sys.stderr.isatty():
        return None

    def show(record: dict) -> None:
        if record.get("coll") == "begin" and record.get("phase") == "timed" and str(record.get("rank")) == "0":
            from rocm_doctor.distributed.formulas import human_bytes

            sys.stderr.write(f"\r\033[Kcollectives: {record.get('op')} {human_bytes(record.get('bytes') or 0)}")
            sys.stderr.flush()
        elif record.get("coll") == "done" and str(record.get("rank")) == "0":
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    return show
