"""Builders for the rows the Linux kernel's amdgpu/amdkfd sources give, read at a commit and saved under
tests/fixtures/sources/: the GC IP versions KFD maps to each gfx target (kgd2kfd_probe) and the graphics-core
firmware files each GFX generation's driver declares (MODULE_FIRMWARE)."""

from __future__ import annotations

import re

from source_parsers import source_entry

KFD = "linux-kfd_device.c-kgd2kfd_probe.c"
KFD_QUOTE = "\t\tcase IP_VERSION(11, 0, 3):\n\t\t\t/* Note: Compiler version is 11.0.1 while HW version is 11.0.3 */"
FIRMWARE = {"GFX9-FW": ("linux-gfx_v9_0.c-MODULE_FIRMWARE.c", 'MODULE_FIRMWARE("amdgpu/aldebaran_sjt_mec2.bin");'),
            "GFX943-FW": ("linux-gfx_v9_4_3.c-MODULE_FIRMWARE.c", 'MODULE_FIRMWARE("amdgpu/gc_9_5_0_rlc.bin");'),
            "GFX10-FW": ("linux-gfx_v10_0.c-MODULE_FIRMWARE.c", 'MODULE_FIRMWARE("amdgpu/yellow_carp_rlc.bin");'),
            "GFX11-FW": ("linux-gfx_v11_0.c-MODULE_FIRMWARE.c", 'MODULE_FIRMWARE("amdgpu/gc_11_5_3_rlc.bin");'),
            "GFX12-FW": ("linux-gfx_v12_0.c-MODULE_FIRMWARE.c", 'MODULE_FIRMWARE("amdgpu/gc_12_0_1_toc.bin");')}


def gfx_name(target_version: int) -> str:
    """KFD's gfx_target_version (major*10000 + minor*100 + stepping) -> the LLVM target name: 90010 -> gfx90a."""
    major, minor, stepping = target_version // 10000, target_version // 100 % 100, target_version % 100
    return f"gfx{major}{minor}{stepping:x}"


def kfd_targets(text: str) -> dict[str, str]:
    """kgd2kfd_probe's switch on the GC IP version: {"11.0.3": "gfx1101", ...} in the file's order."""
    return {ip: gfx_name(version) for ip, version in kfd_versions(text).items()}


def kfd_versions(text: str) -> dict[str, int]:
    """kgd2kfd_probe's switch on the GC IP version: {"11.0.3": 110001, ...} in the file's order (the ASIC cases of
    pre-GFX9 chips, which name no GC IP version, are left out)."""
    found, pending = {}, []
    for line in text.splitlines():
        case = re.search(r"case IP_VERSION\((\d+), (\d+), (\d+)\):", line)
        if case:
            pending.append(".".join(case.groups()))
            continue
        value = re.search(r"gfx_target_version = (\d+);", line)
        if value and pending:
            found.update({ip: int(value.group(1)) for ip in pending})
        if value or re.search(r"\bcase CHIP_", line):
            pending = []
    return found


def firmware_files(text: str) -> list[str]:
    """The file names a driver source declares with MODULE_FIRMWARE("amdgpu/<name>")."""
    return re.findall(r'MODULE_FIRMWARE\("amdgpu/([^"]+)"\)', text)


def firmware_rows(table: dict, texts: dict) -> None:
    """Each target's GC IP versions from KFD; a row whose firmware prefixes a saved MODULE_FIRMWARE block declares
    rests on that block."""
    table["sources"]["KFD-DEVICE"] = source_entry(KFD, texts[KFD], KFD_QUOTE)
    by_gfx: dict[str, list[str]] = {}
    for ip, gfx in kfd_targets(texts[KFD]).items():
        by_gfx.setdefault(gfx, []).append(ip)
    declared = {}
    for key, (saved, quote) in FIRMWARE.items():
        table["sources"][key] = source_entry(saved, texts[saved], quote)
        declared[key] = firmware_files(texts[saved])
    for row in table["targets"]:
        row["gc"] = by_gfx[row["gfx"]]
        row["gc_source"] = "KFD-DEVICE"
        for key, files in declared.items():
            if all(any(name.startswith(prefix) for name in files) for prefix in row["prefixes"]):
                row["source"] = key
    used = {row[field] for row in table["targets"] for field in ("source", "gc_source")}
    for key in [key for key in table["sources"] if key not in used]:
        del table["sources"][key]  # a reading no row rests on any more



def kfd_only_targets(table: dict, texts: dict, hardware: list[str], therock: dict, products: dict) -> None:
    """A target KFD maps a GC IP version to but the catalog has no row for gets one from KFD alone, with what the
    saved support pages say of it: `hardware` (ROCm 10.0's targets), `therock` (SUPPORTED_GPUS.md's status per OS),
    `products` (TheRock's cmake: target -> the product name it builds it for)."""
    table["sources"]["KFD-DEVICE"] = source_entry(KFD, texts[KFD], KFD_QUOTE)
    known = {row["gfx"] for row in table["targets"]}
    versions = kfd_versions(texts[KFD])
    by_gfx: dict[str, list[str]] = {}
    for ip, version in versions.items():
        by_gfx.setdefault(gfx_name(version), []).append(ip)
    for gfx, ips in by_gfx.items():
        if gfx in known and not any(r["gfx"] == gfx and r["source"] == "KFD-DEVICE" for r in table["targets"]):
            continue
        said = ["not in ROCm 10.0's hardware table (RN-10.0)" if gfx not in hardware else "in ROCm 10.0's hardware "
                "table (RN-10.0)"]
        for os_name, status in therock.items():
            marks = [name.replace("_", " ") for name, listed in status.items() if gfx in listed]
            said.append(f"TheRock SUPPORTED_GPUS.md ({os_name}): {', '.join(marks) if marks else 'not listed'} "
                        "(TR-SUP)")
        said.append(f"TheRock builds it as \"{products[gfx]}\" (TR-CMAKE)" if gfx in products else
                    "TheRock's target list does not name it (TR-CMAKE)")
        row = {"gfx": gfx, "arch": None, "codename": None, "gfx_target_version": versions[ips[0]],
               "gc": ips, "pci_device_ids": [], "kind": None, "source": "KFD-DEVICE",
               "support": "; ".join(said), "support_sources": ["RN-10.0", "TR-SUP", "TR-CMAKE"],
               "note": f"known to KFD only (GC {', '.join(ips)}): architecture, codename, device ids and kind are "
                       "not in a saved source; no release row of rocm_support_linux.json or support_windows.json "
                       "lists it, so rocm-doctor treats it as not officially supported and asks the machine"}
        table["targets"] = [r for r in table["targets"] if r["gfx"] != gfx] + [row]
