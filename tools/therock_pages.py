"""Builders for the per-family history of TheRock's Python packages, read at a commit and saved under
tests/fixtures/sources/: the families each gfx target belongs to (cmake/therock_amdgpu_targets.cmake), the note that
per-family releases are frozen, and the per-family pages of June 2025."""

from __future__ import annotations

import re

from source_parsers import source_entry

CMAKE = "therock-amdgpu_targets.cmake"
CMAKE_QUOTE = 'therock_add_amdgpu_target(gfx1153 "AMD Radeon 820M iGPU" FAMILY igpu-all gfx115X-all gfx115X-igpu'
LEGACY = "therock-legacy_per_family_releases.md"
LEGACY_QUOTE = "no new per-family releases will be generated and previous"
JUNE_2025 = "therock-RELEASES-2025-06.md"
JUNE_2025_QUOTE = "--find-links https://therock-nightly-python.s3.amazonaws.com/gfx94X-dcgpu/index.html"


def cmake_families(text: str) -> dict[str, list[str]]:
    """therock_add_amdgpu_target(gfx "product" FAMILY a b c ...) lines: family -> its targets, in the file's order
    (each target is also a family of its own, as the cmake function registers it)."""
    families: dict[str, list[str]] = {}
    for gfx, names in re.findall(r'^therock_add_amdgpu_target\((gfx\w+) "[^"]*" FAMILY ([^)\n]*)', text, re.M):
        for family in [gfx] + names.split():
            families.setdefault(family, []).append(gfx)
    return families


def cmake_products(text: str) -> dict[str, str]:
    """therock_add_amdgpu_target(gfx "product" ...) lines: target -> the product name TheRock builds it for."""
    return dict(re.findall(r'^therock_add_amdgpu_target\((gfx\w+) "([^"]*)"', text, re.M))


def per_family(table: dict, texts: dict) -> None:
    """The family names are the cmake file's (targets' own names left out); a frozen per-family index's targets must
    be the family's there; the superseded June 2025 pages take their address from that RELEASES.md."""
    sources = table["sources"]
    sources["TR-CMAKE"] = source_entry(CMAKE, texts[CMAKE], CMAKE_QUOTE)
    sources["TR-LEGACY"] = source_entry(LEGACY, texts[LEGACY], LEGACY_QUOTE)
    sources["TR-REL-2025-06"] = source_entry(JUNE_2025, texts[JUNE_2025], JUNE_2025_QUOTE)
    families = cmake_families(texts[CMAKE])
    therock = table["therock"]
    therock["family_names"] = [name for name in families if not re.fullmatch(r"gfx[0-9a-f]+", name)]
    for row in therock["per_family"]["families"]:
        assert families.get(row["family"]) == row["targets"], f"{row['family']}: the cmake file gives " \
                                                              f"{families.get(row['family'])}"
    page = re.search(r"--find-links (https://[^ ]+?/)gfx94X-dcgpu/(index\.html)", texts[JUNE_2025])
    therock["superseded"]["url"] = page.group(1) + "{family}/" + page.group(2)


COMMITS = {"TR-5790": ("therock-commit-5c841238.txt", "    Delete per-family release workflows (#5790)"),
           "TR-3763": ("therock-commit-2722ebfa.txt",
                       "    Shift nightly builds from gfx103X-dgpu to gfx103X-all (#3763)"),
           "TR-7547": ("therock-commit-4d76ea1a.txt",
                       "    * Use the aggregate https://<stream>.repo.amd.com/rocm/whl-next/ indexes")}


def commit_date(text: str) -> str:
    """The date of a saved `git show -s --date=iso` record."""
    return re.search(r"^Date:\s+(\d{4}-\d\d-\d\d)", text, re.M).group(1)


def commits(table: dict, texts: dict) -> None:
    """The dates the per-family builds stopped and gfx103X-dgpu gave way to gfx103X-all are those commits'; the
    aggregate indexes are the address the 7547 commit gives, per stream."""
    for key, (saved, quote) in COMMITS.items():
        note = table["sources"].get(key, {}).get("note")  # what else was read about it stays said
        entry = source_entry(saved, texts[saved], quote.strip())
        table["sources"][key] = dict(entry, note=note) if note else entry
    per = table["therock"]["per_family"]
    per["built_until"] = commit_date(texts[COMMITS["TR-5790"][0]])
    renamed = next(row for row in per["families"] if row.get("rename_source") == "TR-3763")
    renamed["renamed"] = commit_date(texts[COMMITS["TR-3763"][0]])
    address = re.search(r"(https://<stream>\.repo\.amd\.com/rocm/whl-next/)", texts[COMMITS["TR-7547"][0]]).group(1)
    following = table["therock"]["multi_arch"]["next"]
    following.update({stream: address.replace("<stream>", stream) for stream in ("stable", "nightly")})
    assert commit_date(texts[COMMITS["TR-7547"][0]]) in following["note"], following["note"]


FAMILY_MATRIX = "therock-amdgpu_family_matrix.py"
FAMILY_MATRIX_QUOTE = "amdgpu_family_info_matrix_nightly = {"


def matrix_platforms(text: str) -> dict[str, set[str]]:
    """The family matrix's presubmit, postsubmit and nightly dictionaries (Python literals, read with the ast module,
    never run): family -> the platforms it is built for."""
    import ast

    platforms: dict[str, set[str]] = {}
    for node in ast.parse(text.split("\n\n", 1)[1]).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "").startswith("amdgpu_family_info_matrix_"):
            for entry in ast.literal_eval(node.value).values():
                for platform, info in entry.items():
                    platforms.setdefault(info["family"], set()).add(platform)
    return platforms


def family_platforms(table: dict, texts: dict) -> None:
    """The frozen per-family indexes are the families the last per-family matrix built; Windows where it built one."""
    table["sources"]["TR-FAMILIES"] = source_entry(FAMILY_MATRIX, texts[FAMILY_MATRIX], FAMILY_MATRIX_QUOTE)
    platforms = matrix_platforms(texts[FAMILY_MATRIX])
    rows = table["therock"]["per_family"]["families"]
    assert {row["family"] for row in rows} == set(platforms), sorted(platforms)
    for row in rows:
        row["windows"] = "windows" in platforms[row["family"]]


PYTORCH_README = "therock-external-builds-pytorch-README.md"
PYTORCH_README_QUOTE = "| apex              | ✅ Supported  | ❌ Not supported"


def windows_support_of(text: str) -> dict[str, str]:
    """TheRock's pytorch README: project -> its Windows column's words ("In progress", "Not supported", ...); the
    versions table's rows by their PyTorch version."""
    result = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) >= 3 and cells[0] and not cells[0].startswith("-"):
            words = re.sub(r"^[^\w]+|\s+-\s.*$", "", cells[2]).strip()
            result[cells[0].replace("↳", "").strip()] = words
    return result


def windows_wheels(table: dict, texts: dict) -> None:
    """The note on TheRock's Windows wheels must say what the README's Windows column says."""
    table["sources"]["TR-PT"] = source_entry(PYTORCH_README, texts[PYTORCH_README], PYTORCH_README_QUOTE)
    said = windows_support_of(texts[PYTORCH_README])
    option = next(o for o in table["windows"]["options"] if o.get("source") == "TR-PT")
    assert said["triton"] == "In progress" and said["apex"] == said["FBGEMM GenAI"] == "Not supported", said
    assert said["2.7"] == "Unsupported", said["2.7"]
    assert "triton in progress" in option["note"] and "2.7 line unsupported" in option["note"], option["note"]
