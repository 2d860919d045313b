"""The fleet report (`rocm-doctor fleet diff`, the torchrun worker): a table of what differs between nodes, with
the odd one out marked; in JSON the whole report (rocm_doctor.distributed.fleet builds it)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rocm_doctor.distributed.results import summary_lines
from rocm_doctor.report.format import Finished, Output


class FleetResult(Finished):
    """The fleet report rocm_doctor.distributed.fleet.diff built."""

    json_indent = 1

    def human(self, output: Output, verbose: bool = False) -> None:
        output.write(render_table(self.document()))


def _cell(value: Any, width: int = 28) -> str:
    text = "-" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "~"


def render_table(fleet: Mapping[str, Any]) -> str:
    names = [n["name"] for n in fleet.get("nodes") or []]
    out = [f"Fleet: {len(names)} node(s): {', '.join(names)}"]
    width = max([12] + [len(n) for n in names])
    col = max(14, min(28, width))

    def row(label: str, cells: Sequence[str]) -> str:
        return f"{label:<34} " + " ".join(f"{c:<{col}}" for c in cells)

    def differences(title: str, items, nothing: str, what: str, cell) -> None:
        """A table of one row per item, a column per node; `cell(item, node)` is the value, * marks the odd ones."""
        out.append("")
        out.append(title)
        if not items:
            out.append(f"  {nothing}")
            return
        out.append(row(f"  {what}", names))
        for d in items:
            out.append(row(f"  {d[what]}", [cell(d, n) + ("*" if n in d["odd"] else "") for n in names]))

    differences("What differs between nodes (* = odd one out):", fleet.get("differences"),
                "nothing: versions, drivers, GPUs and relevant environment are the same everywhere", "field",
                lambda d, n: _cell(d["values"].get(n), col - 1))
    differences("Findings that differ (worst status per check):", fleet.get("finding_differences"), "none", "check",
                lambda d, n: d["statuses"].get(n, ""))
    out.append("")
    out.append("Findings by status:")
    out.append(row("  status", names))
    counts = fleet.get("finding_counts") or []
    for status in [k for k in (counts[0] if counts else {}) if k != "node"]:  # the statuses, worst first
        out.append(row(f"  {status}", [str(c.get(status, 0)) for c in counts]))
    if fleet.get("bandwidth"):
        out.append("")
        out.append("Local collectives, peak busbw (GB/s):")
        for b in fleet["bandwidth"]:
            out.append(row(f"  {b['op']}", [("-" if b["busbw_gbs"].get(n) is None else f"{b['busbw_gbs'][n]:.1f}")
                                            + ("*" if n in b["odd"] else "") for n in names]))
    world = fleet.get("world_collectives")
    if world:
        out.append("")
        out.append(f"World collectives: {world.get('world_size')} ranks, {world.get('backend')}: {world.get('state')} "
                   f"- {world.get('detail')}")
        out.extend("  " + line for line in summary_lines(world))
    if fleet.get("odd_nodes"):
        out.append("")
        out.append("Odd node(s):")
        for odd in fleet["odd_nodes"]:
            out.append(f"  {odd['node']}: {odd['differences']} difference(s) from the majority")
            out.extend(f"    - {why}" for why in odd["why"][:12])
    return "\n".join(out)
