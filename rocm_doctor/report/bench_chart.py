"""The batch sweep as a terminal chart: per batch the GPU and CPU step times, the speed-up over the CPU as a bar,
and how busy the GPU was, so the batch where the small model starts to keep the GPU busy shows at a glance."""

from __future__ import annotations

from typing import Any, Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

SCRIPT_BATCH = 64  # the batch of the SimpleCNN script users run, marked in the chart


def sweep_chart(console: Console, lines: list[dict[str, Any]], plain: bool, bar: Callable[..., str]) -> bool:
    """Print the chart of the sweep's per-batch lines; False when there are none with a GPU figure."""
    rows = [line["details"] for line in lines if line["key"].startswith("sweep.batch.")]
    rows = [row for row in rows if row.get("speedup") is not None]
    if not rows:
        return False
    top = max(row["speedup"] for row in rows)
    table = Table(box=None, pad_edge=False, padding=(0, 1), show_header=True, header_style="bold")
    for title, justify in (("batch", "right"), ("GPU ms/step", "right"), ("CPU ms/step", "right"),
                           ("speed-up over the CPU", "left"), ("", "right"), ("GPU busy", "right")):
        table.add_column(title, justify=justify, no_wrap=True)
    for row in rows:
        busy = row.get("busy")
        table.add_row(f"{row['batch']}{' *' if row['batch'] == SCRIPT_BATCH else ''}", f"{row['gpu_ms']:.3f}",
                      f"{row['cpu_ms']:.2f}", Text(bar(row["speedup"] / top, plain=plain), style="cyan"),
                      f"{row['speedup']:.1f}x", f"{min(busy, 1.0):.0%}" if busy is not None else "—")
    console.print(table)
    console.print(Text(f"   * the SimpleCNN script's batch; the bars are relative to the largest speed-up ({top:.1f}x)",
                       style="dim"))
    return True
