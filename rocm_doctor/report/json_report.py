"""JSON report: one object with schema_version, validated by data/report.schema.json in the contract test."""

from __future__ import annotations

import json

from rocm_doctor.report.model import Report


def render(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, default=str)
