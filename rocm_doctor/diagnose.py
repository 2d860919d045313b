"""One diagnosis pass: collect (or replay) observations, interpret them into facts, run the checks."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

from rocm_doctor.engine.engine import Selection, run_checks, validate_selection
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret
from rocm_doctor.probes import collect
from rocm_doctor.probes._base import ProbeContext
from rocm_doctor.probes._platform import detect_os
from rocm_doctor.probes._target import choose_python
from rocm_doctor.report.model import Report


@dataclass
class Options:
    python: Optional[str] = None
    from_file: Optional[Path] = None
    only: Sequence[str] = ()
    skip: Sequence[str] = ()
    torch_timeout_s: float = 60.0
    command_timeout_s: float = 10.0
    env: Optional[Mapping[str, str]] = None
    extra: dict = field(default_factory=dict)


def observe(options: Options) -> Observations:
    """Live collection, or the snapshot given with --from (raises SnapshotError / TargetError on bad input)."""
    if options.from_file is not None:
        return snapshot.load(options.from_file)
    env = dict(os.environ if options.env is None else options.env)
    python, reason = choose_python(options.python, env)
    context = ProbeContext(
        python=python,
        python_reason=reason,
        platform_os=detect_os(),
        env=env,
        command_timeout_s=options.command_timeout_s,
        torch_timeout_s=options.torch_timeout_s,
        online=bool(options.extra.get("online", False)),
    )
    return collect(context)


def diagnose(options: Options) -> tuple[Report, Facts]:
    registry = load_registry()
    selection = Selection(only=tuple(options.only), skip=tuple(options.skip))
    validate_selection(registry, selection)  # before any probing: a typo should fail fast
    observations = observe(options)
    facts = interpret(observations)
    findings = run_checks(registry, facts, selection)
    report = Report(
        findings=findings,
        target=dict(observations.target),
        platform={k: observations.platform.get(k) for k in ("os", "system", "release", "machine")},
        source=str(options.from_file) if options.from_file else "live",
    )
    return report, facts
