"""The support bundle written by `rocm-doctor report`: the JSON report plus what a maintainer needs to re-diagnose
it — the interpreted facts and the raw snapshot (so `rocm-doctor check --from REPORT.json` replays it) — redacted
by default. Plain data (dicts and lists), so the reporters and the redactor never see dataclasses.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from rocm_doctor.facts import snapshot
from rocm_doctor.facts.facts import Facts
from rocm_doctor.report.model import Report
from rocm_doctor.report.redact import Identities, Redaction, redact


def build(report: Report, facts: Facts) -> dict[str, Any]:
    data = report.to_dict()
    data["facts"] = {
        "values": facts.values_dict(),
        "missing": facts.missing_dict(),
        "interpreter_errors": dict(facts.interpreter_errors),
    }
    data["snapshot"] = snapshot.to_dict(facts.observations, mask=False)  # redact_bundle masks it, identities too
    data["redaction"] = {"applied": False}
    return json.loads(json.dumps(data, default=str))  # plain JSON values from here on


def redact_bundle(data: dict[str, Any], identities: Optional[Identities] = None) -> tuple[dict[str, Any], list[Redaction]]:
    """The redacted copy and where things were replaced (paths and kinds, never the values)."""
    redacted, redactor = redact(data, identities)
    replaced: dict[str, int] = {}
    for item in redactor.redactions:
        for kind in item.kinds:
            replaced[kind] = replaced.get(kind, 0) + item.count
    redacted["redacted"] = True  # the envelope's word for it; `redaction` says what was replaced
    redacted["redaction"] = {
        "applied": True,
        "replaced": dict(sorted(replaced.items())),
        "places": len(redactor.redactions),
        "rules": "docs/report.md#redaction",
    }
    return redacted, redactor.redactions


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False)
