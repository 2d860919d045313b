"""`vswhere.exe` output -> Visual Studio / Build Tools instances. Pure; never raises.

Reads the JSON format (`-format json`, with or without `-include packages`), the default text format
(`key: value` lines, a blank line between instances) and a banner-only answer ("Visual Studio Locator version
..." and nothing else: what `vswhere -all` prints when only Build Tools is installed and `-products *` is
missing — microsoft/vswhere#177).
"""

from __future__ import annotations

import json
import re
from typing import Any

_BANNER = re.compile(r"Visual Studio Locator version\s+(?P<version>\S+)(?:\s+\[query version\s+(?P<query>[^\]]+)\])?")
_TEXT_FIELD = re.compile(r"^(?P<key>[A-Za-z_][\w.]*):\s?(?P<value>.*)$")

PRODUCT_SHORT = {
    "Microsoft.VisualStudio.Product.BuildTools": "BuildTools",
    "Microsoft.VisualStudio.Product.Community": "Community",
    "Microsoft.VisualStudio.Product.Professional": "Professional",
    "Microsoft.VisualStudio.Product.Enterprise": "Enterprise",
    "Microsoft.VisualStudio.Product.TeamExplorer": "TeamExplorer",
    "Microsoft.VisualStudio.Product.TestAgent": "TestAgent",
}
VC_TOOLS_COMPONENT = "Microsoft.VisualStudio.Component.VC.Tools.x86.x64"
CPP_WORKLOADS = ("Microsoft.VisualStudio.Workload.VCTools", "Microsoft.VisualStudio.Workload.NativeDesktop")


def _truthy(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "0", "false"):
        return value.strip().lower() in ("1", "true")
    return None


def _instance(raw: dict) -> dict:
    catalog = raw.get("catalog") if isinstance(raw.get("catalog"), dict) else {}
    properties = raw.get("properties") if isinstance(raw.get("properties"), dict) else {}
    product_id = raw.get("productId") or ""
    packages = raw.get("packages")
    package_ids = None
    if isinstance(packages, list):
        package_ids = sorted({str(p.get("id")) for p in packages if isinstance(p, dict) and p.get("id")})
    version = str(raw.get("installationVersion") or catalog.get("buildVersion") or "") or None
    return {
        "instance_id": raw.get("instanceId"),
        "display_name": raw.get("displayName"),
        "product_id": product_id or None,
        "product": PRODUCT_SHORT.get(product_id, product_id.rsplit(".", 1)[-1] if product_id else None),
        "is_build_tools": product_id == "Microsoft.VisualStudio.Product.BuildTools",
        "installation_path": raw.get("installationPath"),
        "installation_version": version,
        "major": int(version.split(".")[0]) if version and version.split(".")[0].isdigit() else None,
        "display_version": catalog.get("productDisplayVersion"),
        "product_line_version": catalog.get("productLineVersion"),
        "is_complete": _truthy(raw.get("isComplete")),
        "is_launchable": _truthy(raw.get("isLaunchable")),
        "is_prerelease": _truthy(raw.get("isPrerelease")),
        "setup_engine_path": properties.get("setupEngineFilePath"),
        "packages": package_ids,
    }


def _text_instances(text: str) -> list[dict]:
    blocks: list[dict] = []
    current: dict = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        match = _TEXT_FIELD.match(line.strip())
        if not match:
            continue
        key, value = match["key"], match["value"].strip()
        if "." in key:  # catalog_productDisplayVersion style is "catalog_x"; dotted keys are properties
            continue
        if key.startswith("catalog_"):
            current.setdefault("catalog", {})[key[len("catalog_"):]] = value
        elif key.startswith("properties_"):
            current.setdefault("properties", {})[key[len("properties_"):]] = value
        else:
            if key == "instanceId" and "instanceId" in current:
                blocks.append(current)
                current = {}
            current[key] = value
    if current:
        blocks.append(current)
    return [_instance(b) for b in blocks if b.get("instanceId") or b.get("installationPath")]


def _json_start(text: str) -> int:
    """Offset of the first line that opens a JSON array/object (the banner has a '[' mid-line)."""
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith(("[", "{")):
            return offset + len(line) - len(line.lstrip())
        offset += len(line)
    return -1


def parse_vswhere(text: str) -> dict:
    """{"format": json|text|banner|empty|garbage, "banner": {...}|None, "instances": [...], "error": str|None}."""
    text = (text or "").lstrip("\ufeff")
    banner = None
    match = _BANNER.search(text)
    if match:
        banner = {"version": match["version"], "query_version": match["query"]}
    out: dict[str, Any] = {"format": "empty", "banner": banner, "instances": [], "error": None}
    stripped = text.strip()
    if not stripped:
        return out
    start = _json_start(stripped)
    if start >= 0:
        try:
            value = json.loads(stripped[start:])
        except json.JSONDecodeError as exc:
            value = None
            out["error"] = f"invalid JSON at line {exc.lineno}, column {exc.colno}"
        if isinstance(value, dict):
            value = [value]
        if isinstance(value, list):
            out["format"] = "json"
            out["instances"] = [_instance(v) for v in value if isinstance(v, dict)]
            return out
    instances = _text_instances(stripped)
    if instances:
        out["format"] = "text"
        out["instances"] = instances
        out["error"] = None
        return out
    body = [l for l in stripped.splitlines() if l.strip() and not _BANNER.search(l) and not l.startswith("Copyright")]
    out["format"] = "banner" if banner and not body else "garbage"
    return out


def has_cpp_tools(instance: dict) -> bool | None:
    """From `-include packages`: the C++ x64 tools component or a C++ workload is installed. None if unknown."""
    packages = instance.get("packages")
    if packages is None:
        return None
    return VC_TOOLS_COMPONENT in packages or any(w in packages for w in CPP_WORKLOADS)
