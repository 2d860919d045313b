"""Parsers for the saved copies of the tables' sources (tests/fixtures/sources/): pure text in, rows out.

Each saved copy starts with a header (`source:`, `title:`, `page-date:` or `commit:`, `read:`, `excerpt:`) naming
where and when it was read; the body is the excerpt of the page as it was read, unedited.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^(source|title|page-date|commit|read|excerpt): (.*)$")
_GFX_MARK = re.compile(r"\*\*(gfx[0-9a-f]+)\*\*([A-Z][A-Za-z ]*)?")
_DEVICE = re.compile(r"\[([^\]]+)\]\([^)]*\) \((Radeon [^)]+)\)")
_ADDED = re.compile(r"^\* AMD (.+?) \((gfx[0-9a-f]+)\)$", re.M)
# The OS tables' distribution names -> os-release ID; Windows rows belong to another table.
DISTRO_IDS = {"Ubuntu": "ubuntu", "Debian": "debian", "Red Hat Enterprise Linux (RHEL)": "rhel",
              "Oracle Linux": "ol", "SUSE Linux Enterprise Server (SLES)": "sles", "Rocky Linux": "rocky",
              "Windows": None}
OS_TABLE_FAMILIES = ("Instinct", "Radeon", "Ryzen")  # the order the release notes' OS tab-set renders them in


def header(text: str) -> dict:
    """The saved copy's header fields."""
    fields = {}
    for line in text.splitlines():
        match = _HEADER.match(line)
        if not match:
            break
        fields[match.group(1)] = match.group(2).strip()
    return fields


def section(text: str, title: str) -> str:
    """The text of the `## title` section, up to the next `## ` heading."""
    start = text.index(f"\n## {title}") + 1
    end = text.find("\n## ", start)
    return text[start:] if end < 0 else text[start:end]


def hardware_targets(text: str) -> list[str]:
    """The LLVM targets of the release notes' hardware table, in the order the table gives them."""
    found: list[str] = []
    for gfx, _ in _GFX_MARK.findall(section(text, "AMD hardware support")):
        if gfx not in found:
            found.append(gfx)
    return found


def apu_devices(text: str) -> list[dict]:
    """The Ryzen rows of the hardware table: [{"name", "igpu", "gfx", "codename"}] (the Instinct and Radeon tabs
    render to text without their device names, so only the APU tab names devices)."""
    part = section(text, "AMD hardware support").split("LLVM target / codename", 1)[-1]
    devices, pending = [], []
    for token in re.finditer(rf"{_DEVICE.pattern}|{_GFX_MARK.pattern}", part):
        if token.group(1):
            pending.append((token.group(1), token.group(2)))
        elif pending:
            codename = (token.group(4) or "").strip() or None
            devices += [{"name": name, "igpu": igpu, "gfx": token.group(3), "codename": codename}
                        for name, igpu in pending]
            pending = []
    return devices


def added_gpus(text: str) -> list[dict]:
    """A release's "adds support for the following" list: [{"name", "gfx"}]."""
    return [{"name": name, "gfx": gfx} for name, gfx in _ADDED.findall(text)]


def kernel_series(value: str) -> dict | None:
    kind, _, series = value.partition(" ")
    if kind in ("GA", "HWE", "OEM") and series:
        return {"series": series, "kind": kind}
    return None


def os_tables(text: str) -> dict[str, list[dict]]:
    """The OS tables of the release notes, per GPU family: {"Instinct": [{"name", "version", "kernel"}], ...}."""
    body = section(text, "Operating system support")
    tables = re.split(r"\n(?:Linux distribution|Operating system) \|\n", body)[1:]
    result = {}
    for family, table in zip(OS_TABLE_FAMILIES, tables):
        cells = [line.rstrip(" |").strip() for line in table.splitlines()]
        cells = [cell for cell in cells if cell and not cell.startswith("|---") and cell not in (
            "Supported versions", "Linux kernel version")]
        rows, name, index = [], None, 0
        while index < len(cells):
            if cells[index] in DISTRO_IDS:
                name = cells[index]
                index += 1
                continue
            rows.append({"name": name, "version": cells[index], "kernel": cells[index + 1]})
            index += 2
        result[family] = rows
    return result


def markdown_tables(text: str) -> list[list[dict]]:
    """Every pipe table of a Markdown text, as rows of {header: cell} (cells stripped of `**` and backticks)."""
    tables = []
    lines = [re.sub(r"^[>\s]+(?=\|)", "", line) for line in text.splitlines()]  # tables inside a quote block too
    index = 0
    while index < len(lines) - 1:
        if lines[index].startswith("|") and re.match(r"^\|[\s\-:|]+\|$", lines[index + 1]):
            heads = [cell.strip() for cell in lines[index].strip("|").split("|")]
            rows, index = [], index + 2
            while index < len(lines) and lines[index].startswith("|"):
                cells = [re.sub(r"[*`]", "", cell).strip() for cell in lines[index].strip("|").split("|")]
                rows.append(dict(zip(heads, cells)))
                index += 1
            tables.append(rows)
        else:
            index += 1
    return tables


def therock_status(text: str) -> dict[str, dict[str, list[str]]]:
    """TheRock SUPPORTED_GPUS.md: per OS ("linux", "windows") the targets that are release-ready and those that only
    build, in the file's order."""
    result = {}
    for os_name, title in (("linux", "## ROCm on Linux"), ("windows", "## ROCm on Windows")):
        start = text.index(title)
        end = text.find("\n## ", start + 3)
        part = text[start:] if end < 0 else text[start:end]
        ready, build = [], []
        for table in markdown_tables(part):
            for row in table:
                gfx = row["LLVM target"]
                if row.get("Release Ready") == "✅":
                    ready.append(gfx)
                elif row.get("Build Passing") == "✅" and gfx not in ready + build:
                    build.append(gfx)
        result[os_name] = {"release_ready": ready, "build_only": [g for g in build if g not in ready]}
    return result


def device_extras(text: str) -> list[dict]:
    """TheRock RELEASES.md's `[device-*]` install extras table: [{"product", "gfx", "extra"}], "(all)" left out."""
    for table in markdown_tables(text):
        if table and "Device Extra" in table[0]:
            return [{"product": row["Product Name"], "gfx": row["GFX Target"], "extra": row["Device Extra"]}
                    for row in table if row["GFX Target"].startswith("gfx")]
    return []


def torch_companions(text: str) -> list[dict]:
    """TheRock RELEASES.md's torch compatibility matrix: [{"torch", "torchaudio", "torchvision"}]."""
    for table in markdown_tables(text):
        if table and "torchvision version" in table[0]:
            return [{"torch": row["torch version"], "torchaudio": row["torchaudio version"],
                     "torchvision": row["torchvision version"]} for row in table]
    return []


def pytorch_versions(text: str) -> dict[str, list[str]]:
    """The release notes' AI ecosystem table, its first (PyTorch) row: {"linux": [...], "windows": [...]}."""
    body = section(text, "AI ecosystem support")
    match = re.search(r"\n\n([\d.]+(?:, [\d.]+)*)\n\nLinux\n\n[^\n]+\n\n([\d.]+(?:, [\d.]+)*)\n\nWindows", body)
    if not match:
        return {}
    return {"linux": match.group(1).split(", "), "windows": match.group(2).split(", ")}
