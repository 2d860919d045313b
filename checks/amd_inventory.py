"""The AMD GPUs in this machine, with the gfx every source reports and why sources disagree."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.keys import GPU_INVENTORY, GPU_INVENTORY_DISAGREEMENTS, GPU_TARGETS
from rocm_doctor.knowledge import overrides

from rocm_doctor.checks.amd_common import gpus, integrated, label, override_for, real_gfx


class GpuInventory(Check):
    id = "gpu-inventory"
    title = "AMD GPUs and the gfx target from each source"
    area = "amd"
    severity = Severity.LOW
    requires = (GPU_INVENTORY, GPU_TARGETS)

    def run(self, facts):
        found = gpus(facts)
        if not found:
            return self.skip("no AMD GPU in any source (CPU agents and NPUs are not GPUs)")
        env = facts.env
        lines, summary = [], []
        for gpu in found:
            real = real_gfx(facts, gpu)
            # no source said, and the gfx (the other clue) is unknown: do not call it discrete
            kind = "integrated" if integrated(facts, gpu) else \
                "discrete" if gpu.get("igpu") is False or real or gpu.get("gfx") else "integrated or discrete: unknown"
            said = ", ".join(f"{s}: {g or 'present'}" for s, g in gpu["sources"].items())
            override = override_for(facts, gpu)
            runs = f"; runs {overrides.target_of(override[1]) or 'an invalid target'} code ({override[0]}={override[1]})" \
                if override else ""
            lines.append(f"{label(gpu)}: {real or 'gfx unknown'} ({kind}){runs} — {said}")
            summary.append(f"{gpu.get('name') or 'AMD GPU'} {real or '(gfx unknown)'}")
        notes = facts.get(GPU_INVENTORY_DISAGREEMENTS) or []
        message = f"{len(found)} AMD GPU{'s' if len(found) != 1 else ''}: " + "; ".join(summary)
        if notes:
            message += f". Sources disagree ({len(notes)}): " + " | ".join(notes)
        return self.info(message, evidence=lines + [f"disagreement: {n}" for n in notes],
                         data={"gpus": [dict(g, real_gfx=real_gfx(facts, g)) for g in found], "disagreements": notes})
