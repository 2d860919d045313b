"""Did it work? Re-run the affected checks in a fresh child process with the environment a new shell would have.

The doctor's own process keeps its old environment (and never imports torch), so the check runs as
`<sys.executable> -m rocm_doctor check --json --only <ids>` with the process environment plus the applied
environment changes, through the one runner.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Optional

from rocm_doctor.engine import runner
from rocm_doctor.engine import remedy as S
from rocm_doctor.fix.changes import Context, env_after


@dataclass
class Verification:
    statuses: dict = field(default_factory=dict)  # finding id -> status
    messages: dict = field(default_factory=dict)
    checks_seen: set = field(default_factory=set)
    error: Optional[str] = None
    argv: list = field(default_factory=list)


RESOLVED = "resolved"
NOT_REPORTED = "not-reported"


def outcome(verification: Verification, finding_id: str, check_id: str) -> str:
    """The finding's status in the re-check; `resolved` when its check ran and no longer reports it."""
    if finding_id in verification.statuses:
        return verification.statuses[finding_id]
    return RESOLVED if check_id in verification.checks_seen else NOT_REPORTED


def is_fixed(status: str) -> bool:
    return status in ("ok", "info", "skip", RESOLVED)


def new_environment(ctx: Context, applied_steps: Iterable[S.Step]) -> dict:
    env = dict(ctx.env)
    for step in applied_steps:
        if isinstance(step, (S.SetEnv, S.UnsetEnv, S.PathPrepend, S.PathRemove)):
            env = env_after(step, env, ctx)
    return env


def verify(check_ids: list, env: dict, python: Optional[str] = None, timeout_s: float = 180.0) -> Verification:
    argv = [sys.executable, "-m", "rocm_doctor", "check", "--json"]
    for check_id in check_ids:
        argv += ["--only", check_id]
    if python:
        argv += ["--python", python]
    # From a neutral folder: `-m` puts the current folder first on sys.path, and a rocm_doctor source checkout
    # there would shadow the installed package.
    result = runner.run(argv, timeout=timeout_s, env=env, cwd=tempfile.gettempdir())
    out = Verification(argv=argv)
    try:
        report = json.loads(result.stdout)
        for finding in report.get("findings", []):
            out.statuses[finding["id"]] = finding["status"]
            out.messages[finding["id"]] = finding.get("message", "")
            out.checks_seen.add(finding.get("check"))
    except (ValueError, KeyError, TypeError, AttributeError):
        tail = (result.stderr.strip().splitlines() or [""])[-1]
        out.error = f"the re-check did not produce a report ({result.describe()}){': ' + tail if tail else ''}"
    return out
