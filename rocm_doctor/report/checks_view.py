"""`rocm-doctor checks` in the terminal: plain columns under one heading per area."""

from __future__ import annotations

import textwrap


def listing(rows: list[dict], width: int | None) -> list[str]:
    """Plain columns under one heading per area, the title wrapped at word boundaries under its own column (a rich
    Table takes longer to lay out 80 rows than the rest of the command)."""
    id_width = max(len(row["id"]) for row in rows)
    sev_width = max(len(row["severity"]) for row in rows)
    lead = 2 + id_width + 2 + sev_width + 2
    lines, area = [], None
    for row in rows:
        if row["area"] != area:
            area = row["area"]
            lines += ([""] if lines else []) + [area.upper()]
        title = f"{row['title']} [{', '.join(row['platforms'])}]"
        head = f"  {row['id']:<{id_width}}  {row['severity']:<{sev_width}}  "
        if width is None:
            lines.append(head + title)
        elif width - lead >= 30:
            wrapped = textwrap.wrap(title, width - lead, break_long_words=False, break_on_hyphens=False)
            lines += [head + wrapped[0]] + [" " * lead + more for more in wrapped[1:]]
        else:  # too narrow for columns: the title on lines of its own
            lines.append(f"  {row['id']}  {row['severity']}")
            lines += textwrap.wrap(title, max(20, width - 6), initial_indent="      ", subsequent_indent="      ",
                                   break_long_words=False, break_on_hyphens=False)
    return lines
