"""`hipconfig --full` and `hipconfig --version` → HIP version, platform, paths, clang, problems. Pure; never raises.

Layouts seen: ROCm ≥ 5 (`HIP version: ...`, `==hipconfig`, `KEY :value`), ROCm 4 (`HIP version  : ...`,
`== hipconfig`, `=== Environment Variables`), TheRock tarballs (no `Configuration file:` line, llc missing) and
the HCC fallback of a bare `hip-base` install. Distro builds put `-9999` where the git hash would be.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"(?<![\d.])(?P<major>\d+)\.(?P<minor>\d+)\.(?P<build>\d+)(?:-(?P<suffix>[0-9A-Za-z.]+))?")
_HIP_VERSION = re.compile(r"^\s*HIP version\s*:\s*(?P<value>\S.*?)\s*$", re.IGNORECASE)
_KEY = re.compile(r"^\s*(?P<key>[A-Z][A-Z0-9_]*)\s*:\s*(?P<value>.*?)\s*$")
_SECTION = re.compile(r"^\s*={2,}\s*(?P<name>\S.*?)\s*$")
_ENV = re.compile(r"^\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=(?P<value>.*)$")
_CLANG = re.compile(r"^\s*(?P<line>(?:AMD )?clang version (?P<version>\S+).*?)\s*$")
_PROBLEM = re.compile(
    r"Can't exec|No such file or directory|command not found|not found|Permission denied|"
    r"\berror\b|\bwarning\b|Traceback|Segmentation fault|Aborted",
    re.IGNORECASE,
)

FIELDS = {
    "HIP_PATH": "hip_path",
    "ROCM_PATH": "rocm_path",
    "HIP_COMPILER": "compiler",
    "HIP_PLATFORM": "platform",
    "HIP_RUNTIME": "runtime",
    "HIP_CLANG_PATH": "clang_path",
    "CPP_CONFIG": "cpp_config",
    "HSA_PATH": "hsa_path",
    "HCC_HOME": "hcc_home",
    "CUDA_PATH": "cuda_path",
}


def parse_hip_version(text: str | None) -> dict | None:
    """`6.3.42134-a9a80e791` → {text, major, minor, build, suffix, release: "6.3"}; None when no version is found.

    A `-9999` suffix (distro packages built without the git hash) is kept as the suffix.
    """
    for line in (text or "").splitlines():
        match = _VERSION.search(line)
        if match:
            return {
                "text": match.group(0),
                "major": int(match["major"]),
                "minor": int(match["minor"]),
                "build": int(match["build"]),
                "suffix": match["suffix"],
                "release": f"{int(match['major'])}.{int(match['minor'])}",
            }
    return None


def parse_hipconfig_full(text: str | None) -> dict:
    """{version, platform, compiler, runtime, rocm_path, hip_path, clang, clang_version, config_file,
    sections, environment, problems, garbled}. Keys absent from the output are None. The first value of a field
    counts; `garbled` lists fields printed again with another value (two hipconfig outputs run together)."""
    result: dict = {field: None for field in FIELDS.values()}
    result.update(version=None, clang=None, clang_version=None, config_file=None,
                  sections=[], environment={}, problems=[], garbled=[])
    seen: dict[str, list[str]] = {}
    section = None
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        version = _HIP_VERSION.match(line)
        heading = _SECTION.match(line)
        clang = _CLANG.match(line)
        key = _KEY.match(line)
        if version or (key and key["key"] in FIELDS):
            seen.setdefault("HIP version" if version else key["key"], []).append(line.strip())
        if version and result["version"] is None:
            result["version"] = parse_hip_version(version["value"])
        elif heading:
            section = heading["name"].lower()
            result["sections"].append(section)
        elif clang and result["clang"] is None:
            result["clang"], result["clang_version"] = clang["line"], clang["version"]
        elif line.strip().startswith("Configuration file:"):
            result["config_file"] = line.split(":", 1)[1].strip() or None
        elif section == "environment variables" and _ENV.match(line):
            env = _ENV.match(line)
            result["environment"][env["key"]] = env["value"].strip()
        elif key and key["key"] in FIELDS and result[FIELDS[key["key"]]] is None:
            value = key["value"]
            if _PROBLEM.search(value):
                result["problems"].append(value)
            result[FIELDS[key["key"]]] = None if _PROBLEM.search(value) else (value or None)
        if _PROBLEM.search(line) and not key and line.strip() not in result["problems"]:
            result["problems"].append(line.strip())
    if result["platform"]:
        result["platform"] = result["platform"].lower()
    result["garbled"] = [{"what": f"{name} printed {len(lines)} times with different values", "lines": lines}
                         for name, lines in seen.items() if len({_value(line) for line in lines}) > 1]
    return result


def _value(line: str) -> str:
    return re.sub(r"\s+", " ", line.split(":", 1)[-1]).strip()
