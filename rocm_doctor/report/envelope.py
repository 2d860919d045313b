"""The one JSON envelope every command's `--json` prints: which tool and version wrote it, when, what kind of
result it is, the schema version, and whether it is redacted, so a script reading any of them checks the same
fields first."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

from rocm_doctor import __version__

# 2: the diagnosis (root causes, plan) and the relations on each finding; kinds for every command. `data`,
# `snapshot`, `explain` and `fleet` joined the envelope later without changing a field of any other kind, so the
# version stayed; it goes up when a field's meaning or shape changes (data/report.schema.json).
SCHEMA_VERSION = 2


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def envelope(kind: str, generated_at: Optional[str] = None, redacted: bool = False, **body: Any) -> dict[str, Any]:
    """{schema_version, tool, kind, generated_at (now unless given), redacted, **body}. `redacted`: identities and
    secrets were replaced as docs/report.md#redaction says (a report, a diff); false for everything else, check's
    own output first: it shows the user's own environment as set, and `rocm-doctor report` is the copy to share."""
    return {"schema_version": SCHEMA_VERSION, "tool": {"name": "rocm-doctor", "version": __version__}, "kind": kind,
            "generated_at": generated_at or now(), "redacted": redacted, **body}
