"""The record of every change `fix` makes, written so that a run killed half way can still be undone.

One folder per run under the state folder (`runs/<run-id>/`): `journal.jsonl`, appended and fsynced one record at
a time, and `backups/` with a copy of every file before it is touched. Before each change an `intent` record
(target, old value or backup, new value) is written; after it a `done` record. Undo trusts the targets' current
state, not the `done` records, so an intent without its `done` is handled too. A last line cut off by a kill is
ignored when reading.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from rocm_doctor import inputfile, safefile

JOURNAL = "journal.jsonl"
MAX_JOURNAL_BYTES = 16 * 1024 * 1024  # a run's journal holds a few lines per change


class JournalError(OSError):
    """The journal cannot be written or read; the message is one line for the user."""


def trusted_state_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    """safefile.state_dir(), or JournalError (one line) when running as root and the folder is not root's own: root's
    `fix --undo` must not follow a journal another user can write."""
    folder = safefile.state_dir(env)
    why = safefile.untrusted_by_root(folder)
    if why:
        raise JournalError(why)
    return folder


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def sha256(data: Optional[bytes]) -> Optional[str]:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def new_run_id() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")


class Journal:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.run_id = folder.name

    @classmethod
    def create(cls, root: Path, header: dict[str, Any]) -> "Journal":
        run_id = new_run_id()
        folder = root / "runs" / run_id
        try:
            (folder / "backups").mkdir(parents=True, exist_ok=False)
        except OSError as exc:
            raise JournalError(f"cannot create the fix journal in {folder}: {exc.strerror or exc}; nothing was changed") from None
        journal = cls(folder)
        journal.append({"event": "start", **header})
        return journal

    @property
    def path(self) -> Path:
        return self.folder / JOURNAL

    def append(self, record: dict[str, Any]) -> None:
        record = {"time": now(), **record}
        line = json.dumps(record, sort_keys=True, default=str) + "\n"
        try:
            safefile.append(self.path, line)
        except safefile.WriteError as exc:
            raise JournalError(f"fix journal: {exc}") from None

    def backup(self, seq: int, name: str, data: bytes) -> str:
        """Copy `data` into backups/ (fsynced) and return its name relative to the run folder."""
        rel = f"backups/{seq:03d}-{name}"
        try:
            safefile.create(self.folder / rel, data)
        except safefile.WriteError as exc:
            raise JournalError(f"backup of {name}: {exc}; nothing was changed") from None
        return rel

    def read_backup(self, rel: str) -> bytes:
        try:
            return (self.folder / rel).read_bytes()
        except OSError as exc:
            raise JournalError(f"backup {self.folder / rel} is missing: {exc.strerror or exc}") from None

    def records(self) -> list[dict[str, Any]]:
        try:
            text = inputfile.read(self.path, MAX_JOURNAL_BYTES).decode("utf-8", errors="replace")
        except (OSError, inputfile.InputError):
            return []
        out = []
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line cut off by a kill
        return out


@dataclass
class RunSummary:
    run_id: str
    started: str = ""
    status: str = "interrupted"
    applied: int = 0
    findings: list = field(default_factory=list)
    changes: list = field(default_factory=list)  # one line per applied change

    def to_dict(self) -> dict:
        return {"run": self.run_id, "started": self.started, "status": self.status, "applied": self.applied,
                "findings": list(self.findings), "changes": list(self.changes)}


def summarise(journal: Journal) -> RunSummary:
    records = journal.records()
    summary = RunSummary(journal.run_id)
    intents = {r["seq"]: r for r in records if r.get("event") == "intent"}
    done = {r["seq"] for r in records if r.get("event") == "done"}
    for record in records:
        event = record.get("event")
        if event == "start":
            summary.started = record.get("time", "")
            summary.findings = record.get("findings", [])
        elif event == "end":
            summary.status = record.get("status", "applied")
        elif event == "undo-end":
            summary.status = "undone"
    summary.applied = len(done)
    for seq in sorted(intents):
        summary.changes.append(intents[seq].get("summary", "") + ("" if seq in done else " (not confirmed)"))
    return summary


def runs(root: Path) -> list[Journal]:
    """Every run, oldest first."""
    folder = root / "runs"
    if not folder.is_dir():
        return []
    return [Journal(p) for p in sorted(folder.iterdir()) if (p / JOURNAL).exists()]


def find(root: Path, run_id: Optional[str]) -> Optional[Journal]:
    """The run `run_id`, or (None) the latest run that changed something and is not undone yet."""
    all_runs = runs(root)
    if run_id:
        for journal in all_runs:
            if journal.run_id == run_id:
                return journal
        return None
    for journal in reversed(all_runs):
        records = journal.records()
        if any(r.get("event") == "intent" for r in records) and not any(r.get("event") == "undo-end" for r in records):
            return journal
    return None


def sweep_leftovers(root: Path) -> list[Path]:
    """The temporary files that killed fix runs left beside the files they were writing, removed where safe
    (safefile.sweep): the journals name every file a run wrote, so a later run finds them wherever they are."""
    targets = set()
    for journal in runs(root):
        for record in journal.records():
            target = record.get("target")
            if record.get("event") == "intent" and isinstance(target, dict) and target.get("type") == "file":
                targets.add(str(target.get("path") or ""))
    return [path for target in sorted(targets - {""}) for path in safefile.sweep(target)]
