"""Builders for the Windows rows whose HIP SDK system-requirements page was saved as the page renders to text (the
docs-6.4.2 and docs-7.2 pages, read through a stored copy that ends part-way through the Radeon table): each product
row the excerpt holds is checked against the release's row, which then rests on the saved page. A product row that
disagrees stops the rebuild; the targets the excerpt does not reach keep the earlier reading and the source says so."""

from __future__ import annotations

import re

from source_parsers import source_entry

PAGES = {"6.4": ("RIW-6.4.2", "rocm-install-on-windows-6.4.2-system-requirements.txt",
                 "AMD Radeon PRO W6600 |\nRDNA2 |\ngfx1032 |\n✅ |\n❌ |"),
         "7.2": ("RIW-7.2", "rocm-install-on-windows-7.2-system-requirements.txt",
                 "AMD Radeon PRO W6800 |\nRDNA2 |\ngfx1030 |\n❌ |\n❌ |\n❌ |")}
MARKS = {"✅": "supported", "❌": "unsupported"}
STATUS_RANK = ("supported", "unsupported")


def rendered_products(text: str) -> list[dict]:
    """Rows rendered one cell a line ("name |", "arch |", "gfx |", "✅ |", "❌ |"): [{"name", "gfx", "runtime",
    "sdk"}] for every row whose Runtime and HIP SDK marks are both in the text."""
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        if re.fullmatch(r"gfx[0-9a-f]+ \|", line) and index + 2 < len(lines):
            marks = [lines[index + offset].removesuffix(" |") for offset in (1, 2)]
            if all(mark in MARKS for mark in marks):
                found.append({"name": lines[index - 2].removesuffix(" |"), "gfx": line.removesuffix(" |"),
                              "runtime": MARKS[marks[0]], "sdk": MARKS[marks[1]]})
    return found


def checked_rows(table: dict, texts: dict) -> None:
    rows = {row["rocm"]: row for row in table["releases"]}
    for minor, (key, saved, quote) in PAGES.items():
        products, row = rendered_products(texts[saved]), rows[minor]
        for gfx in sorted({p["gfx"] for p in products}):
            for column in ("runtime", "sdk"):
                best = min((p[column] for p in products if p["gfx"] == gfx), key=STATUS_RANK.index)
                assert row["gfx"][gfx][column] == best, f"ROCm {minor} {gfx} {column}: the page says {best}"
        reached = sorted({p["gfx"] for p in products})
        rest = [gfx for gfx in row["gfx"] if gfx not in reached]
        entry = source_entry(saved, texts[saved], quote)
        entry["title"] = table["sources"][key]["title"]
        entry["note"] = (f"the saved excerpt holds {len(products)} product rows ({', '.join(reached)}); "
                         + (f"{', '.join(rest)} rest on the reading of 2026-12-01, which recorded no quote"
                            if rest else "every target of the row is among them"))
        table["sources"][key] = entry
