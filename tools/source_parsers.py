"""Parsers for the saved copies of the tables' sources (tests/fixtures/sources/): pure text in, rows out.

Each saved copy starts with a header (`source:`, `title:`, `page-date:` or `commit:`, `read:`, `excerpt:`) naming
where and when it was read; the body is the excerpt of the page as it was read, unedited.
"""

from __future__ import annotations

import csv
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


def source_entry(saved: str, text: str, quote: str, title: str | None = None) -> dict:
    """The `sources` entry of a saved page: its URL, the page's own date, the read date and the quoted words."""
    head = header(text)
    assert quote in text, f"{saved}: the quote is not in the saved copy"
    return {"title": title or head["title"], "url": head["source"], "version": head.get("commit") or head["page-date"],
            "read": head["read"], "verified": True, "quote": quote, "saved": f"tests/fixtures/sources/{saved}"}


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


# --- ROCm's reStructuredText pages: system requirements and the compatibility matrix -------------------------------

_FOOTNOTE = re.compile(r"\s*(?:\[#[^\]]+\]_+|:sup:`[^`]*`)")
_SUPPORT_MARKS = {"✅": "supported", "⚠️": "deprecated", "❌": "unsupported"}
# The compatibility matrix's OS cells ("RHEL 10.1, 10.0, |br| 9.7") -> os-release ID.
OS_NAME_IDS = {"Ubuntu": "ubuntu", "RHEL": "rhel", "SLES": "sles", "Oracle Linux": "ol", "Debian": "debian",
               "Azure Linux": "azurelinux", "Rocky Linux": "rocky", "CentOS": "centos"}


def _cells(line: str) -> list[str]:
    """A CSV line's cells, each cell's footnote marks moved after its text as " [#label]"."""
    cells = next(csv.reader([line.strip()], skipinitialspace=True))
    return [_FOOTNOTE.sub("", cell).strip() + "".join(f" [#{m}]" for m in marks(cell)) for cell in cells]


def split_marks(cell: str) -> tuple[str, list[str]]:
    """"Oracle Linux 8.9 [#oracle89]" -> ("Oracle Linux 8.9", ["oracle89"])."""
    return re.sub(r" \[#[^\]]+\]", "", cell), re.findall(r" \[#([^\]]+)\]", cell)


def marks(cell: str) -> list[str]:
    """The footnote labels a cell carries: "[#oracle89]_" -> "oracle89", ":sup:`2`" -> "2"."""
    return [a or b for a, b in re.findall(r"\[#([^\]]+)\]_|:sup:`([^`]*)`", cell)]


def footnotes(text: str) -> dict[str, str]:
    """An RST page's footnotes, label -> text (".. [#label] text" with its indented continuation lines, and the
    ":sup:`N` text" lines older pages use)."""
    found, lines = {}, text.splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"^(\s*)\.\. \[#([^\]]+)\] (.*)$", line) or re.match(r"^()(?::sup:`([^`]+)`) (.*)$", line)
        if not match:
            continue
        words, depth = [match.group(3).strip()], len(match.group(1))
        for follow in lines[index + 1:]:
            if not follow.strip() or len(follow) - len(follow.lstrip()) <= depth:
                break
            words.append(follow.strip())
        found[match.group(2)] = " ".join(words)
    return found


def rst_csv_tables(text: str) -> list[dict]:
    """Every inline `.. csv-table::` of an RST page: [{"header": [...], "rows": [[...], ...]}], a cell's footnote
    marks written after it as " [#label]" (a table read from a `:file:` has no rows here)."""
    lines, tables, index = text.splitlines(), [], 0
    while index < len(lines):
        match = re.match(r"^(\s*)\.\. csv-table::", lines[index])
        index += 1
        if not match:
            continue
        indent, header, rows = len(match.group(1)), [], []
        while index < len(lines) and re.match(r"^\s+:[\w-]+:", lines[index]):
            option = re.match(r"^\s+:([\w-]+):\s*(.*)$", lines[index])
            if option.group(1) == "header":
                header = [split_marks(cell)[0] for cell in _cells(option.group(2))]
            index += 1
        while index < len(lines):
            line = lines[index]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            if line.strip():
                rows.append(_cells(line))
            index += 1
        tables.append({"header": header, "rows": rows})
    return tables


def _noted(entry: dict, labels: list[str], notes: dict[str, str]) -> dict:
    said = [notes[label] for label in labels if label in notes]
    return dict(entry, note=" ".join(said)) if said else entry


def gpu_support(text: str) -> list[dict]:
    """A system-requirements page's GPU tables: [{"name", "gfx", "status", "note" (the row's footnote)}] in the
    page's order ("AMD " dropped)."""
    products, notes = [], footnotes(text)
    for table in rst_csv_tables(text):
        if "LLVM target" not in table["header"]:
            continue
        for row in table["rows"]:
            cell = dict(zip(table["header"], row))
            support, labels = split_marks(cell["Support"])
            mark = next(status for sign, status in _SUPPORT_MARKS.items() if support.startswith(sign))
            name = re.sub(r"^AMD ", "", row[0])
            products.append(_noted({"name": name, "gfx": cell["LLVM target"], "status": mark}, labels, notes))
    return products


def os_support_rows(text: str) -> list[dict]:
    """A system-requirements page's operating system table: [{"name", "version", "kernel", "note" (the row's
    footnote)}]."""
    notes = footnotes(text)
    for table in rst_csv_tables(text):
        if table["header"][:2] == ["Operating system", "Kernel"]:
            result = []
            for row in table["rows"]:
                name, _, version = row[0].rpartition(" ")
                if name == "SLES 15":
                    name, version = "SLES", f"15 {version}"
                labels = split_marks(row[2])[1] + split_marks(row[1])[1]
                result.append(_noted({"name": name, "version": version, "kernel": split_marks(row[1])[0]},
                                     labels, notes))
            return result
    return []


def labelled_kernels(value: str) -> list[dict] | None:
    """"5.15 [GA], 6.8 [HWE]" -> [{"series", "kind"}]; None when a kernel is given without its GA/HWE label."""
    found = re.findall(r"(\d+\.\d+) \[(GA|HWE|OEM)\]", value)
    if not found or len(found) != len(value.split(",")):
        return None
    return [{"series": series, "kind": kind} for series, kind in found]


def _os_cell(cell: str) -> list[tuple[str, str, tuple]]:
    """"RHEL 10.1, 10.0, |br| 9.7" -> [("rhel", "10.1", labels), ...]; "SLES 15 SP6, SP5" -> [("sles", "15 SP6",
    labels), ...]; labels are the cell's footnote marks."""
    cell, labels = split_marks(cell)
    cell = cell.replace("|br|", " ").strip()
    name = next((n for n in OS_NAME_IDS if cell.startswith(n + " ")), None)
    if name is None:
        return []
    versions = [v.strip() for v in cell[len(name):].split(",") if v.strip()]
    if name == "SLES":
        versions = [v if v.startswith("15") else f"15 {v}" for v in versions]
    return [(OS_NAME_IDS[name], v, tuple(labels)) for v in versions]


def matrix_columns(rows: list[list[str]], header: list[str]) -> dict[str, dict]:
    """The compatibility matrix (rows under a "ROCm Version" header, first cell the row's label or empty for a
    continuation): per ROCm release ("7.2.4/7.2.3" gives both) its "os" [(id, version, footnote labels)], "gfx"
    and "pytorch"."""
    sections = {"Operating systems": "os", "GPU / LLVM target": "gfx", "PyTorch": "pytorch"}
    columns = [label.strip() for label in header[1:]]
    result = {release: {"os": [], "gfx": [], "pytorch": []} for label in columns for release in label.split("/")}
    current = None
    for row in rows:
        if row[0]:
            current = next((key for words, key in sections.items() if words in row[0]), None)
        if current is None or (len(row) > 1 and row[1].startswith(".. _")):
            continue
        for label, cell in zip(columns, row[1:]):
            for release in label.split("/"):
                if not cell:
                    continue
                if current == "os":
                    result[release]["os"] += _os_cell(cell)
                elif current == "gfx":
                    result[release]["gfx"].append(split_marks(cell)[0])
                else:
                    result[release]["pytorch"] += [v.strip() for v in cell.split(",")]
    return result


def matrix_table(text: str) -> dict[str, dict]:
    """The compatibility matrix page's first table (its newest releases), per release."""
    table = next(t for t in rst_csv_tables(text) if t["header"][:1] == ["ROCm Version"])
    return matrix_columns(table["rows"], table["header"])


def matrix_csv(text: str) -> dict[str, dict]:
    """The historical compatibility-matrix CSV (after the saved copy's header), per release."""
    body = text.split("\n\n", 1)[1]
    rows = [_cells(line) for line in body.splitlines() if line.strip()]
    return matrix_columns(rows[1:], rows[0])


def matrix_kernels(text: str) -> list[dict]:
    """The compatibility matrix page's "Operating systems and kernel versions" table: [{"id", "version",
    "kernels" or "kernel", "glibc" where the table has that column}] (the distribution cell names the first
    version of each group)."""
    table = next(t for t in rst_csv_tables(text) if t["header"][:3] == ["OS", "Version", "Kernel"])
    result, distro = [], None
    for row in table["rows"]:
        if not any(row):
            continue
        if row[0]:
            name = re.sub(r"`([^<`]+?)\s*(?:\([^)]*\))?\s*<[^>]*>`_", r"\1", row[0]).strip()
            distro = next(i for n, i in OS_NAME_IDS.items() if name.startswith(n) or
                          (n == "RHEL" and "Red Hat" in name) or (n == "SLES" and "SUSE" in name))
        kernels = [{"series": s, "kind": k} for s, k in re.findall(r"(\d+\.\d+) \[?(GA|HWE)\]?", row[2])]
        entry = {"id": distro, "version": row[1], **({"glibc": row[3]} if row[3:] and row[3] else {})}
        result.append(dict(entry, kernels=kernels) if kernels else dict(entry, kernel=row[2]))
    return result


def md_gpu_support(text: str) -> list[dict]:
    """A 5.x GPU and OS support page's GPU tables (Markdown): [{"name", "gfx", "status", "note"?}] ("AMD " and the
    trademark signs dropped; "note" the words after the support mark, such as "Ubuntu 22.04 only")."""
    products = []
    for table in markdown_tables(text):
        target = next((key for key in (table[0] if table else {}) if "LLVM Target" in key), None)
        if target is None:
            continue
        for row in table:
            name = re.sub(r"^AMD |[™®]", "", row.get("Product Name") or row["Name"]).strip()
            support = row["Support"].strip()
            status = next(s for sign, s in _SUPPORT_MARKS.items() if support.startswith(sign))
            entry = {"name": name, "gfx": row[target], "status": status}
            note = support[1:].strip(" ()\ufe0f")
            products.append(dict(entry, note=note) if note else entry)
    return products


def rst_list_tables(text: str) -> list[list[dict]]:
    """Every `list-table` of an RST or MyST page whose rows are "*" items of "  - cell" lines, as rows of
    {header: cell} (the first row is the header)."""
    tables, rows, current = [], [], None
    for line in text.splitlines() + [".. end"]:
        stripped = line.strip()
        if stripped == "*":
            current = []
            rows.append(current)
        elif stripped.startswith("- ") and current is not None:
            current.append(stripped[2:].strip())
        elif stripped.startswith(("```", ".. ")):
            if len(rows) > 1:
                tables.append([dict(zip(rows[0], row)) for row in rows[1:]])
            rows, current = [], None
    return tables


def peak_tflops(text: str) -> dict[str, float]:
    """A ROCm microarchitecture page's peak-performance table: {"Matrix FP32": 163.4, ...}."""
    for table in rst_list_tables(text) + markdown_tables(text):
        if table and "Peak TFLOPS" in table[0]:
            return {row["Computation and Data Type"]: float(row["Peak TFLOPS"]) for row in table}
    return {}


def _mark(cell: str) -> str:
    return next(status for sign, status in _SUPPORT_MARKS.items() if cell.strip().startswith(sign))


def windows_support(text: str) -> dict:
    """A HIP SDK system-requirements page (RST) or a 5.x Windows support page (Markdown): {"os": ["Windows 10 22H2",
    ...], "gpus": [{"name", "gfx", "runtime", "sdk"}]} as the page gives them ("AMD " and trademark signs dropped; a
    Windows Server keeps its own name: the "22H2" some pages put in its update column is a client release's)."""
    tables = [[dict(zip(t["header"], row)) for row in t["rows"]] for t in rst_csv_tables(text)]
    tables += markdown_tables(text)
    result: dict = {"os": [], "gpus": []}
    for table in tables:
        if not table:
            continue
        keys = list(table[0])
        if "Distribution" in keys:
            update = next(k for k in keys if k.startswith("Validated"))
            result["os"] += [row["Distribution"] if row["Distribution"].startswith("Windows Server") else
                             " ".join([row["Distribution"], row[update].replace("(GA)", "").strip()]).strip()
                             for row in table]
        elif "HIP SDK" in keys:
            target = next(k for k in keys if "LLVM" in k)
            result["gpus"] += [{"name": re.sub(r"^AMD |[™®]", "", split_marks(row["Name"])[0]).strip(),
                                "gfx": row[target], "runtime": _mark(row["Runtime"]), "sdk": _mark(row["HIP SDK"])}
                               for row in table]
    return result
