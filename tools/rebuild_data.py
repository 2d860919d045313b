"""Rebuild the data/ tables that have saved sources, and the manifest, from tests/fixtures/sources/ (offline).

A maintainer's command, not shipped in the wheel:

    python tools/rebuild_data.py            # rewrite data/ and say what changed
    python tools/rebuild_data.py --check    # exit 1 if data/ differs from what the saved sources give

To bring a table up to date: save the new page's excerpt under tests/fixtures/sources/ (with its header: source,
title, page-date or commit, read), add or extend a builder below, run this, review the diff.

Which rows each builder rebuilds, and from which saved pages: data/README.md ("Rebuilt from saved sources"). Every
other row is kept as data/ has it; the manifest (data_version, each table's current_as_of) is always rewritten.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hip_pages  # noqa: E402  (tools beside this one, not a package)
import linux_pages  # noqa: E402
import llvm_pages  # noqa: E402
import nvidia_pages  # noqa: E402
import pytorch_pages  # noqa: E402
import rocm_history_pages  # noqa: E402
import therock_pages  # noqa: E402
import windows_pages  # noqa: E402
import rocm_pages  # noqa: E402
import source_parsers as parse  # noqa: E402
from source_parsers import source_entry  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "tests" / "fixtures" / "sources"
RN_10 = "rocm-10.0.0-release-notes.md"
RN_714 = "rocm-7.14.0-release-notes.md"
TR_SUP = "therock-SUPPORTED_GPUS.md"
TR_REL = "therock-RELEASES.md"
TR_SUP_QUOTE = "| **RDNA3.5**  | **gfx1153** | ✅            |               |               |"
FAMILY_NOTES = {("Instinct",): "Instinct only", ("Instinct", "Radeon"): "Instinct and Radeon only",
                ("Radeon", "Ryzen"): "Radeon and Ryzen only", ("Ryzen",): "Ryzen only", ("Radeon",): "Radeon only"}


def dump(table: dict) -> str:
    return json.dumps(table, indent=1, ensure_ascii=False) + "\n"


def _put_row(rows: list, key: str, value: str, row: dict) -> None:
    """Replace the row whose `key` is `value`, or insert it in version order."""
    for index, existing in enumerate(rows):
        if existing[key] == value:
            rows[index] = row
            return
    order = [tuple(int(p) for p in r[key].split(".")) for r in rows]
    wanted = tuple(int(p) for p in value.split("."))
    rows.insert(sum(1 for o in order if o < wanted), row)


# --- rocm_support_linux.json -----------------------------------------------------------------------------------


def rocm_support(table: dict, texts: dict) -> None:
    rn10, rn714 = texts[RN_10], texts[RN_714]
    table["sources"]["RN-10.0"] = source_entry(
        RN_10, rn10, "[Ryzen AI 5 435](https://www.amd.com/en/products/processors/laptop/ryzen/ai-400-series/"
        "amd-ryzen-ai-5-435.html) (Radeon 840M)", "ROCm Core SDK 10.0.0 release notes: AMD hardware support and "
        "operating system support")
    table["sources"]["RN-7.14"] = source_entry(
        RN_714, rn714, "* AMD Ryzen AI 5 435 (gfx1153)", "ROCm Core SDK 7.14.0 release notes (GitHub release "
        "rocm-7.14.0): expanded GPU and OS support")
    apus = parse.apu_devices(rn10)
    row10 = {"rocm": "10.0", "stream": "production", "source": "RN-10.0", "released": parse.header(rn10)["page-date"],
             "gfx": {gfx: "supported" for gfx in parse.hardware_targets(rn10)},
             "products": [{"name": f"{d['name']} ({d['igpu']})", "gfx": d["gfx"], "status": "supported"} for d in apus],
             "pytorch": parse.pytorch_versions(rn10),
             "note": "products: the Ryzen tab only; the page's text gives the Instinct and Radeon tabs' series and "
                     "targets without their device names; pytorch: the torch releases AMD validated per OS"}
    preview = next(row for row in table["releases"] if row["rocm"] == "7.13")
    added = parse.added_gpus(rn714)
    gfx714 = {gfx: "supported" for gfx in preview["gfx"]}
    gfx714.update({gpu["gfx"]: "supported" for gpu in added})
    products = [{k: v for k, v in p.items() if k not in ("from", "disagreement")} for p in preview["products"]]
    products += [{"name": gpu["name"], "gfx": gpu["gfx"], "status": "supported", "source": "RN-7.14"} for gpu in added]
    missing = sorted(set(gfx714) ^ set(row10["gfx"]))
    row714 = {"rocm": "7.14", "stream": "production", "source": "RN-7.14", "released": parse.header(rn714)["page-date"],
              "also": ["HWT-7.13", "RN-10.0"],
              "gfx": gfx714, "products": products, "verified": False,
              "why": "7.14's own hardware table was not read (its release page lists the additions only): the row is "
                     "the 7.13 table plus RN-7.14's additions" + (f"; it differs from 10.0's in {', '.join(missing)}"
                                                                 if missing else ", and equals 10.0's target list")}
    _put_row(table["releases"], "rocm", "7.14", row714)
    _put_row(table["releases"], "rocm", "10.0", row10)


# --- os_support.json ---------------------------------------------------------------------------------------------


def _distro_rows(text: str) -> list[dict]:
    """The OS tables merged across GPU families: one row per distribution version, the families it is listed for."""
    merged: dict[tuple, dict] = {}
    for family, rows in parse.os_tables(text).items():
        for row in rows:
            distro = parse.DISTRO_IDS[row["name"]]
            if distro is None:
                continue
            version, points = row["version"], None
            if distro == "ubuntu" and version.count(".") == 2:
                version, points = version.rsplit(".", 1)[0], [version]
            elif distro == "sles":
                major, _, minor = version.partition(".")
                version = f"{major} SP{minor}" if minor not in ("", "0") else major
            entry = merged.setdefault((distro, version), {"id": distro, "version": version, "families": []})
            entry["families"].append(family)
            if points:
                entry["points"] = points
            kernel = parse.kernel_series(row["kernel"])
            if kernel:
                kernels = entry.setdefault("kernels", [])
                if kernel not in kernels:
                    kernels.append(kernel)
            else:
                entry["kernel"] = row["kernel"]
    result = []
    for entry in merged.values():
        note = FAMILY_NOTES.get(tuple(entry.pop("families")))
        result.append(dict(entry, note=note) if note else entry)
    return result


def os_support(table: dict, texts: dict) -> None:
    rn10 = texts[RN_10]
    table["sources"]["RN-10.0"] = source_entry(RN_10, rn10, "Operating system support remains unchanged in this "
                                               "release.", "ROCm Core SDK 10.0.0 release notes: operating system "
                                               "support tables (Instinct, Radeon, Ryzen)")
    table["sources"]["RN-7.14"] = source_entry(RN_714, texts[RN_714], "RHEL 10.2 replaces RHEL 10.1 as the validated "
                                               "RHEL 10 release", "ROCm Core SDK 7.14.0 release notes (GitHub release "
                                               "rocm-7.14.0): expanded operating system support")
    distros = _distro_rows(rn10)
    note = ("kernels: Ubuntu's GA/HWE/OEM series as listed; other distributions give one kernel build ('kernel'); "
            "glibc is not in this source")
    _put_row(table["releases"], "rocm", "7.14", {
        "rocm": "7.14", "source": "RN-10.0", "also": ["RN-7.14"], "distros": distros,
        "note": "10.0's table: RN-10.0 says operating system support is unchanged from 7.14; " + note})
    _put_row(table["releases"], "rocm", "10.0", {"rocm": "10.0", "source": "RN-10.0", "distros": distros,
                                                "note": note})
    rocm_pages.os_rows(table, texts)
    rocm_history_pages.os_checks(table, texts)


# --- gpu_catalog.json --------------------------------------------------------------------------------------------


def gpu_catalog(table: dict, texts: dict) -> None:
    rocm_pages.catalog_rows(table, texts)
    rn10 = texts[RN_10]
    table["sources"]["RN-10.0"] = source_entry(RN_10, rn10, "[Ryzen AI 5 PRO 440](https://www.amd.com/en/products/"
                                               "processors/laptop/ryzen-pro/ai-400-series/amd-ryzen-ai-5-pro-440.html) "
                                               "(Radeon 840M)", "ROCm Core SDK 10.0.0 release notes: AMD hardware "
                                               "support, Ryzen tab (device, integrated GPU, LLVM target, codename)")
    table["sources"]["TR-REL"] = source_entry(TR_REL, texts[TR_REL], "| AMD Radeon 820M iGPU                          "
                                              "       | gfx1153    | `device-gfx1153` |")
    apus = parse.apu_devices(rn10)
    named: dict[str, dict[str, list]] = {}  # integrated GPU name -> gfx -> the sources that say so
    for device in apus:
        named.setdefault(device["igpu"], {}).setdefault(device["gfx"], ["RN-10.0"])
    for extra in parse.device_extras(texts[TR_REL]):
        match = re.fullmatch(r"AMD (Radeon \w+) iGPU", extra["product"])
        if match:
            sources = named.setdefault(match.group(1), {}).setdefault(extra["gfx"], [])
            sources.append("TR-REL") if "TR-REL" not in sources else None
    shared = {name: [{"gfx": gfx, "sources": srcs} for gfx, srcs in sorted(by_gfx.items())]
              for name, by_gfx in sorted(named.items()) if len(by_gfx) > 1}
    table["ambiguous_names"] = {"names": shared,
                                "note": "one marketing name on two gfx targets (AMD's 10.0 table puts Radeon 840M on "
                                        "both; AMD's table and TheRock's extras table disagree on Radeon 820M): the "
                                        "name alone does not tell the target; KFD's gfx_target_version does"}
    for row in table["targets"]:
        if any(row["gfx"] in gfxs for gfxs in shared.values()):
            row.pop("disagreement", None)  # the table names each device's target: see ambiguous_names
        devices = [d for d in apus if d["gfx"] == row["gfx"]]
        if row["gfx"] == "gfx1153" and devices:  # the target first supported in 7.14: named from AMD's table
            row["codename"] = " / ".join(sorted({d["codename"] for d in devices if d["codename"]}))
            row["products"] = [f"{d['name']} ({d['igpu']})" for d in devices]
            row["source"] = "RN-10.0"
    table["sources"]["TR-SUP"] = source_entry(TR_SUP, texts[TR_SUP], TR_SUP_QUOTE)
    table["sources"]["TR-CMAKE"] = source_entry(therock_pages.CMAKE, texts[therock_pages.CMAKE],
                                                therock_pages.CMAKE_QUOTE)
    linux_pages.kfd_only_targets(table, texts, parse.hardware_targets(rn10), parse.therock_status(texts[TR_SUP]),
                                 therock_pages.cmake_products(texts[therock_pages.CMAKE]))


# --- TheRock's development status and device extras ---------------------------------------------------------------


def _therock_source(table: dict, texts: dict) -> dict:
    table["sources"]["TR-SUP"] = source_entry(TR_SUP, texts[TR_SUP], TR_SUP_QUOTE)
    return parse.therock_status(texts[TR_SUP])


def therock_linux(table: dict, texts: dict) -> None:
    rocm_support(table, texts)
    rocm_pages.support_rows(table, texts)
    rocm_history_pages.support_checks(table, texts)
    table["therock_status"]["linux"] = _therock_source(table, texts)["linux"]


def therock_windows(table: dict, texts: dict) -> None:
    rocm_pages.windows_rows(table, texts)
    windows_pages.checked_rows(table, texts)
    status = _therock_source(table, texts)["windows"]
    table["therock_status"].update(status)


def torch_wheels(table: dict, texts: dict) -> None:
    therock_pages.per_family(table, texts)
    therock_pages.commits(table, texts)
    therock_pages.family_platforms(table, texts)
    therock_pages.windows_wheels(table, texts)
    llvm_pages.generic_targets(table, texts)
    table["sources"]["TR-SUP"] = source_entry(TR_SUP, texts[TR_SUP], TR_SUP_QUOTE)
    text = texts[TR_REL]
    table["sources"]["TR-REL"] = source_entry(TR_REL, text, "| AMD Radeon 820M iGPU                                 "
                                              "| gfx1153    | `device-gfx1153` |")
    table["sources"]["TR-REL-DEPS"] = source_entry(TR_REL, text, "The `torch` packages depend on `rocm[libraries]`, "
                                                   "so the compatible ROCm packages", "TheRock RELEASES.md: the ROCm "
                                                   "packages its torch packages depend on")
    table["therock"]["multi_arch"]["targets"] = [extra["gfx"] for extra in parse.device_extras(text)]
    rn10 = texts[RN_10]
    table["sources"]["RN-10.0"] = source_entry(RN_10, rn10, "2.13.0\n\nWindows", "ROCm Core SDK 10.0.0 release "
                                               "notes: AI ecosystem support (PyTorch releases per OS)")
    windows = ", ".join(parse.pytorch_versions(rn10)["windows"])
    option = {"what": f"AMD's ROCm 10.0 PyTorch for Windows (torch {windows} validated)", "source": "RN-10.0"}
    options = [o for o in table["windows"]["options"] if o.get("source") != "RN-10.0"]
    table["windows"]["options"] = options + [option]
    pytorch_pages.release_matrix_rows(table, texts)
    pytorch_pages.newest_on_pypi(table, texts)


TV_README = "pytorch-vision-README-2.1.md"
TV_README_QUOTE = "| `2.1`              | `0.16`             | `>=3.8`, `<=3.11`   |"


def vision_readme(table: dict, texts: dict) -> None:
    """The torch releases torchvision's README table (at a commit) names take their torchvision from it."""
    text = texts[TV_README]
    table["sources"]["TV-README-2.1"] = source_entry(TV_README, text, TV_README_QUOTE)
    pairs = {}
    for rows in parse.markdown_tables(text):
        for row in rows:
            cells = list(row.values())
            pairs[cells[0]] = cells[1]
    for row in table["releases"]:
        if row["torch"] in pairs:
            row.update(torchvision=pairs[row["torch"]], torchvision_source="TV-README-2.1")
            if row["source"] == "TV-README":
                row["source"] = "TV-README-2.1"


def torch_family(table: dict, texts: dict) -> None:
    vision_readme(table, texts)
    text = texts[TR_REL]
    table["sources"]["TR-REL"] = source_entry(TR_REL, text, "| 2.14          | 2.11               | 0.29          "
                                              "      | 1.14         |", "TheRock RELEASES.md: the torch, torchaudio "
                                              "and torchvision versions built together")
    rows = {row["torch"]: row for row in table["releases"]}
    for pair in parse.torch_companions(text):
        row = rows.get(pair["torch"])
        if row is None:
            continue
        row.update(torchvision=pair["torchvision"], torchvision_source="TR-REL", torchaudio=pair["torchaudio"],
                   torchaudio_source="TR-REL")
        if row["source"] not in table["sources"] or row["source"] == "WHEELS-NOTE":
            row["source"] = "TR-REL"
    used = json.dumps(table["releases"])
    if '"WHEELS-NOTE"' not in used:
        table["sources"].pop("WHEELS-NOTE", None)


def windows_layer(table: dict, texts: dict) -> None:
    rocm_pages.windows_drivers(table, texts)
    rocm_pages.windows_runtime(table, texts)


def saved_elsewhere(table: dict, texts: dict) -> None:
    """A source whose words are kept verbatim in a saved excerpt outside tests/fixtures/sources/ (the header enum
    regions under tests/fixtures/headers/) is verified when that copy holds its quote and the source names its
    version."""
    for source in table["sources"].values():
        saved = source.get("saved", "")
        if not saved or saved.startswith("tests/fixtures/sources/") or source.get("version") in (None, "unrecorded"):
            continue
        assert source.get("quote") and source["quote"] in (ROOT / saved).read_text(encoding="utf-8"), saved
        source["verified"] = True
        source.pop("why", None)


BUILDERS = {"rocm_support_linux.json": therock_linux, "os_support.json": os_support, "gpu_catalog.json": gpu_catalog,
            "support_windows.json": therock_windows, "torch_wheels.json": torch_wheels,
            "torch_family.json": torch_family, "runtime_status.json": saved_elsewhere,
            "amdgpu_firmware.json": linux_pages.firmware_rows, "nvidia_arch.json": pytorch_pages.wheel_arch_rows,
            "legacy_values.json": hip_pages.legacy_rows, "amdgpu_driver_support.json": rocm_pages.package_naming,
            "overrides.json": hip_pages.override_format, "windows_layer.json": windows_layer,
            "nvidia_driver_cuda.json": nvidia_pages.toolkit_drivers}


# --- rebuilding ----------------------------------------------------------------------------------------------------


def _changes(name: str, old: dict, new: dict) -> list[str]:
    """What changed in a table, row by row for release tables, key by key otherwise."""
    lines = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            continue
        if key == "releases":
            label = "rocm" if "rocm" in new[key][0] else "torch"
            before = {row[label]: row for row in old.get(key, [])}
            for row in new[key]:
                if before.get(row[label]) != row:
                    lines.append(f"{name}: release {row[label]} {'changed' if row[label] in before else 'added'}")
        else:
            lines.append(f"{name}: {key} {'changed' if key in old else 'added'}")
    return lines


def rebuild(data_dir: Path, sources: Path = SOURCES) -> list[str]:
    """Rewrite the tables the saved sources give, then the manifest; what changed, one line each."""
    sys.path.insert(0, str(ROOT))
    from rocm_doctor.knowledge import provenance

    texts = {path.name: path.read_text(encoding="utf-8") for path in sorted(sources.iterdir()) if path.is_file()}
    changes = []
    for name, build in BUILDERS.items():
        old = (data_dir / name).read_text(encoding="utf-8")
        table = json.loads(old)
        build(table, texts)
        if dump(table) != old:
            changes += _changes(name, json.loads(old), table)
            (data_dir / name).write_text(dump(table), encoding="utf-8")
    generated = max(parse.header(text)["read"] for text in texts.values())
    before = (data_dir / "manifest.json").read_bytes()
    if provenance.write_manifest(data_dir, generated).read_bytes() != before:
        changes.append(f"manifest.json: data_version {generated.replace('-', '.')}, checksums and current_as_of")
    return changes


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    args.add_argument("--data", type=Path, default=ROOT / "data", help="the data folder to rebuild (default: data/)")
    args.add_argument("--check", action="store_true", help="change nothing; exit 1 if the rebuild would")
    options = args.parse_args(argv)
    if options.check:
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "data"
            shutil.copytree(options.data, copy)
            changed = rebuild(copy)
    else:
        changed = rebuild(options.data)
    for line in changed:
        print(("would change " if options.check else "") + line)
    if not changed:
        print("data/ is what the saved sources give")
    return 1 if options.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
