"""The GPU tables a paste holds besides rocminfo's: nvidia-smi's default table (the driver, the CUDA version it
supports, each GPU's name), amd-smi's (names, and gfx targets where `static` prints them), CUDA's deviceQuery sample
(names, compute capabilities, driver CUDA) and clinfo in both layouts (the clinfo package's aligned columns, ROCm's
own `Key: value` one: device name or gfx target, board name, the CUDA version an NVIDIA platform names). Each item
keeps its line. Pure; never raises."""

from __future__ import annotations

import re

from rocm_doctor.facts.keys import AMD_SMI_STATIC_KEY, CLINFO_KEY, DEVICE_QUERY_KEY, NVIDIA_SMI_TABLE_KEY
from rocm_doctor.parsers import gfx as gfxlib
from rocm_doctor.parsers.amd_smi import parse_amd_smi
from rocm_doctor.parsers.cuda_driver import SMI_HEADER
from rocm_doctor.parsers.paste_tools import tool_outputs

MAX_GPUS = 64
MAX_LINE = 2000  # a tool's line is short; a longer one is cut before any pattern sees it
# "|   0  NVIDIA GeForce RTX 3060 ...  WDDM  |   00000000:01:00.0 Off |" (Persistence-M or Driver-Model column)
_SMI_ROW = re.compile(r"^\|\s*(\d+)\s+(\S.*?)\s{2,}(?:On|Off|WDDM|TCC|N/A)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:"
                      r"[0-9A-Fa-f]{2}\.\d)")
_DQ_DEVICE = re.compile(r'^\s*Device (\d+): "(.+)"\s*$')
_DQ_CC = re.compile(r"CUDA Capability Major/Minor version number:\s+(\d+)\.(\d+)")
_DQ_DRIVER = re.compile(r"CUDA Driver Version / Runtime Version\s+(\d+\.\d+) / (\d+\.\d+)")
# clinfo: "  Device Name      gfx701" or "  Name:\t\t gfx900:xnack-"; a field name, optional colon, the value
_CL_FIELD = re.compile(r"^\s*(Platform Version|Device Name|Name|Board name|Device Board Name \(AMD\))(?::\s*|\s{2,})"
                       r"(\S.*?)\s*$")
_CL_CUDA = re.compile(r"\bCUDA (\d+\.\d+)")


def _gpu(tool: str, line: str, name: str | None = None, gfx: str | None = None, cc=None, index=None) -> dict:
    return {"tool": tool, "index": index, "name": name, "gfx": gfx, "cc": cc, "line": line.strip()[:300]}


def _nvidia_smi(text: str, out: dict) -> None:
    for line in text.splitlines():
        header = SMI_HEADER.search(line) if "NVIDIA-SMI" in line else None
        if header and not out["drivers"]:
            out["drivers"].append({"tool": "nvidia-smi", "version": header.group(1), "cuda": header.group(2),
                                   "line": line.strip()[:300]})
        row = _SMI_ROW.match(line)
        if row and len(out["gpus"]) < MAX_GPUS:
            name = row.group(2).strip()
            out["gpus"].append(_gpu("nvidia-smi", line, None if name.endswith("...") else name,
                                    index=int(row.group(1))))


def _amd_smi(text: str, out: dict) -> None:
    for device in parse_amd_smi(text)["devices"][:MAX_GPUS]:
        if device.get("name") or device.get("gfx"):
            name = device.get("name")
            line = next((row for row in text.splitlines() if name and name in row), "amd-smi")
            out["gpus"].append(_gpu("amd-smi", line, device.get("name"), gfx=device.get("gfx"),
                                    index=device.get("index")))


def _device_query(text: str, out: dict) -> None:
    current = None
    for line in text.splitlines():
        device = _DQ_DEVICE.match(line)
        if device and len(out["gpus"]) < MAX_GPUS:
            current = _gpu("deviceQuery", line, device.group(2), index=int(device.group(1)))
            out["gpus"].append(current)
        cc = _DQ_CC.search(line)
        if cc and current is not None and current["cc"] is None:
            current["cc"] = (int(cc.group(1)), int(cc.group(2)))
        driver = _DQ_DRIVER.search(line)
        if driver and not any(d["tool"] == "deviceQuery" for d in out["drivers"]):
            out["drivers"].append({"tool": "deviceQuery", "version": None, "cuda": driver.group(1),
                                   "line": line.strip()[:300]})


def _clinfo(text: str, out: dict) -> None:
    """Per device: its name (a gfx target on AMD's runtime) and AMD's board name, which the clinfo package prints
    after the name and ROCm's clinfo before it."""
    board, board_line, last = None, "", None
    for line in text.splitlines():
        field = _CL_FIELD.match(line)
        if not field:
            continue
        key, value = field.group(1).lower(), field.group(2)
        if key == "platform version":
            cuda = _CL_CUDA.search(value)
            if cuda:
                out["drivers"].append({"tool": "clinfo", "version": None, "cuda": cuda.group(1),
                                       "line": line.strip()[:300]})
        elif key in ("device name", "name") and len(out["gpus"]) < MAX_GPUS:
            gfx = gfxlib.base_gfx(value.split(":")[0].lower()) if value.lower().startswith("gfx") else None
            last = dict(_gpu("clinfo", line, board if gfx else value, gfx=gfx), board=board is not None)
            out["gpus"].append(last)
            board = None
        elif key in ("board name", "device board name (amd)"):
            if last is not None and last["gfx"] and not last["board"]:
                last.update(name=value, board=True)
            else:
                board, board_line = value, line
    if board is not None and len(out["gpus"]) < MAX_GPUS:
        out["gpus"].append(dict(_gpu("clinfo", board_line, board), board=True))


def parse_tables(text: str | None) -> dict:
    """{gpus: [{tool, index, name, gfx, cc: (major, minor) | None, line}], drivers: [{tool, version, cuda, line}]}
    from the nvidia-smi, amd-smi, deviceQuery and clinfo outputs `text` holds."""
    out: dict = {"gpus": [], "drivers": []}
    tools = tool_outputs(text or "")
    for key, read in ((NVIDIA_SMI_TABLE_KEY, _nvidia_smi), (AMD_SMI_STATIC_KEY, _amd_smi),
                      (DEVICE_QUERY_KEY, _device_query), (CLINFO_KEY, _clinfo)):
        if key in tools:
            read("\n".join(line[:MAX_LINE] for line in tools[key].splitlines()), out)
    return out
