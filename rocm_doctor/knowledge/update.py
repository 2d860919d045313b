"""Fresh support data without a new release: download a data bundle, verify it, install it in the user's data
folder atomically; the knowledge store then reads it before the embedded tables (docs/report.md, "Data updates").

Trust model: a bundle is installed only when its detached signature (URL.sig, knowledge/signing.py) verifies
with a key shipped in this package, then its manifest's sha256 per table, its shape and its meaning
(knowledge/pack_checks.py) pass. It is fetched over https only (an http URL needs allow_http; a redirect to
another scheme is refused). An installed bundle without a trusted signer is ignored. Anything wrong leaves the
installed data (or the embedded one) in place.

An installed bundle is verified again each time it is loaded: the folder keeps the bundle as downloaded and its
signature, and both pass the same checks as at install (a bundle planted in the folder, with an `installed.json`
naming a trusted key, is not read). Packs only move forward: one older than the newest ever installed here is a
rollback and refused, and one past its expiry is neither installed nor read. As root, a data folder that is not
root's own (a user's HOME kept by `sudo -E`) is not read.
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
from typing import Any, Iterable, Mapping, Optional
from urllib.parse import urlsplit

import requests

from rocm_doctor import __version__, inputfile, safefile
from rocm_doctor.knowledge import http, pack_checks, signing
from rocm_doctor.parsers import json_text

# The release channel. Placeholder domain of the project: set ROCM_DOCTOR_DATA_URL or pass --url to use another.
DEFAULT_URL = "https://rocm-doctor.dev/data/v1/rocm-doctor-data.json"
URL_ENV = "ROCM_DOCTOR_DATA_URL"
DIR_ENV = "ROCM_DOCTOR_DATA_DIR"
FORMAT = "rocm-doctor-data"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
INSTALLED = "installed.json"  # written last in a bundle folder: its presence means the folder is complete
POINTER = "current"  # names the active bundle folder; replaced atomically
RAW = "bundle.json"  # the bundle as downloaded, and beside it its signature (RAW + signing.SUFFIX)
HIGHEST = "highest-version"  # the newest data_version ever installed here: an older pack is a rollback
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
    """The manifest's data_version as numbers for ordering; () for one that is not well formed."""
    match = pack_checks.VERSION.fullmatch(str((manifest or {}).get("data_version") or ""))
    return tuple(int(n) for n in match.groups() if n is not None) if match else ()


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
    if signing.signer_of(meta.get("signature")) is None:
        return None  # unsigned (an earlier rocm-doctor installed it) or signed by a key no longer trusted
    installed_version = data_version(meta.get("manifest"))
    if not installed_version or installed_version < data_version(embedded_manifest()):
        return None  # this rocm-doctor ships newer data than the download
    if safefile.untrusted_by_root(folder) or not _verified_again(folder, meta):
        return None
    return Installed(folder=folder, meta=meta)


_VERIFIED: dict[tuple, bool] = {}  # (folder, its installed.json's identity) -> whether it verified


def _verified_again(folder: Path, meta: dict[str, Any]) -> bool:
    """The bundle as downloaded still verifies: signature, checks, expiry, and the tables installed are its own."""
    try:
        info = (folder / INSTALLED).stat()
    except OSError:
        return False
    key = (str(folder), info.st_ino, info.st_mtime_ns, info.st_size)
    if key not in _VERIFIED:
        _VERIFIED[key] = _verify_folder(folder, meta)
    return _VERIFIED[key]


def _verify_folder(folder: Path, meta: dict[str, Any]) -> bool:
    try:
        raw = inputfile.read(folder / RAW, LIMITS.max_bytes)
        signature = inputfile.read(folder / (RAW + signing.SUFFIX), 4096).decode("utf-8", errors="replace")
        signing.check(raw, signature)
        bundle = verify(raw, meta.get("allow_hosts") or ())
    except (inputfile.InputError, signing.SignatureError, UpdateError, OSError):
        return False
    hashes = {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in bundle["files"].items()}
    return hashlib.sha256(raw).hexdigest() == meta.get("sha256") and hashes == meta.get("files") \
        and pack_checks.expiry_problem(bundle["manifest"]) is None


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


def allowed_hosts(extra: Iterable[str] = ()) -> set[str]:
    """Hosts a pack's URLs may name: the known wheel hosts, those of the embedded tables, and `extra`."""
    embedded = [json.loads(text) for name in required_files() if (text := embedded_text(name))]
    return set(pack_checks.KNOWN_HOSTS) | pack_checks.hosts_of(embedded) | {h.lower() for h in extra}


def verify(raw: bytes, extra_hosts: Iterable[str] = ()) -> dict[str, Any]:
    """The parsed bundle, or UpdateError naming the first thing wrong with it (its signature is checked apart)."""
    try:
        bundle = json_text.loads(raw.decode("utf-8"))
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
    why = pack_checks.version_problem(manifest)
    if why:
        raise UpdateError(why)
    listed = manifest_files(manifest)
    for name in required_files():
        if name not in files:
            raise UpdateError(f"the bundle lacks the required table {name}")
    tables = {name: _check_table(name, text, listed.get(name)) for name, text in files.items()}
    wrong = pack_checks.problems(tables, allowed_hosts(extra_hosts))
    if wrong:
        more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
        raise UpdateError(f"{wrong[0]}{more}")
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


def _check_table(name: str, text: Any, sha: Optional[str]) -> Any:
    if not NAME.match(name) or name == MANIFEST or name.endswith(".schema.json"):
        raise UpdateError(f"the bundle holds a file it may not install: {name!r}")
    if not isinstance(text, str):
        raise UpdateError(f"{name} is not stored as text in the bundle")
    if not sha or hashlib.sha256(text.encode("utf-8")).hexdigest() != sha:
        raise UpdateError(f"{name} does not match the sha256 its manifest lists")
    try:
        value = json_text.loads(text)
    except ValueError as exc:
        raise UpdateError(f"{name} is not valid JSON ({exc})") from None
    _check_shape(name, value)
    return value


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
def install(bundle: dict[str, Any], sha256: str, source: str, data_dir: Optional[Path] = None,
            signature: Optional[dict[str, Any]] = None, raw: bytes = b"", signature_text: str = "",
            allow_hosts: Iterable[str] = ()) -> Path:
    """Write the tables into a new folder (with the bundle as downloaded and its signature, verified again at
    every load), then switch the pointer with one atomic rename."""
    data_dir = data_dir or user_data_dir()
    bundles = data_dir / "bundles"
    bundles.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=bundles))
    try:
        hashes = {}
        for name, text in bundle["files"].items():
            table = text.encode("utf-8")
            safefile.create(staging / name, table, mode=0o644)
            hashes[name] = hashlib.sha256(table).hexdigest()
        safefile.create(staging / MANIFEST, json.dumps(bundle["manifest"], indent=1), mode=0o644)
        safefile.create(staging / RAW, raw, mode=0o644)
        safefile.create(staging / (RAW + signing.SUFFIX), signature_text, mode=0o644)
        meta = {"format": FORMAT, "source": http.display_url(source), "sha256": sha256,
                "installed_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "manifest": bundle["manifest"], "files": hashes, "signature": signature,
                "allow_hosts": sorted(set(allow_hosts))}
        safefile.create(staging / INSTALLED, json.dumps(meta, indent=1), mode=0o644)
        final = bundles / sha256[:16]
        if (final / INSTALLED).exists():
            shutil.rmtree(staging)  # the same bundle again: keep the complete copy, just point at it
        else:
            shutil.rmtree(final, ignore_errors=True)  # a leftover of an interrupted run
            staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    safefile.write(data_dir / POINTER, final.name, stream=False)
    _prune(bundles, keep=final.name)
    version = str(bundle["manifest"].get("data_version"))
    if data_version({"data_version": version}) > highest(data_dir):
        safefile.write(data_dir / HIGHEST, version + "\n", stream=False)
    return final


def highest(data_dir: Path) -> tuple[int, ...]:
    """The newest data_version ever installed in `data_dir` (kept when the data is reset), () when none."""
    try:
        text = inputfile.read(data_dir / HIGHEST, 256).decode("ascii", errors="replace").strip()
    except (inputfile.InputError, OSError):
        return ()
    return data_version({"data_version": text})


def _prune(bundles: Path, keep: str) -> None:
    for child in bundles.iterdir():
        if child.name != keep and child.is_dir():
            shutil.rmtree(child, ignore_errors=True)


def uninstall(data_dir: Optional[Path] = None) -> bool:
    """Back to the embedded data from whatever state the folder is in (a pointer that is a folder or a dangling
    link, `bundles` replaced by a file, leftovers of killed installs); whether anything was removed. Raises
    UpdateError when the data folder is not a folder (ROCM_DOCTOR_DATA_DIR naming a file): nothing is removed then."""
    data_dir = data_dir or user_data_dir()
    if os.path.lexists(data_dir) and not data_dir.is_dir():
        raise UpdateError(f"{data_dir} is not a folder (is {DIR_ENV} set to a file?); nothing was removed, and the "
                          "embedded data is in use")
    names = [POINTER, "bundles"]
    try:
        names += [name for name in os.listdir(data_dir) if name.endswith(safefile.TMP_SUFFIX)]
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise UpdateError(f"cannot read {data_dir}: {exc.strerror or exc}") from None
    removed = False
    for name in names:
        path = data_dir / name
        try:
            if path.is_symlink() or not path.is_dir():
                path.unlink()
            else:
                shutil.rmtree(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise UpdateError(f"cannot remove {path}: {exc.strerror or exc}") from None
        removed = True
    return removed


# -- the whole update ---------------------------------------------------------------------------------------------
def update(url: str, data_dir: Optional[Path] = None, limits: http.Limits = LIMITS, allow_http: bool = False,
           allow_hosts: Iterable[str] = ()) -> dict[str, Any]:
    """Download, check the signature, verify, install. Returns what was installed; raises UpdateError (old data
    untouched)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme != "https" and not (allow_http and scheme == "http"):
        raise UpdateError(f"{http.display_url(url)} is not an https URL"
                          + ("; plain http needs --allow-http" if scheme == "http" else ""))
    session = requests.Session() if allow_http else http.HttpsOnlySession()
    try:
        raw = http.get(url, limits, session).body
        small = http.Limits(limits.connect_s, limits.read_s, limits.deadline_s, max_bytes=4096)
        signature_text = http.get(url + signing.SUFFIX, small, session).body.decode("utf-8", errors="replace")
    except http.HttpError as exc:
        raise UpdateError(str(exc)) from None
    try:
        signer = signing.check(raw, signature_text)
    except signing.SignatureError as exc:
        raise UpdateError(str(exc)) from None
    bundle = verify(raw, allow_hosts)
    new, embedded = data_version(bundle["manifest"]), data_version(embedded_manifest())
    if new < embedded:
        raise UpdateError("the downloaded data is older than the data built into this rocm-doctor; nothing installed")
    if new < highest(data_dir or user_data_dir()):
        raise UpdateError(f"the downloaded data ({bundle['manifest'].get('data_version')}) is older than data "
                          "installed here before: a rollback is refused; nothing installed")
    expired = pack_checks.expiry_problem(bundle["manifest"])
    if expired:
        raise UpdateError(expired)
    sha256 = hashlib.sha256(raw).hexdigest()
    try:
        folder = install(bundle, sha256, url, data_dir, signer, raw=raw, signature_text=signature_text,
                         allow_hosts=allow_hosts)
    except OSError as exc:
        raise UpdateError(f"cannot install into {data_dir or user_data_dir()}: {exc.strerror or exc}") from None
    return {"folder": str(folder), "data_version": bundle["manifest"].get("data_version"),
            "generated": bundle["manifest"].get("generated"), "sha256": sha256, "files": sorted(bundle["files"]),
            "signed_by": signer["signer"], "key_id": signer["key_id"]}
