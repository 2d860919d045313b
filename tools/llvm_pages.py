"""Builder for the generic code-object targets LLVM's AMDGPU user guide lists, read at a commit and saved under
tests/fixtures/sources/ (the table "AMDGPU Generic Processors")."""

from __future__ import annotations

import re

from source_parsers import source_entry

GENERIC = "llvm-AMDGPUUsage-generic-processors.rst"
GENERIC_QUOTE = "     ``gfx9-4-generic``   ``amdgcn``     - ``gfx942``"


def generic_members(text: str) -> dict[str, list[str]]:
    """Each generic processor -> the processors of its "Supported Processors" column (the column the header row puts
    them under; the restrictions column further right names processors too and is left out)."""
    header = next(line for line in text.splitlines() if "Supported " in line and "Processor " in line)
    column = header.index("Supported")
    members: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        start = re.match(r"^\s+``(gfx[\w-]+-generic)``", line)
        current = start.group(1) if start else current
        cell = re.match(r"- ``(gfx[0-9a-f]+)``", line[column:column + 18])
        if current and cell:
            members.setdefault(current, []).append(cell.group(1))
    return members


def generic_targets(table: dict, texts: dict) -> None:
    table["sources"]["LLVM-AMDGPU"] = source_entry(GENERIC, texts[GENERIC], GENERIC_QUOTE)
    table["generic_targets"]["targets"] = generic_members(texts[GENERIC])
