"""Undo one fix run from its journal, newest change first.

Each change is judged by the target's current state, so interrupted runs undo cleanly: a file that still holds
what fix wrote gets its backup back byte for byte (or is removed if fix created it, with the folders it created for
it); a file that already holds the old content is left alone; an rc file edited since gets only its rocm-doctor
block restored, keeping the user's edits; a drop-in or kernel.json edited since is left as it is.
Registry values come back with their type; a value changed since is left alone and reported. pip installs cannot
be taken back automatically: undo prints the command that restores the previous version.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from rocm_doctor.fix import rcfile
from rocm_doctor.fix.journal import Journal, sha256
from rocm_doctor.fix.regvalue import RegValue
from rocm_doctor.fix.winenv import EnvRegistry

RESTORED = "restored"
UNCHANGED = "nothing-to-undo"
PARTIAL = "block-restored"
LEFT = "left-as-is"
MANUAL = "manual"


@dataclass
class UndoItem:
    seq: int
    summary: str
    outcome: str
    message: str = ""


@dataclass
class UndoReport:
    run_id: str
    items: list = field(default_factory=list)
    already_undone: bool = False
    error: Optional[str] = None


def undo_run(journal: Journal, registry: Optional[EnvRegistry] = None) -> UndoReport:
    records = journal.records()
    report = UndoReport(journal.run_id)
    if any(r.get("event") == "undo-end" for r in records):
        report.already_undone = True
        return report
    undone = {r.get("seq") for r in records if r.get("event") == "undone"}
    intents = [r for r in records if r.get("event") == "intent" and r.get("seq") not in undone]
    journal.append({"event": "undo-start"})
    registry_changed = False
    for intent in sorted(intents, key=lambda r: r["seq"], reverse=True):
        target = intent.get("target", {})
        try:
            if target.get("type") == "file":
                item = _undo_file(journal, intent)
            elif target.get("type") == "registry":
                item = _undo_registry(intent, registry)
                registry_changed |= item.outcome == RESTORED
            else:
                item = _undo_command(intent)
        except (OSError, ValueError) as exc:
            message = str(exc) if isinstance(exc, rcfile.RcFileError) else f"{type(exc).__name__}: {exc}"
            report.items.append(UndoItem(intent["seq"], intent.get("summary", ""), "failed", message))
            report.error = (f"undoing step {intent['seq']} failed: {message}; after fixing it, run again: "
                            f"rocm-doctor fix --undo {journal.run_id}")
            journal.append({"event": "undo-failed", "seq": intent["seq"], "error": message})
            return report
        report.items.append(item)
        journal.append({"event": "undone", "seq": intent["seq"], "outcome": item.outcome})
    if registry_changed and registry is not None:
        try:
            registry.broadcast()
        except OSError:
            pass
    journal.append({"event": "undo-end"})
    return report


def _undo_file(journal: Journal, intent: dict) -> UndoItem:
    path = Path(intent["target"]["path"])
    old, new = intent.get("old") or {}, intent.get("new") or {}
    summary = intent.get("summary", "")
    leads = rcfile.real_target(path)
    if str(leads) != intent["target"].get("real", str(path)):  # a link put there since: never write through it
        return UndoItem(intent["seq"], summary, LEFT, f"{path} now leads to {leads}, not where fix wrote; left as is")
    current = rcfile.read(path)
    current_sha = sha256(current)
    old_bytes = journal.read_backup(old["backup"]) if old.get("backup") else None
    if current_sha == old.get("sha256"):
        if current is None:
            rcfile.remove_empty(old.get("created_folders") or [])
        return UndoItem(intent["seq"], summary, UNCHANGED, f"{path} already holds its earlier content")
    if current_sha == new.get("sha256"):
        if old.get("exists"):
            rcfile.atomic_write(path, old_bytes, mode=old.get("mode"))
        else:
            rcfile.remove(path)
            rcfile.remove_empty(old.get("created_folders") or [])
        return UndoItem(intent["seq"], summary, RESTORED, f"{path} {'restored' if old.get('exists') else 'removed'}")
    if current is None:
        return UndoItem(intent["seq"], summary, LEFT, f"{path} was deleted since; left as is")
    if intent["target"].get("format", "rc-file") != "rc-file":
        kept = f"; its earlier content is in {journal.folder / old['backup']}" if old.get("backup") else ""
        return UndoItem(intent["seq"], summary, LEFT, f"{path} was changed since fix wrote it; left as is{kept}")
    # Edited since: put back only our block as it was, keep everything else the user changed.
    text = rcfile.decode(current)
    earlier_block = rcfile.block_text(rcfile.decode(old_bytes)) if old_bytes is not None else None
    rcfile.atomic_write(path, rcfile.encode(rcfile.replace_block(text, earlier_block)))
    return UndoItem(intent["seq"], summary, PARTIAL,
                    f"{path} was edited since; only the rocm-doctor block was restored")


def _undo_registry(intent: dict, registry: Optional[EnvRegistry]) -> UndoItem:
    name = intent["target"]["name"]
    summary = intent.get("summary", "")
    if registry is None:
        raise ValueError(f"HKCU\\Environment\\{name} can only be restored on Windows")
    old, new = RegValue.from_dict(intent.get("old")), RegValue.from_dict(intent.get("new"))
    current = registry.get(name)
    if current == old:
        return UndoItem(intent["seq"], summary, UNCHANGED, f"HKCU\\Environment\\{name} already holds its earlier value")
    if current != new:
        return UndoItem(intent["seq"], summary, LEFT,
                        f"HKCU\\Environment\\{name} was changed since; left as is (earlier value: "
                        f"{old.value if old else 'not set'})")
    if old is None:
        registry.delete(name)
    else:
        registry.set(name, old)
    return UndoItem(intent["seq"], summary, RESTORED,
                    f"HKCU\\Environment\\{name} restored" + (f" ({old.type_name})" if old else " (removed)"))


def _undo_command(intent: dict) -> UndoItem:
    argv = intent.get("target", {}).get("argv") or []
    installed = (intent.get("old") or {}).get("installed") or {}
    python = argv[0] if argv else "python"
    if installed:
        pins = " ".join(f"{name}=={version.split('+')[0]}" for name, version in sorted(installed.items()))
        hint = f"to go back, reinstall the earlier version: {shlex.quote(python)} -m pip install {pins} (from its index)"
    else:
        hint = f"nothing was installed before; to remove it: {shlex.quote(python)} -m pip uninstall " + " ".join(
            a for a in argv[4:] if not a.startswith("-") and "://" not in a
        )
    return UndoItem(intent["seq"], intent.get("summary", ""), MANUAL, f"a pip install cannot be undone automatically; {hint}")
