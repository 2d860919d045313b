"""The one report structure every reporter renders (human, JSON, Markdown)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from rocm_doctor.engine.diagnosis import Diagnosis, build
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.report.envelope import envelope, now


@dataclass
class Report:
    findings: list[Finding]
    target: dict[str, Any] = field(default_factory=dict)
    platform: dict[str, Any] = field(default_factory=dict)
    source: str = "live"  # "live" or the snapshot path it was replayed from
    generated_at: str = field(default_factory=now)
    stages: dict[str, Any] = field(default_factory=dict)  # kernels, bench, ... when they ran
    diagnosis: Optional[Diagnosis] = None  # built from the linked findings when not given
    versions: list[dict[str, Any]] = field(default_factory=list)  # report/versions.py: torch, driver, GPUs, OS...

    def __post_init__(self) -> None:
        if self.diagnosis is None:
            self.diagnosis = build(self.findings)

    def summary(self) -> dict[str, int]:
        counts = {status.value: 0 for status in Status}
        for finding in self.findings:
            counts[finding.status.value] += 1
        return counts

    def worst(self) -> Optional[Status]:
        statuses = [f.status for f in self.findings]
        return max(statuses, key=lambda s: s.rank) if statuses else None

    def to_dict(self) -> dict[str, Any]:
        return envelope("diagnosis", generated_at=self.generated_at, source=self.source, target=self.target,
                        platform=self.platform, summary=self.summary(), diagnosis=self.diagnosis.to_dict(),
                        findings=[f.to_dict() for f in self.findings], stages=self.stages, versions=self.versions)
