"""A paste judged alone (`rocm-doctor triage`): whether it holds enough to name a cause, and, where it does not, the
exact thing to paste next. Nothing is guessed: a paste with no known message and no tool output is "not enough to
tell"."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.keys import LOG_KEY, LOG_MACHINE, PASTE_SUMMARY
from rocm_doctor.knowledge import signatures

COLLECT_ENV = "python -m torch.utils.collect_env"
REPORT = "rocm-doctor report (run on the machine itself; it writes a Markdown report to paste)"


def order_open(summary: dict, log: dict) -> bool:
    """The paste names integrated graphics beside a card and no tool's list of them: which is HIP's device 0 is open."""
    return bool(log.get("apus") and log.get("gpus") and not summary["tools"] and summary.get("vendor") != "nvidia")


def next_pastes(summary: dict, log: dict) -> list[str]:
    """What would settle what this paste leaves open, most telling first."""
    out = []
    platform, vendor = summary.get("platform"), summary.get("vendor")
    if vendor != "nvidia" and (order_open(summary, log) or not log.get("targets")) and not summary["tools"]:
        out.append("hipInfo (in the HIP SDK's bin folder)" if platform == "windows" else "rocminfo")
    if vendor == "nvidia" and "nvidia-smi" not in (summary.get("tools") or []):
        out.append("nvidia-smi")
    if not log.get("torch"):
        out.append(COLLECT_ENV)
    return out + [REPORT]


class PasteNotEnoughToTell(Check):
    id = "paste-not-enough-to-tell"
    title = "What the paste holds to name a cause"
    area = "rocm-doctor"
    severity = Severity.MEDIUM
    undecided = True
    requires = (PASTE_SUMMARY, LOG_MACHINE, LOG_KEY)

    def run(self, facts):
        summary, log = facts[PASTE_SUMMARY], facts[LOG_MACHINE]
        known = [m for m in signatures.match(facts[LOG_KEY].get("text") or "")
                 if not (signatures.signature(m.id) or {}).get("harmless")
                 and (signatures.signature(m.id) or {}).get("established") is not False]
        tools = summary["tools"]
        ask = next_pastes(summary, log)
        said = [f"tool output in the paste: {', '.join(tools) or 'none'}",
                f"known messages: {', '.join(m.id for m in known) or 'none'}"]
        said += [f"{what} {item.get('gfx') or item.get('version')}: {item['line'][:160]}"
                 for what in ("targets", "torch", "rocm") for item in log.get(what, [])[:2]]
        said += [f"integrated graphics: {item['line'][:160]}" for item in (log.get("apus") or [])[:1]]
        why = (" (it lists the GPUs in HIP's order: the paste names integrated graphics beside the card, and which "
               "of them torch used it does not show)" if order_open(summary, log) else "")
        if not known and not tools:
            return self.warn("Not enough to tell: the paste holds no message rocm-doctor knows the cause of and no "
                             f"tool output to judge. Paste next: {ask[0]}{why}.", evidence=said,
                             remediation=[f"Paste the output of: {item}" for item in ask])
        if len(ask) > 1:
            return self.info(f"Judged from the paste alone; to settle what it leaves open, paste next: {ask[0]}{why}.",
                             evidence=said, remediation=[f"Paste the output of: {item}" for item in ask])
        return self.ok("the paste names the GPU target, the torch build and a known message or a tool's output",
                       evidence=said)
