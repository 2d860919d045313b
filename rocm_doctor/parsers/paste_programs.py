"""What the programs most ROCm users run print about the machine at start-up, read from a pasted log: Ollama's server
log (its version, the `server config env="map[...]"` it ran with, the GPUs its discovery accepted or skipped and
their gfx), ComfyUI's start-up and system information (its version, torch's, the device and whether it went through
ZLUDA), vLLM's banner, collect_env's lines, NCCL/RCCL's version, and variables set on a command line or exported.
Each item keeps its line. Pure; never raises."""

from __future__ import annotations

import re

from rocm_doctor.parsers import gfx as gfxlib

MAX_LINE = 2000  # Ollama's env map is one long line
_PROGRAMS = (
    ("ollama", re.compile(r"msg=\"Listening on \S+ \(version ([\w.+-]+)\)\"|routes\.go:\d+: INFO server config env=()")),
    ("comfyui", re.compile(r"ComfyUI [Vv]ersion:?\**:?\s*v?([\d.]+\w*)|\*\* ComfyUI startup time()")),
    ("sd-webui", re.compile(r"^Version: (v?\d[\w.-]*)\s*$|Launching Web UI with arguments:()")),
    ("vllm", re.compile(r"vLLM API server version ([\w.+-]+)|█\s+version ([\w.+-]+)|Automatically detected platform (\w+)\.")),
    ("rccl", re.compile(r"\b(?:RCCL|NCCL) version ([\d.]+[\w.+-]*)")),
    ("collect_env", re.compile(r"^(?:ROCM|CUDA) used to build PyTorch: ()")),
)
_ENV_MAP = re.compile(r"server config env=\"?map\[(.*)\]\"?")
_ENV_PAIR = re.compile(r"(?:^|\s)([A-Z][A-Z0-9_]*):(\S*)")
# a variable a command sets: `export X=1`, `set X=1`, `$env:X="1"`, `-e X=1`, `Environment=X=1`, or `X=1 cmd` at the
# start of a command (after a shell prompt); not "consider passing AMD_SERIALIZE_KERNEL=3" in an error's advice
_PROMPT = r"^[`'\"]?(?:\([\w.-]+\)\s*)?(?:[\w.@-]+(?::[^\s$#]*)?[$#]\s*|[$#>]\s+|PS [^>]*>\s*)?"
_VARIABLE = r"((?:HSA|HIP|ROCR|ROCM|CUDA|AMD|GPU|MIOPEN|PYTORCH|OLLAMA|HCC|NCCL|RCCL|TORCH)_[A-Z0-9_]*)"
_VALUE = r"\s*=(?:\s*[\"']|[\"']?)([^\s\"';`]*)"  # `X= cmd` sets X empty; spaces before a value only before a quote
_ENV_SET = re.compile(rf"(?:(?:^|[\s;(`])(?:export\s+|set\s+|\$env:|-e\s+|--env[=\s]+|Environment=\"?)|{_PROMPT}(?=[A-Z]))"
                      rf"{_VARIABLE}{_VALUE}")
_TORCH = re.compile(r"(?:PyTorch|pytorch|Torch) [Vv]ersion:?\**:?\s*(\d+\.\d+[\w.+-]*)")
_ROCM = re.compile(r"(?:ROCM used to build PyTorch|ROCM Version|ROCm version|HIP runtime version)\s*:\s*(\d+\.\d+(?:\.\d+)?)",
                   re.IGNORECASE)
_OLLAMA_GPU = re.compile(r"msg=\"(inference compute|amdgpu is supported|amdgpu is not supported|unsupported Radeon iGPU "
                         r"detected skipping|amdgpu too old|skipping rocm gfx compatibility check)(?: \(supported types:[^\"]*\))?\"(.*)")
_FIELD = re.compile(r"(\w+)=(\"[^\"]*\"|\S+)")
_COMFY_DEVICE = re.compile(r"Device: (cuda:\d+|privateuseone:\d+|cpu) (.+?)(?: : (\w+))?\s*$")
_COMFY_NAME = re.compile(r"\*\*Name:\*\*\s+(cuda:\d+) (.+?)(?: : (\w+))?\s*$")
_COLLECT_GPU = re.compile(r"GPU models and configuration: (.+)")
_GFX = re.compile(r"\b(gfx[0-9a-f]{3,4})\b")
# AMD names a processor with integrated graphics "... with Radeon [Vega] Graphics" (its /proc/cpuinfo model name and
# rocminfo's CPU agent): an iGPU that HIP may number before a discrete card
_APU = re.compile(r"\b(AMD (?:Ryzen|Athlon)\b[\w ]{0,40}? with Radeon(?: [\w-]+){0,3}? Graphics)\b", re.IGNORECASE)
# a card a ticket names in words: "I have a 6700xt", "RX 7900 XTX", "Radeon RX 6600"
_CARD = re.compile(r"\b((?:AMD\s+)?(?:Radeon\s+)?RX\s?\d{3,4}(?:\s?(?:XTX|XT|GRE))?)\b", re.IGNORECASE)
# a ticket's own words: "RX470 (gfx803)", "GPU: AMD Radeon RX 7900 XTX gfx1100"
_NAMED_GFX = re.compile(r"(?:Radeon|\bRX ?\d{3,4}|Instinct|\bMI\d{2,3}|Vega|Navi|\bGPU\b)[^\n]{0,60}?\b(gfx[0-9a-f]{3,4})\b",
                        re.IGNORECASE)


def _first_group(match: re.Match) -> str | None:
    return next((g for g in match.groups() if g), None)


def _fields(text: str) -> dict:
    return {k: v.strip('"') for k, v in _FIELD.findall(text)}


def parse_programs(text: str | None) -> dict:
    """{programs: [{name, version, line}], env: [{variable, value, line}], torch: [{version, line}],
    rocm: [{version, line}], gpus: [{name, gfx, accepted, how, line}], apus: [{name, line}] (processors with
    integrated graphics)}."""
    out: dict = {"programs": [], "env": [], "torch": [], "rocm": [], "gpus": [], "apus": []}
    named, env_seen, versions = {}, set(), set()
    for raw in (text or "").splitlines():
        line = raw.strip()[:MAX_LINE]
        if not line:
            continue
        for name, pattern in _PROGRAMS:
            match = pattern.search(line)
            if match:
                version = _first_group(match)
                if name not in named:
                    named[name] = {"name": name, "version": None, "line": line[:300]}
                    out["programs"].append(named[name])
                if version and not named[name]["version"] and not version.isalpha():
                    named[name].update(version=version, line=line[:300])
        env_map = _ENV_MAP.search(line)
        pairs = _ENV_PAIR.findall(env_map.group(1)) if env_map else _ENV_SET.findall(line)
        for variable, value in pairs:
            # Ollama prints every variable it reads, unset ones empty; a command line's VAR="" is set, to nothing
            if (value or not env_map) and variable not in env_seen:
                env_seen.add(variable)
                out["env"].append({"variable": variable, "value": value, "line": line[:300]})
        for key, pattern in (("torch", _TORCH), ("rocm", _ROCM)):
            for version in pattern.findall(line):
                if (key, version) not in versions:
                    versions.add((key, version))
                    out[key].append({"version": version, "line": line[:300]})
        _gpus(line, out["gpus"])
        apu = _APU.search(line)
        if apu and all(a["name"] != apu.group(1) for a in out["apus"]):
            out["apus"].append({"name": apu.group(1), "line": line[:300]})
    return out


def _gpus(line: str, gpus: list[dict]) -> None:
    ollama = _OLLAMA_GPU.search(line)
    if ollama:
        what, fields = ollama.group(1), _fields(ollama.group(2))
        gfx = gfxlib.base_gfx((fields.get("compute") or fields.get("gpu_type") or fields.get("gfx") or "").lower())
        gpus.append({"name": fields.get("name") or fields.get("description"), "gfx": gfx,
                     "accepted": what in ("inference compute", "amdgpu is supported", "skipping rocm gfx compatibility "
                                          "check"), "how": what, "line": line[:300]})
        return
    device = _COMFY_DEVICE.search(line) or _COMFY_NAME.search(line)
    if device:
        gpus.append({"name": device.group(2), "gfx": None, "accepted": device.group(1) != "cpu",
                     "how": "zluda" if "[ZLUDA]" in line else (device.group(3) or device.group(1)), "line": line[:300]})
        return
    collect = _COLLECT_GPU.search(line)
    if collect:
        for part in collect.group(1).split(","):
            gfx = _GFX.search(part)
            gpus.append({"name": part.split("(")[0].strip(), "gfx": gfxlib.base_gfx(gfx.group(1)) if gfx else None,
                         "accepted": True, "how": "collect_env", "line": line[:300]})
        return
    named = _NAMED_GFX.search(line)
    card = _CARD.search(line)
    if named or card:
        gpus.append({"name": card.group(1) if card else None,
                     "gfx": gfxlib.base_gfx(named.group(1).lower()) if named else None, "accepted": True,
                     "how": "named", "line": line[:300]})
