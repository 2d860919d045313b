"""Fresh support data without a new release: download a data bundle, verify it, install it in the user's data
folder atomically; the knowledge store then reads it before the embedded tables (docs/report.md, "Data updates").

Trust model: the bundle's sha256 is published beside it (URL.sha256, `sha256sum` format) and the manifest inside
lists a sha256 per table. That catches truncation, corruption and mismatched uploads; it is not a signature, so it
trusts the HTTPS origin of the release channel. Anything wrong leaves the installed data (or the embedded one)
in place.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Optional

from rocm_doctor import __version__
from rocm_doctor.knowledge import http

# The release channel. Placeholder domain of the project: set ROCM_DOCTOR_DATA_URL or pass --url to use another.
DEFAULT_URL = "https://rocm-doctor.dev/data/v1/rocm-doctor-data.json"
URL_ENV = "ROCM_DOCTOR_DATA_URL"
DIR_ENV = "ROCM_DOCTOR_DATA_DIR"
FORMAT = "rocm-doctor-data"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
INSTALLED = "installed.json"  # written last in a bundle folder: its presence means the folder is complete
POINTER = "current"  # names the active bundle folder; replaced atomically
LIMITS = http.Limits(connect_s=10, read_s=30, deadline_s=120, max_bytes=20 * 1024 * 1024)
NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*\.json$")


class UpdateError(Exception):
    """Why an update was refused; one line for the user. The old data is untouched when this is raised."""


@dataclass
class Installed:
    folder: Path
    meta: dict[str, Any]

    def path(self, name: str) -> Path:
        return self.folder / name


# -- where ------------------------------------------------------------------------------------------------------
def user_data_dir(env: Mapping[str, str] = os.environ) -> Path:
    if env.get(DIR_ENV):
        return Path(env[DIR_ENV])
    if sys.platform == "win32":
        base = env.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return Path(base) / "rocm-doctor" / "data"
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "rocm-doctor" / "data"


def default_url(env: Mapping[str, str] = os.environ) -> str:
    return env.get(URL_ENV) or DEFAULT_URL


# -- the embedded data --------------------------------------------------------------------------------------
def embedded_text(name: str) -> Optional[str]:
    try:
        return resources.files("rocm_doctor.data").joinpath(name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None


def embedded_manifest() -> Optional[dict[str, Any]]:
    text = embedded_text(MANIFEST)
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def manifest_files(manifest: Optional[dict[str, Any]]) -> dict[str, str]:
    """name -> sha256 from a manifest (a list of {name, sha256} or a {name: {sha256}} map)."""
    files = (manifest or {}).get("files") or []
    if isinstance(files, dict):
        return {str(k): str((v or {}).get("sha256", "")) for k, v in files.items()}
    return {str(e.get("name")): str(e.get("sha256", "")) for e in files if isinstance(e, dict) and e.get("name")}


def required_files() -> list[str]:
    """The tables this rocm-doctor reads: every bundle must carry them all."""
    names = list(manifest_files(embedded_manifest()))
    if names:
        return names
    root = resources.files("rocm_doctor.data")
    return sorted(p.name for p in root.iterdir() if p.name.endswith(".json") and not p.name.endswith(".schema.json")
                  and p.name != MANIFEST)


def data_version(manifest: Optional[dict[str, Any]]) -> tuple[int, ...]:
    text = str((manifest or {}).get("data_version") or (manifest or {}).get("generated") or "")
    return tuple(int(n) for n in re.findall(r"\d+", text))


# -- the installed bundle -------------------------------------------------------------------------------------
def installed(data_dir: Optional[Path] = None) -> Optional[Installed]:
    """The active installed bundle if it is complete and not older than the embedded data, else None."""
    data_dir = data_dir or user_data_dir()
    try:
        name = (data_dir / POINTER).read_text(encoding="utf-8").strip()
        if not name or "/" in name or "\\" in name or name.startswith("."):
            return None
        folder = data_dir / "bundles" / name
        meta = json.loads((folder / INSTALLED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(meta.get("files"), dict):
        return None
    if data_version(meta.get("manifest")) < data_version(embedded_manifest()):
        return None  # this rocm-doctor ships newer data than the download
    return Installed(folder=folder, meta=meta)


def installed_text(name: str, data_dir: Optional[Path] = None) -> Optional[str]:
    """A table from the installed bundle, only if it is there and still matches its checksum."""
    if name == MANIFEST or name.endswith(".schema.json"):
        return None  # the embedded manifest describes the embedded tables; schemas belong to the code
    try:
        bundle = installed(data_dir)
        if bundle is None or name not in bundle.meta["files"]:
            return None
        raw = bundle.path(name).read_bytes()
        if hashlib.sha256(raw).hexdigest() != bundle.meta["files"][name]:
            return None
        return raw.decode("utf-8")
    except Exception:  # a damaged user copy must never break a diagnosis: the embedded data answers
        return None


# -- building and checking bundles --------------------------------------------------------------------------
def build_bundle(data_dir: Path) -> bytes:
    """The release side: a bundle of the tables in data_dir (with its manifest.json)."""
    manifest = json.loads((data_dir / MANIFEST).read_text(encoding="utf-8"))
    files = {name: (data_dir / name).read_text(encoding="utf-8") for name in manifest_files(manifest)}
    bundle = {"format": FORMAT, "format_version": FORMAT_VERSION, "requires_tool": None, "manifest": manifest,
              "files": files}
    return json.dumps(bundle, indent=1, ensure_ascii=False).encode("utf-8")


def checksum_line(raw: bytes, filename: str) -> str:
    return f"{hashlib.sha256(raw).hexdigest()}  {filename}\n"


def parse_checksum(text: str) -> str:
    match = re.search(r"\b([0-9a-fA-F]{64})\b", text)
    if not match:
        raise UpdateError("the published .sha256 file holds no SHA-256 checksum")
    return match.group(1).lower()


def verify(raw: bytes, expected_sha256: str) -> dict[str, Any]:
    """The parsed bundle, or UpdateError naming the first thing wrong with it."""
    actual = hashlib.sha256(raw).hexdigest()
    if actual != expected_sha256.lower():
        raise UpdateError(f"checksum mismatch: the download has sha256 {actual[:16]}…, the channel publishes "
                          f"{expected_sha256[:16]}… (corrupt or partial download)")
    try:
        bundle = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UpdateError(f"the bundle is not valid JSON ({exc})") from None
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        raise UpdateError(f"not a rocm-doctor data bundle (no \"format\": \"{FORMAT}\")")
    if bundle.get("format_version") != FORMAT_VERSION:
        raise UpdateError(f"bundle format {bundle.get('format_version')!r} is not {FORMAT_VERSION}; upgrade rocm-doctor")
    _check_tool_version(bundle.get("requires_tool"))
    manifest, files = bundle.get("manifest"), bundle.get("files")
    if not isinstance(manifest, dict) or not isinstance(files, dict):
        raise UpdateError("the bundle has no manifest or no files")
    listed = manifest_files(manifest)
    for name in required_files():
        if name not in files:
            raise UpdateError(f"the bundle lacks the required table {name}")
    for name, text in files.items():
        _check_table(name, text, listed.get(name))
    return bundle


def _check_tool_version(required: Any) -> None:
    if not required:
        return
    from packaging.version import InvalidVersion, Version

    try:
        if Version(str(required)) > Version(__version__):
            raise UpdateError(f"this data needs rocm-doctor {required} or newer (this is {__version__}); upgrade first")
    except InvalidVersion:
        raise UpdateError(f"the bundle names an unreadable tool version {required!r}") from None


def _check_table(name: str, text: Any, sha: Optional[str]) -> None:
    if not NAME.match(name) or name == MANIFEST or name.endswith(".schema.json"):
        raise UpdateError(f"the bundle holds a file it may not install: {name!r}")
    if not isinstance(text, str):
        raise UpdateError(f"{name} is not stored as text in the bundle")
    if not sha or hashlib.sha256(text.encode("utf-8")).hexdigest() != sha:
        raise UpdateError(f"{name} does not match the sha256 its manifest lists")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UpdateError(f"{name} is not valid JSON ({exc})") from None
    _check_shape(name, value)


def _check_shape(name: str, value: Any) -> None:
    """The new table must keep what the code reads: the embedded table's top-level keys (and its schema, if any)."""
    current_text = embedded_text(name)
    if current_text is not None:
        current = json.loads(current_text)
        if type(current) is not type(value):
            raise UpdateError(f"{name} is a {type(value).__name__}, expected a {type(current).__name__}")
        if isinstance(current, dict):
            missing = sorted(k for k in current if k not in value)
            if missing:
                raise UpdateError(f"{name} lacks the key(s) {', '.join(missing)} that this rocm-doctor reads")
    schema_text = embedded_text(name.replace(".json", ".schema.json"))
    if schema_text is None:
        return
    try:
        import jsonschema
    except ImportError:  # optional: the shape check above still ran
        return
    try:
        jsonschema.validate(value, json.loads(schema_text))
    except jsonschema.ValidationError as exc:
        raise UpdateError(f"{name} does not match its schema: {exc.message}") from None


# -- installing -------------------------------------------------------------------------------------------------
def install(bundle: dict[str, Any], sha256: str, source: str, data_dir: Optional[Path] = None) -> Path:
    """Write the tables into a new folder, then switch the pointer with one atomic rename."""
    data_dir = data_dir or user_data_dir()
    bundles = data_dir / "bundles"
    bundles.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=bundles))
    try:
        hashes = {}
        for name, text in bundle["files"].items():
            raw = text.encode("utf-8")
            _write_synced(staging / name, raw)
            hashes[name] = hashlib.sha256(raw).hexdigest()
        _write_synced(staging / MANIFEST, json.dumps(bundle["manifest"], indent=1).encode("utf-8"))
        meta = {"format": FORMAT, "source": http.display_url(source), "sha256": sha256,
                "installed_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "manifest": bundle["manifest"], "files": hashes}
        _write_synced(staging / INSTALLED, json.dumps(meta, indent=1).encode("utf-8"))
        final = bundles / sha256[:16]
        if (final / INSTALLED).exists():
            shutil.rmtree(staging)  # the same bundle again: keep the complete copy, just point at it
        else:
            shutil.rmtree(final, ignore_errors=True)  # a leftover of an interrupted run
            staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    pointer_tmp = data_dir / f".{POINTER}.tmp"
    _write_synced(pointer_tmp, final.name.encode("utf-8"))
    os.replace(pointer_tmp, data_dir / POINTER)
    _prune(bundles, keep=final.name)
    return final


def _write_synced(path: Path, raw: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(raw)
        handle.flush()
        os.fsync(handle.fileno())


def _prune(bundles: Path, keep: str) -> None:
    for child in bundles.iterdir():
        if child.name != keep and child.is_dir():
            shutil.rmtree(child, ignore_errors=True)


def uninstall(data_dir: Optional[Path] = None) -> bool:
    """Back to the embedded data."""
    data_dir = data_dir or user_data_dir()
    pointer = data_dir / POINTER
    if not pointer.exists():
        return False
    pointer.unlink()
    shutil.rmtree(data_dir / "bundles", ignore_errors=True)
    return True


# -- the whole update ---------------------------------------------------------------------------------------------
def update(url: str, data_dir: Optional[Path] = None, limits: http.Limits = LIMITS) -> dict[str, Any]:
    """Download, verify, install. Returns what was installed; raises UpdateError (old data untouched)."""
    try:
        raw = http.get(url, limits).body
        checksum_limits = http.Limits(limits.connect_s, limits.read_s, limits.deadline_s, max_bytes=4096)
        expected = parse_checksum(http.get(url + ".sha256", checksum_limits).body.decode("utf-8", errors="replace"))
    except http.HttpError as exc:
        raise UpdateError(str(exc)) from None
    bundle = verify(raw, expected)
    new, embedded = data_version(bundle["manifest"]), data_version(embedded_manifest())
    if new < embedded:
        raise UpdateError("the downloaded data is older than the data built into this rocm-doctor; nothing installed")
    folder = install(bundle, expected, url, data_dir)
    return {"folder": str(folder), "data_version": bundle["manifest"].get("data_version"),
            "generated": bundle["manifest"].get("generated"), "sha256": expected, "files": sorted(bundle["files"])}
