"""A user's log (`check --log`) → what it says about the machine it came from: the GPU targets its error lines and tool
tables name, HSA_OVERRIDE_GFX_VERSION values set on a command line, the torch builds in paths and version strings,
the ROCm release in library paths (/opt/rocm-6.2.1/lib), the HIP version, and the interpreters whose site-packages
appear. Each item keeps the line it was read from. Pure; never raises."""

from __future__ import annotations

import re

from rocm_doctor.parsers import gfx as gfxlib
from rocm_doctor.parsers.paste_programs import parse_programs
from rocm_doctor.parsers.paste_tables import parse_tables

MAX_LINE = 300
# a gfx naming the machine's target; not one inside a file name (TensileLibrary_lazy_gfx1030.dat lists what exists)
_GFX = re.compile(r"(?<![\w/])(?:amdgcn-amd-amdhsa--)?(gfx[0-9a-f]{3,4})(?!\w)(?!\.\w)", re.IGNORECASE)
_TARGET_CONTEXT = re.compile(r"arch|target|compil|code object|\bisa\b|agent|device|binary|kernel", re.IGNORECASE)
_ISA = re.compile(r"amdgcn-amd-amdhsa--(gfx[0-9a-f]{3,4})(?!\w)", re.IGNORECASE)
# AMD_LOG_LEVEL lists the code objects a bundle holds ("hipv4-amdgcn-amd-amdhsa--gfx1010 - [code object targetID
# is ...]"): what a library ships, not what the machine runs
_BUNDLE_ENTRY = re.compile(r"hipv4-|targetID is", re.IGNORECASE)
_STEPPING = re.compile(r"Gfx Major/Minor/Stepping:\s*(\d+)/(\d+)/(\d+)")
_OVERRIDE = re.compile(r"\b(HSA_OVERRIDE_GFX_VERSION(?:_\d+)?)=[\"']?(\d+\.\d+\.\d+)")
_TORCH = re.compile(r"\btorch[-=: _]{1,3}v?(\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?(?:\.dev\d+)?\+[a-z]+[\w.]*?)"
                    r"(?=[\s,)'\"/]|\.dist-info|-cp\d|$)", re.IGNORECASE)
_ROCM_PATH = re.compile(r"/opt/rocm-(\d+\.\d+(?:\.\d+)?)(?=/|\b)")
_HIP = re.compile(r"\bHIP version\s*:\s*(\d+\.\d+\.\d+[\w.-]*)")
_SITE = re.compile(r"((?:/[\w.+-]+)+?|[A-Za-z]:\\(?:[\w .+-]+\\)*?[\w .+-]+)[/\\](?:lib(?:64)?[/\\]python(\d+\.\d+)|Lib)"
                   r"[/\\]site-packages", re.IGNORECASE)


def _add(items: list[dict], seen: set, key, **item) -> None:
    if key not in seen:
        seen.add(key)
        items.append(item)


def parse_log(text: str | None) -> dict:
    """{targets: [{gfx, line}], overrides: [{variable, value, line}], torch: [{version, line}], rocm: [{version, line}],
    hip: [{version, line}], pythons: [{prefix, python, line}]}, each in the order the log names them, what the
    programs in it printed at start-up (rocm_doctor.parsers.paste_programs: programs, env, gpus, apus) and what the GPU
    tables in it list (rocm_doctor.parsers.paste_tables: more gpus, with a compute capability `cc` where stated, and
    drivers: [{tool, version, cuda, line}])."""
    out: dict = {"targets": [], "overrides": [], "torch": [], "rocm": [], "hip": [], "pythons": []}
    seen: dict[str, set] = {key: set() for key in out}
    for raw in (text or "").splitlines():
        line = raw.strip()[:MAX_LINE]
        if not line:
            continue
        stepping = _STEPPING.search(line)
        if stepping:
            major, minor, step = (int(g) for g in stepping.groups())
            gfx = gfxlib.base_gfx(f"gfx{major}{minor:x}{step:x}")
            if gfx:
                _add(out["targets"], seen["targets"], gfx, gfx=gfx, line=line)
        tokens = [] if _BUNDLE_ENTRY.search(line) else (
            _ISA.findall(line) + (_GFX.findall(line) if _TARGET_CONTEXT.search(line) else []))
        for token in tokens:
            gfx = gfxlib.base_gfx(token.lower())
            if gfx and not gfxlib.is_generic(gfx):
                _add(out["targets"], seen["targets"], gfx, gfx=gfx, line=line)
        for variable, value in _OVERRIDE.findall(line):
            _add(out["overrides"], seen["overrides"], (variable, value), variable=variable, value=value, line=line)
        for version in _TORCH.findall(line):
            _add(out["torch"], seen["torch"], version, version=version, line=line)
        for version in _ROCM_PATH.findall(line):
            _add(out["rocm"], seen["rocm"], version, version=version, line=line)
        for version in _HIP.findall(line):
            _add(out["hip"], seen["hip"], version, version=version, line=line)
        for prefix, python in _SITE.findall(line):
            _add(out["pythons"], seen["pythons"], prefix, prefix=prefix, python=python or None, line=line)
    _merge_programs(out, seen, parse_programs(text))
    _merge_tables(out, seen, parse_tables(text))
    return out


def _merge_programs(out: dict, seen: dict, programs: dict) -> None:
    """The gfx, overrides, torch and ROCm versions the programs' start-up lines state join the log's own readings."""
    for gpu in programs["gpus"]:
        if gpu["gfx"] and not gfxlib.is_generic(gpu["gfx"]):
            _add(out["targets"], seen["targets"], gpu["gfx"], gfx=gpu["gfx"], line=gpu["line"])
    for item in programs["env"]:
        if _OVERRIDE.search(f"{item['variable']}={item['value']}"):
            key = (item["variable"], item["value"])
            _add(out["overrides"], seen["overrides"], key, variable=item["variable"], value=item["value"], line=item["line"])
    for item in programs["torch"]:
        if "+" in item["version"]:
            _add(out["torch"], seen["torch"], item["version"], **item)
    for item in programs["rocm"]:
        parts = item["version"].split(".")
        version = ".".join(parts[:2]) if len(parts) > 2 and len(parts[2]) >= 4 else item["version"]  # HIP's 6.2.41133
        _add(out["rocm"], seen["rocm"], version, version=version, line=item["line"])
    out.update(programs=programs["programs"], env=programs["env"], gpus=programs["gpus"], apus=programs["apus"])


def _merge_tables(out: dict, seen: dict, tables: dict) -> None:
    """The GPUs nvidia-smi, deviceQuery and clinfo list join the programs' (a gfx they name is a target), and the
    NVIDIA driver and CUDA versions they state become `drivers`."""
    for gpu in tables["gpus"]:
        if gpu["gfx"] and not gfxlib.is_generic(gpu["gfx"]):
            _add(out["targets"], seen["targets"], gpu["gfx"], gfx=gpu["gfx"], line=gpu["line"])
        out["gpus"].append({"name": gpu["name"], "gfx": gpu["gfx"], "cc": gpu["cc"], "accepted": True,
                            "how": gpu["tool"], "line": gpu["line"]})
    out["drivers"] = tables["drivers"]
