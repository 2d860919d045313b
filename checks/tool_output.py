"""Tool output that no single healthy install prints (tools.garbled): a field printed twice with different values,
agent numbers that repeat, a gfx that is no target, a memory size of zero or of a pebibyte. Reported as a sign of a
broken or mixed install, with the lines, instead of being read as normal."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.keys import TOOLS_GARBLED

# what the parsers say → the causes that print it (the output alone does not say which)
MEANINGS = (
    ("times with different values", "two installs answer in one output: a wrapper that runs two copies of the tool, "
                                    "or ROCm installed twice (/opt/rocm-X next to distribution packages)"),
    ("agent numbers repeat", "two rocminfo runs are in one output (a wrapper that calls it twice, or two HSA "
                             "runtimes)"),
    ("is no gfx target", "the tool does not match the driver or runtime it reads (mixed ROCm versions), or its "
                         "output was damaged on the way"),
    ("memory size", "the tool misreads the driver's memory counters: a tool and driver of different releases, or a "
                    "GPU in a bad state"),
)


def meaning(what: str) -> str:
    return next((m for key, m in MEANINGS if key in what), "a broken or mixed install")


class ToolOutputGarbled(Check):
    id = "tool-output-garbled"
    title = "ROCm tool output against what one healthy install prints"
    area = "amd"
    severity = Severity.MEDIUM
    requires = (TOOLS_GARBLED,)

    def run(self, facts):
        by_tool: dict[str, list[dict]] = {}
        for entry in facts[TOOLS_GARBLED]:
            by_tool.setdefault(entry.get("tool") or "a tool", []).append(entry)
        if not by_tool:
            return self.ok("no repeated fields or impossible values in the ROCm tools' output")
        findings = []
        for tool, entries in sorted(by_tool.items()):
            whats = list(dict.fromkeys(e["what"] for e in entries))
            findings.append(self.warn(
                f"`{tool}` printed what no single healthy install prints ({'; '.join(whats[:3])}). The output "
                f"does not say why; causes that print this: {meaning(whats[0])}. rocm-doctor read the first value "
                "of each field.",
                subject=tool, evidence=[f"{e['what']}: {' | '.join(e.get('lines') or [])}" for e in entries][:8],
                remediation=["Run the tool by hand with its full path (/opt/rocm/bin/...) and compare with the one "
                             "on PATH (command -v); remove the ROCm install or package that should not be there.",
                             "If only one install exists, reinstall it: a partial upgrade leaves tools of one release "
                             "next to libraries of another."]))
        return findings
