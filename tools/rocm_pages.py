"""Builders for the rows AMD's own ROCm pages give, read from their repository files at a commit (saved under
tests/fixtures/sources/): the system requirements of 6.0.2, 6.1.2 and 6.2.4 (GPUs with their support mark, operating
systems with their kernels) and the compatibility matrix (targets, operating systems and PyTorch per release, 6.0.0 to
7.2.4). A row the matrix disagrees with stops the rebuild: the disagreement is for a maintainer to resolve, not to be
written over."""

from __future__ import annotations

import re

import source_parsers as parse
from source_parsers import source_entry

SR = {"6.0": "rocm-install-on-linux-6.0.2-system-requirements.rst",
      "6.1": "rocm-install-on-linux-6.1.2-system-requirements.rst",
      "6.2": "rocm-install-on-linux-6.2.4-system-requirements.rst"}
SR_GPU_QUOTE = '"AMD Instinct MI50", "GCN5.1", "gfx906", "⚠️"'
SR_OS_QUOTES = {"6.0": '"Ubuntu 22.04.4", "6.6", "✅ :sup:`2`"', "6.1": '"Ubuntu 20.04.6", "5.15 [HWE]", "✅"',
                "6.2": '"Ubuntu 22.04.5", "5.15 [GA], 6.8 [HWE]", "✅"'}
GOS = {minor: f"rocm-{point}-gpu_os_support.md" for minor, point in (
    ("5.0", "5.0.2"), ("5.1", "5.1.3"), ("5.2", "5.2.3"), ("5.3", "5.3.3"), ("5.4", "5.4.3"), ("5.5", "5.5.1"),
    ("5.6", "5.6.1"), ("5.7", "5.7.1"))}
GOS_QUOTE = "| AMD Instinct™ MI25   | GCN5.0 | gfx900 | ❌ |"
GOS_LATE = ("the table sits on the release's docs branch as the March 2023 documentation rework left it, after "
            "5.0-5.6 shipped")
CM_HIST = "rocm-compatibility-matrix-historical-6.0-6.3.csv"
CM_HIST_QUOTE = ":doc:`GPU / LLVM target <rocm-install-on-linux:reference/system-requirements>`,gfx1100,gfx1100"
CM_63 = "rocm-compatibility-matrix-6.3.rst"
CM_63_QUOTE = ('`Ubuntu <https://ubuntu.com/about/release-cycle#ubuntu-kernel-release-cycle>`_, 24.04.2, '
               '"6.8 GA, 6.11 HWE"')
CM_LRB = "rocm-compatibility-matrix-7.2.rst"
CM_LRB_QUOTE = '"ROCm Version", "7.2.4/7.2.3", "7.2.2/7.2.1", "7.1.0"'
CM_64 = "rocm-compatibility-matrix-6.4.1.rst"
CM_64_QUOTE = '"ROCm Version", "6.4.1", "6.4.0", "6.3.0"'
STATUS_RANK = ("supported", "deprecated", "unsupported")


def _points(columns: dict, minor: str) -> list[str]:
    """The point releases of one major.minor the matrix has columns for, oldest first."""
    found = [r for r in columns if r.rsplit(".", 1)[0] == minor]
    return sorted(found, key=lambda r: tuple(int(p) for p in r.split(".")))


def _check_targets(row: dict, columns: dict, key: str) -> None:
    """The row's supported targets must be the matrix's for every point release of it."""
    listed = {gfx for point in _points(columns, row["rocm"]) for gfx in columns[point]["gfx"]}
    supported = {gfx for gfx, value in row["gfx"].items()
                 if (value if isinstance(value, str) else value["status"]) == "supported"}
    assert listed == supported, f"ROCm {row['rocm']}: {key} lists {sorted(listed)}, the row {sorted(supported)}"


# --- rocm_support_linux.json --------------------------------------------------------------------------------------


def _targets(products: list[dict]) -> dict:
    """A target's status is the best mark any of its products has; a note all its products share goes with it."""
    gfx: dict = {}
    for gpu in sorted({p["gfx"] for p in products}, key=[p["gfx"] for p in products].index):
        mine = [p for p in products if p["gfx"] == gpu]
        status = min((p["status"] for p in mine), key=STATUS_RANK.index)
        notes = {p.get("note") for p in mine}
        gfx[gpu] = {"status": status, "note": notes.pop()} if len(notes) == 1 and None not in notes else status
    return gfx


def _sr_release(row: dict, text: str) -> None:
    """A 6.x row from its system-requirements page: one product per GPU the page lists, each target's status from
    its products; a product the page does not list is kept only with its recorded disagreement."""
    products = parse.gpu_support(text)
    gfx = {gpu: value if isinstance(value, str) else value["status"] for gpu, value in _targets(products).items()}
    names = {p["name"] for p in products}
    kept = [p for p in row["products"] if p["name"] not in names and p.get("disagreement")]
    row.update(gfx=gfx, products=products + kept)
    row.pop("disagreement", None)


def support_rows(table: dict, texts: dict) -> None:
    rows = {row["rocm"]: row for row in table["releases"]}
    for minor, saved in GOS.items():
        key = f"R-GOS-{minor}"
        entry = source_entry(saved, texts[saved], GOS_QUOTE)
        table["sources"][key] = dict(entry, note=GOS_LATE) if minor != "5.7" else entry
        products = parse.md_gpu_support(texts[saved])
        rows[minor].update(source=key, gfx=_targets(products), products=products)
        rows[minor].pop("note", None)
    table["sources"].pop("RIL", None)
    for minor, saved in SR.items():
        key = f"SR-{minor}"
        table["sources"][key] = source_entry(saved, texts[saved], SR_GPU_QUOTE)
        row = rows[minor]
        _sr_release(row, texts[saved])
        row["source"] = key
        row["also"] = ["CM-HIST"] + [k for k in row.get("also", []) if k not in ("CM-HIST", key)]
    table["sources"]["CM-HIST"] = source_entry(CM_HIST, texts[CM_HIST], CM_HIST_QUOTE)
    history = parse.matrix_csv(texts[CM_HIST])
    for minor in ("6.0", "6.1", "6.2", "6.3"):
        _check_targets(rows[minor], history, "CM-HIST")
    table["sources"]["CM-LRB"] = source_entry(CM_LRB, texts[CM_LRB], CM_LRB_QUOTE)
    latest = parse.matrix_table(texts[CM_LRB])
    for minor in ("7.1", "7.2"):
        _check_targets(rows[minor], latest, "CM-LRB")
    table["sources"]["CM-6.4"] = source_entry(CM_64, texts[CM_64], CM_64_QUOTE)
    _check_targets(rows["6.4"], parse.matrix_table(texts[CM_64]), "CM-6.4")
    rows["6.4"]["also"] = ["CM-6.4"] + [k for k in rows["6.4"].get("also", []) if k != "CM-6.4"]


# --- os_support.json ----------------------------------------------------------------------------------------------


def _group(listed: list[dict], kernels: dict) -> list[dict]:
    """Listed distributions ({"id", "version", "from"?, "note"?}) -> distro entries: Ubuntu point releases grouped
    under their version with the kernels the source gives (labelled GA/HWE, or as given)."""
    entries: dict[tuple, dict] = {}
    for item in listed:
        distro, version = item["id"], item["version"]
        base = ".".join(version.split(".")[:2]) if distro == "ubuntu" else version
        entry = entries.get((distro, base))
        if entry is None:
            entry = entries[(distro, base)] = {"id": distro, "version": base}
            if item.get("from"):
                entry["from"] = item["from"]
        if item.get("note"):  # an Ubuntu point release's note names the point release
            said = f"{version}: {item['note']}" if distro == "ubuntu" else item["note"]
            entry["note"] = f"{entry['note']}; {said}" if entry.get("note") else said
        if distro == "ubuntu":
            entry.setdefault("points", []).append(version)
        given = kernels.get((distro, version))
        if isinstance(given, list):
            series = entry.setdefault("kernels", [])
            series += [k for k in given if k not in series]
        elif given and distro != "ubuntu":
            entry["kernel"] = given
        elif given:
            entry.setdefault("unlabelled", []).append((given, version))
    for entry in entries.values():
        unlabelled = entry.pop("unlabelled", None)
        if unlabelled:
            values = {given for given, _ in unlabelled}
            entry["kernel"] = unlabelled[0][0] if len(values) == 1 else ", ".join(f"{g} ({v})" for g, v in unlabelled)
    return list(entries.values())


def _matrix_distros(columns: dict, minor: str, kernels: dict, notes: dict) -> list[dict]:
    """A release's distributions over its point releases: `from` where a later point release added one, `note`
    the footnote the matrix marks it with."""
    points = _points(columns, minor)
    listed, seen = [], set()
    for point in points:
        for distro, version, labels in columns[point]["os"]:
            if (distro, version) in seen:
                continue
            seen.add((distro, version))
            item = {"id": distro, "version": version, "from": point if point != points[0] else None,
                    "note": " ".join(notes[label] for label in labels if label in notes) or None}
            listed.append(item)
    return _group(listed, kernels)


def _compare_distros(row: dict, listed: list[dict], key: str) -> None:
    """A row another source gives is checked against a matrix that also covers it: the distributions one lists and
    the other does not are recorded as a disagreement (a later point release's additions left aside)."""
    theirs = {(d["id"], d["version"]) for d in listed}
    ours = {(d["id"], d["version"]) for d in row["distros"] if not d.get("from")}
    only_ours, only_theirs = sorted(ours - theirs), sorted(theirs - ours)
    row["also"] = [key]
    said = [f"{key} does not list {', '.join(' '.join(d) for d in only_ours)}"] if only_ours else []
    said += [f"{key} also lists {', '.join(' '.join(d) for d in only_theirs)}"] if only_theirs else []
    if said:
        row["disagreement"] = "; ".join(said)
    else:
        row.pop("disagreement", None)


def os_rows(table: dict, texts: dict) -> None:
    rows = {row["rocm"]: row for row in table["releases"]}
    for minor, saved in SR.items():
        key = f"SR-{minor}"
        table["sources"][key] = source_entry(saved, texts[saved], SR_OS_QUOTES[minor])
        listed = [dict(r, id=parse.OS_NAME_IDS[r["name"]]) for r in parse.os_support_rows(texts[saved])]
        kernels = {(r["id"], r["version"]): parse.labelled_kernels(r["kernel"]) or r["kernel"] for r in listed}
        distros = _group(listed, kernels)
        rows[minor].update(source=key, distros=distros)
        rows[minor].pop("note", None)
    table["sources"]["CM-HIST"] = source_entry(CM_HIST, texts[CM_HIST], CM_HIST_QUOTE)
    table["sources"]["CM-6.3"] = source_entry(CM_63, texts[CM_63], CM_63_QUOTE)
    kernels = {(e["id"], e["version"]): e.get("kernels") or e.get("kernel") for e in parse.matrix_kernels(texts[CM_63])}
    row = rows["6.3"]
    row.update(source="CM-6.3", also=["CM-HIST"],
               distros=_matrix_distros(parse.matrix_csv(texts[CM_HIST]), "6.3", kernels,
                                           parse.footnotes(texts[CM_63])),
               note="distributions per point release from the past-versions matrix (CM-HIST); kernels from the "
                    "page's kernel table, which is 6.3.3's (CM-6.3)")
    table["sources"]["CM-LRB"] = source_entry(CM_LRB, texts[CM_LRB], CM_LRB_QUOTE)
    _compare_distros(rows["7.1"], _matrix_distros(parse.matrix_table(texts[CM_LRB]), "7.1", {}, {}), "CM-LRB")
    table["sources"]["CM-6.4"] = source_entry(CM_64, texts[CM_64], CM_64_QUOTE)
    _compare_distros(rows["6.4"], _matrix_distros(parse.matrix_table(texts[CM_64]), "6.4", {}, {}), "CM-6.4")
    row = rows["7.2"]
    row.update(distros=_matrix_distros(parse.matrix_table(texts[CM_LRB]), "7.2", {}, {}),
               note="kernels and glibc are not in this source")


# --- gpu_catalog.json ---------------------------------------------------------------------------------------------

ARCH_SPECS = "rocm-gpu-arch-specs.rst"
ARCH_SPECS_QUOTE = "          - MI300X\n          - CDNA3\n          - gfx942\n          - 192"
ARCH_SPECS_LATER = "rocm-gpu-arch-specs-rdna4-cdna4.rst"
ARCH_SPECS_LATER_QUOTE = "          - Radeon RX 9070 XT\n          - RDNA4\n          - gfx1201\n          - 16\n          - 64"
PEAK_PAGES = {"ROCM-MI300": ("rocm-gpu-arch-mi300.md", "instinct-mi300x", "  - Matrix FP32\n  - 256\n  - 163.4"),
              "ROCM-MI200": ("rocm-gpu-arch-mi250.md", "instinct-mi250", "  - Matrix FP32\n  - 256\n  - 90.5"),
              "ROCM-MI100": ("rocm-gpu-arch-mi100.md", "instinct-mi100",
                             "| Matrix FP32               | 256            | 46.1        |")}


def _take_specs(gpu: dict, key: str, given: dict) -> None:
    """A product row takes the table's figures; where the later revision contradicts a figure the row already
    holds from another source, both are kept: the row's value and a `disagreement` naming the table's."""
    said = [f"{field}: {key} gives {value}, the row keeps {gpu[field]} ({gpu.get('figures_source')})"
            for field, value in given.items()
            if key == "ARCH-SPECS-LATER" and gpu.get(field) not in (None, value)]
    gpu.update({field: value for field, value in given.items() if not any(s.startswith(field + ":") for s in said)})
    gpu["source"] = key
    if said:
        gpu["disagreement"] = "; ".join(said)


def catalog_rows(table: dict, texts: dict) -> None:
    """Targets, VRAM and compute units of every product AMD's hardware specification table names (the later
    revision's rows where it has them); the dense peak rates of the Instinct products whose microarchitecture page
    gives a peak-performance table."""
    gpus = {gpu["id"]: gpu for gpu in table["gpus"]}
    for key, saved, quote in (("ARCH-SPECS", ARCH_SPECS, ARCH_SPECS_QUOTE),
                              ("ARCH-SPECS-LATER", ARCH_SPECS_LATER, ARCH_SPECS_LATER_QUOTE)):
        table["sources"][key] = source_entry(saved, texts[saved], quote)
        specs = {row.get("Model") or row["Name"]: row for rows in parse.rst_list_tables(texts[saved]) for row in rows}
        for gpu in table["gpus"]:
            names = (n.replace("AMD ", "").replace("Instinct ", "") for n in gpu["names"])
            model = next((specs[m] for m in names if m in specs), None)
            if gpu["vendor"] == "amd" and model is not None:
                _take_specs(gpu, key, {"gfx": model["LLVM target name"], "vram_gb": int(model["VRAM (GiB)"]),
                                       "compute_units": int(model["Compute Units"].split()[0])})
    for key, (saved, gpu_id, quote) in PEAK_PAGES.items():
        table["sources"][key] = source_entry(saved, texts[saved], quote)
        peaks = parse.peak_tflops(texts[saved])
        gpus[gpu_id]["peak_tflops"] = {"fp32": peaks["Matrix FP32"], "fp16": peaks["Matrix FP16"],
                                       "bf16": peaks["Matrix BF16"], "fp32_vector": peaks["Vector FP32"]}
        gpus[gpu_id]["figures_source"] = key


# --- support_windows.json -----------------------------------------------------------------------------------------

WIN = {"5.5": ("R-WIN-5.5", ["rocm-5.5.1-windows_support.md"]), "5.7": ("R-WIN-5.7", ["rocm-5.7.1-windows_support.md"]),
       "6.0": ("RIW-6.0", ["rocm-install-on-windows-6.0.0-system-requirements.rst",
                           "rocm-install-on-windows-6.0.2-system-requirements.rst"]),
       "6.1": ("RIW-6.1", ["rocm-install-on-windows-6.1.2-system-requirements.rst"]),
       "6.2": ("RIW-6.2.4", ["rocm-install-on-windows-6.2.4-system-requirements.rst"])}
WIN_QUOTES = {"R-WIN-5.5": "| AMD Radeon™ RX 7600     | RDNA3  | gfx1100 | ✅ | ✅ |",
              "R-WIN-5.7": "| AMD Radeon™ RX 7600     | RDNA3  | gfx1102 | ✅ | ✅ |",
              "RIW-6.0": '"AMD Radeon PRO W6600", "RDNA2", "gfx1032", "✅", "❌"',
              "RIW-6.1": '"AMD Radeon PRO W6600", "RDNA2", "gfx1032", "✅", "❌"',
              "RIW-6.2.4": '"AMD Radeon PRO W6600", "RDNA2", "gfx1032", "✅", "❌"'}


def _spec_targets(texts: dict) -> dict[str, str]:
    """Product name (lower case) -> LLVM target, from AMD's hardware specification table."""
    rows = [row for table in parse.rst_list_tables(texts[ARCH_SPECS]) for row in table]
    return {row["Model"].lower(): row["LLVM target name"] for row in rows}


def _windows_release(pages: list[str], texts: dict, specs: dict) -> dict:
    """A Windows row from the release's page(s), oldest point release first: each target's Runtime and HIP SDK status
    (the best its products have), `from` for a target a later point release added; a product the page files under
    another target than AMD's hardware specification table counts under the table's, and the row says so."""
    gfx: dict = {}
    wrong, added, first, named = [], [], None, None
    for index, saved in enumerate(pages):
        page = parse.windows_support(texts[saved])
        point = re.search(r"\d+\.\d+\.\d+", saved).group(0)
        names = [gpu["name"].lower() for gpu in page["gpus"]]
        added += [gpu["name"] for gpu in page["gpus"] if named is not None and gpu["name"].lower() not in named]
        named = names
        for gpu in page["gpus"]:
            target = specs.get(gpu["name"].lower(), gpu["gfx"])
            if target != gpu["gfx"]:
                said = f"{gpu['name']} as {gpu['gfx']} (the hardware specification table: {target})"
                wrong.append(said) if said not in wrong else None
            entry = gfx.get(target)
            if entry is None:
                entry = gfx[target] = {"runtime": gpu["runtime"], "sdk": gpu["sdk"]}
                if index:
                    entry["from"] = point
            for column in ("runtime", "sdk"):
                entry[column] = min(entry[column], gpu[column], key=STATUS_RANK.index)
        first = first or page["os"]
    row = {"gfx": gfx, "os": first}
    if wrong:
        row["disagreement"] = "the page lists " + "; ".join(wrong)
    if added:
        row["note"] = f"{point} adds {', '.join(added)}"
    return row


def windows_rows(table: dict, texts: dict) -> None:
    specs = _spec_targets(texts)
    table["sources"]["ARCH-SPECS"] = source_entry(ARCH_SPECS, texts[ARCH_SPECS], ARCH_SPECS_QUOTE)
    rows = {row["rocm"]: row for row in table["releases"]}
    for minor, (key, pages) in WIN.items():
        table["sources"][key] = source_entry(pages[-1], texts[pages[-1]], WIN_QUOTES[key])
        row = rows[minor]
        for stale in ("disagreement", "note", "also"):
            row.pop(stale, None)
        row.update(source=key, **_windows_release(pages, texts, specs))
        if "disagreement" in row:
            row["also"] = ["ARCH-SPECS"]


# --- amdgpu_driver_support.json -----------------------------------------------------------------------------------

PKG_NAMING = "rocm-install-on-linux-6.2.4-package-naming.rst"
PKG_NAMING_QUOTE = "**Example:** `50400` points to the ROCm 5.4.0 release."


def package_naming(table: dict, texts: dict) -> None:
    """The package release-field rule rests on AMD's naming page: its own example must decode to the release it names
    by the decoder rocm-doctor reads package versions with."""
    from rocm_doctor.parsers.packages import amd_release

    table["sources"]["PKG-NAMING"] = source_entry(PKG_NAMING, texts[PKG_NAMING], PKG_NAMING_QUOTE)
    digits, release = re.search(r"`(\d{5,6})` points to the ROCm (\d+\.\d+\.\d+) release", texts[PKG_NAMING]).groups()
    assert amd_release(f"1:6.8.0.{digits}-1") == release, (digits, release)


# --- windows_layer.json -------------------------------------------------------------------------------------------

RIW_INDEX = "rocm-install-on-windows-index.rst"
RIW_INDEX_QUOTE = "* ``amdhip64_6.dll`` (formerly ``amdhip64.dll``)"
RIW_DEPLOY = "rocm-install-on-windows-deployment-guidelines.rst"
RIW_DEPLOY_QUOTE = "AMD GPU drivers are distributed with the HIP runtime included."


def windows_runtime(table: dict, texts: dict) -> None:
    """The HIP runtime DLL of each HIP SDK 5.x and 6.x release follows the rename the HIP SDK's own index page states
    (amdhip64_6.dll, formerly amdhip64.dll); the driver carries that runtime, as the deployment guidelines say."""
    table["sources"]["RIW-INDEX"] = source_entry(RIW_INDEX, texts[RIW_INDEX], RIW_INDEX_QUOTE)
    table["sources"]["RIW-DEPLOY"] = source_entry(RIW_DEPLOY, texts[RIW_DEPLOY], RIW_DEPLOY_QUOTE)
    new, old = re.search(r"``(amdhip64_(\d+)\.dll)`` \(formerly ``(amdhip64\.dll)``\)", texts[RIW_INDEX]).group(1, 3)
    major = int(re.search(r"amdhip64_(\d+)", new).group(1))
    for row in table["hip_sdk"]:
        if "RIW-INDEX" not in row.get("also", []):
            continue
        release_major = int(row["release"].split(".")[0])
        expected = new if release_major == major else old if release_major < major else None
        assert expected is None or row["runtime_dll"] == expected, (row["release"], row["runtime_dll"], expected)


AMDVK = "gpuopen-amdversions.xml"
AMDVK_QUOTE = "<windows-version>32.0.23033.1002</windows-version>"


def amd_driver_versions(text: str, majors: list[int]) -> list[dict]:
    """amdversions.xml's Windows drivers whose driver store version has one of `majors` as its first field, in the
    file's order: [{"adrenalin", "branch"?, "windows_version", "internal_version", "date", "whql"}]."""
    import xml.etree.ElementTree as ElementTree

    rows = []
    for driver in ElementTree.fromstring(text.split("\n\n", 1)[1]).iter("driver"):
        store = driver.findtext("windows-version") or ""
        if driver.get("operating-system") != "Windows" or not store or int(store.split(".")[0]) not in majors:
            continue
        adrenalin, _, branch = driver.get("version").partition(" for ")
        row = {"adrenalin": adrenalin}
        if branch:
            row["branch"] = branch
        row.update(windows_version=store, internal_version=driver.findtext("internal-version"),
                   date=driver.findtext("release-date"), whql=driver.findtext("whql") == "WHQL", source="AMDVK")
        rows.append(row)
    return rows


def windows_drivers(table: dict, texts: dict) -> None:
    """The Windows driver versions are GPUOpen's table, the driver store majors decode_rule names; every one of them
    must decode to its internal version by the rule rocm-doctor reads store versions with."""
    from rocm_doctor.knowledge.windows_layer import decode_internal

    table["sources"]["AMDVK"] = dict(source_entry(AMDVK, texts[AMDVK], AMDVK_QUOTE),
                                     note="the rows with Windows driver major 31 and 32; each follows decode_rule")
    table["drivers"] = amd_driver_versions(texts[AMDVK], table["decode_rule"]["majors"])
    wrong = [row["windows_version"] for row in table["drivers"]
             if decode_internal(row["windows_version"]) != row["internal_version"]]
    assert not wrong, f"driver store versions that do not follow decode_rule: {wrong}"
