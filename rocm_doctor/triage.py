"""`rocm-doctor triage`: judge what a user pasted, never this machine. The pastes (a log, tool outputs, a ticket's
text; several combine) are read tolerantly (rocm_doctor.parsers.paste), the tool outputs in them are recorded as the
commands' observations and the text as the log (`user.log`), the platform is the one the text shows, and the same
interpreters, checks, relations and Diagnosis as `check --from` judge them. Nothing is probed."""

from __future__ import annotations

import functools
import re
from typing import Iterable

from rocm_doctor.diagnose import replay
from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (AMD_SMI_STATIC_KEY, CLINFO_KEY, DEVICE_QUERY_KEY, DMESG_KEY, HIPCONFIG_FULL_KEY,
                                    HIPINFO_COMMAND_KEY, LOG_KEY, NVIDIA_SMI_TABLE_KEY, PASTE_KEY, ROCM_SMI_KEY,
                                    ROCMINFO_KEY)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers import paste, paste_tools
from rocm_doctor.parsers.paste_programs import parse_programs
from rocm_doctor.report.model import Report

SYSTEMS = {"linux": "Linux", "wsl": "Linux", "windows": "Windows"}
ARGV = {DMESG_KEY: ["dmesg"], ROCMINFO_KEY: ["rocminfo"], HIPCONFIG_FULL_KEY: ["hipconfig", "--full"],
        ROCM_SMI_KEY: ["rocm-smi"], AMD_SMI_STATIC_KEY: ["amd-smi", "static"], HIPINFO_COMMAND_KEY: ["hipInfo"],
        NVIDIA_SMI_TABLE_KEY: ["nvidia-smi"], DEVICE_QUERY_KEY: ["deviceQuery"],
        CLINFO_KEY: ["clinfo"]}  # what printed each pasted output
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{5,}")


@functools.lru_cache(maxsize=1)
def message_words() -> frozenset:
    """The words that start the known messages' lines (their examples): what a lost first character is restored to."""
    words = set()
    for row in load("error_signatures.json")["signatures"]:
        for line in str(row.get("example") or "").splitlines():
            match = _WORD.match(line.strip().strip("\"'`"))
            if match:
                words.add(match.group())
    return frozenset(words)


def read(pastes: Iterable[tuple[str, bytes]]) -> list[dict]:
    """[{path, text, programs, tools}] for each (path, raw bytes)."""
    out = []
    for path, raw in pastes:
        decoded = paste.decode(raw).replace("\r\n", "\n")
        cleaned = paste.clean(decoded, message_words())
        tools = paste_tools.tool_outputs(cleaned["text"])
        if paste_tools.has_kernel_log(decoded):
            tools[DMESG_KEY] = decoded  # the kernel log's parser reads journalctl's and dmesg's own prefixes
        out.append({"path": path, "text": cleaned["text"], "programs": cleaned["programs"], "tools": tools})
    return out


def observations(read_pastes: list[dict]) -> Observations:
    """The observations the pastes state: their tool outputs as commands, their text as the log, the variables it
    sets (a command line, an export, Ollama's printed env) as the environment, the platform it shows; nothing of
    this machine."""
    text = "\n".join(p["text"] for p in read_pastes)
    shown = paste_tools.platform_of(text)
    platform_os = shown if shown in SYSTEMS else "linux"  # most tickets; paste.summary keeps "unknown"
    stated = {item["variable"]: item["value"] for item in reversed(parse_programs(text)["env"])}  # first wins
    obs = Observations(platform={"os": platform_os, "system": SYSTEMS.get(platform_os), "release": None,
                                 "machine": None}, env=stated,
                       target={"python": None, "reason": "triage: the paste is judged, not this machine"})
    for item in read_pastes:
        for key, output in item["tools"].items():
            if key not in obs.commands:
                obs.add_command(key, CommandResult(argv=list(ARGV.get(key, [key])), returncode=0, stdout=output))
    paths = ", ".join(p["path"] for p in read_pastes)
    obs.add_probe(LOG_KEY, {"path": paths, "text": text, "truncated": False})
    obs.add_probe(PASTE_KEY, {"files": [{"path": p["path"], "tools": sorted(p["tools"]), "programs": p["programs"]}
                                        for p in read_pastes],
                              "platform": shown, "vendor": paste_tools.vendor_of(text)})
    return obs


def triage(pastes: Iterable[tuple[str, bytes]]) -> tuple[Report, Facts]:
    read_pastes = read(pastes)
    return replay(observations(read_pastes), "paste " + ", ".join(p["path"] for p in read_pastes))
