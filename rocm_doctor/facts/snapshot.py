"""Snapshot files: versioned JSON holding a machine's raw observations (docs/snapshot.md).

A report written by `rocm-doctor report` embeds a snapshot under "snapshot", so it replays the same way. Secret
values are masked before anything is written (parsers/secret_values.py): a snapshot or a stored run holds no
secret a report would hide.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from rocm_doctor import __version__
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers import json_text, secret_values

FORMAT = "rocm-doctor-snapshot"
VERSION = 1
SUPPORTED_VERSIONS = (1,)


class SnapshotError(Exception):
    """The file is not a snapshot this rocm-doctor can read; the message is one line for the user."""


def to_dict(observations: Observations, mask: bool = True) -> dict[str, Any]:
    """The snapshot form; `mask=False` only for a report bundle, which its redactor masks whole (or the user asked
    for it unredacted)."""
    recorded = observations.to_dict()
    return {
        "format": FORMAT,
        "version": VERSION,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "tool": {"name": "rocm-doctor", "version": __version__},
        "observations": secret_values.mask_structure(recorded) if mask else recorded,
    }


def dumps(observations: Observations) -> str:
    return json.dumps(to_dict(observations), indent=1, sort_keys=False)


def from_dict(raw: Any, source: str = "snapshot") -> Observations:
    if isinstance(raw, dict) and isinstance(raw.get("snapshot"), dict):
        raw = raw["snapshot"]  # a report bundle carries its snapshot inside
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise SnapshotError(f"{source} is not a rocm-doctor snapshot (no \"format\": \"{FORMAT}\")")
    version = raw.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise SnapshotError(
            f"{source} has snapshot version {version!r}; this rocm-doctor reads versions "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))} (upgrade rocm-doctor to read newer ones)"
        )
    observations = raw.get("observations")
    if not isinstance(observations, dict):
        raise SnapshotError(f"{source} has no observations object")
    try:
        return Observations.from_dict(observations)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SnapshotError(f"{source} has malformed observations ({type(exc).__name__}: {exc})") from None


def parse(raw: bytes, source: str) -> Observations:
    """The observations in a snapshot's (or report's) bytes, read by the caller (rocm_doctor.inputfile bounds that)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SnapshotError(f"{source} is not valid JSON (not UTF-8 text: corrupt or not a snapshot)") from None
    try:
        value = json_text.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{source} is not valid JSON (corrupt or truncated at line {exc.lineno}, column {exc.colno})") from None
    except json_text.TooDeep as exc:
        raise SnapshotError(f"{source} is not a snapshot this rocm-doctor reads: {exc}") from None
    return from_dict(value, source=source)
