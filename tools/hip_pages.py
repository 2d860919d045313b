"""Builders for the rows HIP's and ROCr's own sources give, read at a commit and saved under tests/fixtures/sources/:
what hipcc and hipconfig (bin/hipvars.pm) make of the legacy HIP_PLATFORM values, how libhsakmt reads an override."""

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


TOPOLOGY = "rocr-libhsakmt-topology.c-override.c"
TOPOLOGY_QUOTE = 'snprintf(per_node_override, sizeof(per_node_override), "HSA_OVERRIDE_GFX_VERSION_%d", node_id);'


def override_limits(text: str) -> dict[str, int]:
    """libhsakmt's check of an override: {"major": 63, "minor": 255, "stepping": 255} (values above are invalid)."""
    found = re.search(r"major > (\d+) \|\| minor > (\d+) \|\| step > (\d+)", text)
    return {"major": int(found.group(1)), "minor": int(found.group(2)), "stepping": int(found.group(3))}


def override_format(table: dict, texts: dict) -> None:
    """The override's grammar and limits are libhsakmt's own check: three decimal fields (sscanf %u.%u.%u, nothing
    after them) within the limits it tests."""
    table["sources"]["THUNK"] = dict(source_entry(TOPOLOGY, texts[TOPOLOGY], TOPOLOGY_QUOTE),
                                     note="node_id counts every topology node, CPU ones included (not shown in the "
                                          "excerpt saved here)")
    assert '"%u.%u.%u%c"' in texts[TOPOLOGY] and "!= 3" in texts[TOPOLOGY]
    table["format"]["limits"] = override_limits(texts[TOPOLOGY])
