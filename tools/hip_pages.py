"""Builders for the rows HIP's own scripts give, read at a commit and saved under tests/fixtures/sources/: what
hipcc and hipconfig (bin/hipvars.pm) make of the legacy HIP_PLATFORM values."""

from __future__ import annotations

import re

from source_parsers import source_entry

HIPVARS = "hip-4.2-hipvars.pm"
HIPVARS_QUOTE = 'warn("Warning: HIP_PLATFORM=hcc is deprecated. Please use HIP_PLATFORM=amd. \\n")'


def platform_renames(text: str) -> dict[str, str]:
    """hipvars.pm's `elsif ($HIP_PLATFORM eq "old") { $HIP_PLATFORM = "new"; ... warn(...deprecated...)`:
    {"hcc": "amd", "nvcc": "nvidia"}."""
    found = re.findall(r'\$HIP_PLATFORM eq "(\w+)"\) \{\s*\$HIP_PLATFORM = "(\w+)";[^}]*?deprecated', text)
    return dict(found)


def legacy_rows(table: dict, texts: dict) -> None:
    """HIP_PLATFORM's legacy values that rest on hipvars.pm take the platform it maps them to; the current values
    are the ones it maps to."""
    table["sources"]["HIPVARS-4.2"] = source_entry(HIPVARS, texts[HIPVARS], HIPVARS_QUOTE)
    renames = platform_renames(texts[HIPVARS])
    platform = table["variables"]["HIP_PLATFORM"]
    for old, row in platform["values"].items():
        if row["source"] == "HIPVARS-4.2":
            row["means"] = renames[old]
    assert sorted(set(renames.values())) == sorted(platform["current"]), renames
