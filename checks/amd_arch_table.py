"""torch's own arch list against what data/torch_wheels.json records for its wheel index: the table is a fallback,
the installed torch is the authority, and a difference is worth knowing (a custom build, or a stale table)."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import TORCH_ARCH_LIST, TORCH_FLAVOUR, TORCH_VERSION
from rocm_doctor.knowledge import wheels
from rocm_doctor.parsers.gfx import base_gfx

from rocm_doctor.checks.amd_common import torch_index


class TorchArchListMatchesTable(Check):
    id = "torch-arch-list-vs-table"
    title = "torch's compiled GPU targets against the wheel table for its index"
    area = "amd"
    severity = Severity.LOW
    platforms = (Platform.LINUX, Platform.WSL, Platform.WINDOWS)
    requires = (TORCH_ARCH_LIST, TORCH_FLAVOUR)

    def run(self, facts):
        if facts[TORCH_FLAVOUR] != "rocm":
            return self.skip("not a ROCm build of torch")
        index = torch_index(facts)
        table = wheels.index_archs(index) if index else None
        measured = sorted({base_gfx(a) or a for a in facts[TORCH_ARCH_LIST]})
        if table is None:
            return self.info(
                f"torch {facts.get(TORCH_VERSION)} reports {', '.join(measured)}; data/torch_wheels.json has no "
                f"record for {'its index ' + index if index else 'this build'} (a custom or AMD-built wheel): "
                "rocm-doctor uses torch's own list.",
            )
        recorded = sorted({base_gfx(a) or a for a in table})
        missing = [g for g in recorded if g not in measured]
        extra = [g for g in measured if g not in recorded]
        if not missing and not extra:
            return self.ok(f"torch's {len(measured)} targets match the {index} wheel table")
        parts = []
        if extra:
            parts.append(f"has {', '.join(extra)} that the table does not list")
        if missing:
            parts.append(f"lacks {', '.join(missing)} that the table lists")
        return self.info(
            f"torch {facts.get(TORCH_VERSION)} {' and '.join(parts)} for {index}: this torch was built differently "
            "from the published wheels (a custom build, or a different torch release on that index), or the table "
            "is stale. rocm-doctor judges GPU support by torch's own list.",
            evidence=[f"torch.cuda.get_arch_list(): {', '.join(measured)}",
                      f"data/torch_wheels.json {index}: {', '.join(recorded)}"],
            remediation=["If the table is stale, rocm-doctor data update fetches newer support data."],
        )
