"""Applying a plan: recompute each step against the machine as it is now, journal, back up, write, confirm.

Order per change: backup (fsynced) -> `intent` record -> atomic write -> `done` record. Anything that can be checked
before the first change (home folder present, rc file writable) is checked first, so the common failures leave
nothing changed. A step that fails stops the run; what was done before it stays journalled for `fix --undo`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from rocm_doctor.engine import runner
from rocm_doctor.engine.steps import AUTO
from rocm_doctor.fix import rcfile
from rocm_doctor.fix.changes import (
    ALREADY,
    APPLY,
    CommandRun,
    Context,
    FileWrite,
    Preview,
    RegistryWrite,
    State,
    preview,
    write_problem,
)
from rocm_doctor.fix.journal import Journal, sha256
from rocm_doctor.engine.plan import PlanItem

PIP_TIMEOUT_S = 3600.0

APPLIED = "applied"
FAILED = "failed"
SKIPPED = "skipped"  # print-only, or needs a flag


class ApplyError(Exception):
    """A change could not be made; one line for the user."""


@dataclass
class StepResult:
    preview: Preview
    outcome: str  # applied, already-applied, skipped, failed, not-run
    message: str = ""


@dataclass
class ApplyReport:
    results: list = field(default_factory=list)
    error: Optional[str] = None
    run_id: Optional[str] = None

    @property
    def applied(self) -> list:
        return [r for r in self.results if r.outcome == APPLIED]


def preflight(previews: list[Preview], ctx: Context) -> None:
    """Raise ApplyError for what would fail part way (missing home, read-only rc file, a drop-in that needs root, a
    kernel.json that is not JSON) before anything changes."""
    for item in previews:
        if item.error and item.step.mode == AUTO:
            raise ApplyError(item.error)
        problem = write_problem(item.write, ctx) if item.action == APPLY and isinstance(item.write, FileWrite) else None
        if problem:
            raise ApplyError(problem)


def apply_plan(
    items: list[PlanItem],
    ctx: Context,
    journal: Journal,
    on_result: Optional[Callable[[StepResult], None]] = None,
) -> ApplyReport:
    report = ApplyReport(run_id=journal.run_id)
    registry_changed = False
    for item in items:
        try:
            current = preview(item, ctx, State(ctx))  # fresh: earlier steps were really written
        except rcfile.RcFileError as exc:
            current = Preview(item, "failed", why=str(exc))
            journal.append({"event": "failed", "seq": item.number, "error": str(exc)})
            report.results.append(StepResult(current, FAILED, str(exc)))
            report.error = f"step {item.number} failed: {exc}"
            if on_result:
                on_result(report.results[-1])
            break
        if current.action == ALREADY:
            result = StepResult(current, ALREADY, "already applied")
            journal.append({"event": "already", "seq": item.number, "summary": item.step.summary()})
        elif current.action != APPLY:
            result = StepResult(current, SKIPPED, current.why)
        else:
            try:
                _apply_one(item.number, current, ctx, journal)
            except (ApplyError, OSError) as exc:
                message = str(exc) if isinstance(exc, (ApplyError, rcfile.RcFileError)) else _os_message(exc, current)
                journal.append({"event": "failed", "seq": item.number, "error": message})
                report.results.append(StepResult(current, FAILED, message))
                report.error = f"step {item.number} failed: {message}"
                if on_result:
                    on_result(report.results[-1])
                break
            registry_changed |= isinstance(current.write, RegistryWrite)
            result = StepResult(current, APPLIED, "applied")
        report.results.append(result)
        if on_result:
            on_result(result)
    if registry_changed and ctx.registry is not None:
        try:
            ctx.registry.broadcast()
        except OSError:
            pass  # the values are written; only already-running programs miss the news
    journal.append({"event": "end", "status": "failed" if report.error else "applied"})
    return report


def _os_message(exc: OSError, current: Preview) -> str:
    write = current.write
    if isinstance(write, RegistryWrite):
        where = f"HKCU\\Environment\\{write.name}"
    elif isinstance(write, FileWrite):
        where = str(write.path)
    else:
        where = "the target"
    reason = "access denied" if isinstance(exc, PermissionError) else (exc.strerror or str(exc))
    return f"cannot write {where}: {reason}; it was left unchanged"


def _apply_one(seq: int, current: Preview, ctx: Context, journal: Journal) -> None:
    write = current.write
    base = {"seq": seq, "step": current.step.to_dict(), "summary": current.step.summary(),
            "findings": current.item.findings}
    if isinstance(write, FileWrite):
        problem = write_problem(write, ctx)
        if problem:
            raise ApplyError(problem)
        target = rcfile.real_target(write.path)
        mode = target.stat().st_mode & 0o7777 if target.exists() else None
        backup = journal.backup(seq, write.path.name.lstrip(".") or "file", write.old) if write.old is not None else None
        journal.append({**base, "event": "intent",
                        "target": {"type": "file", "path": str(write.path), "format": write.kind,
                                   "real": str(target)},  # undo writes only where this still leads
                        "old": {"exists": write.old is not None, "sha256": sha256(write.old), "backup": backup,
                                "mode": mode, "code": write.old_code,
                                "created_folders": rcfile.missing_folders(target.parent)},
                        "new": {"sha256": sha256(write.new), "code": write.new_code}})
        rcfile.atomic_write(write.path, write.new)
    elif isinstance(write, RegistryWrite):
        journal.append({**base, "event": "intent", "target": {"type": "registry", "name": write.name},
                        "old": write.old.to_dict() if write.old else None,
                        "new": write.new.to_dict() if write.new else None})
        if write.new is None:
            ctx.registry.delete(write.name)
        else:
            ctx.registry.set(write.name, write.new)
    elif isinstance(write, CommandRun):
        journal.append({**base, "event": "intent", "target": {"type": "command", "argv": write.argv},
                        "old": {"installed": dict(ctx.installed)}, "new": None})
        result = runner.run(write.argv, timeout=PIP_TIMEOUT_S, env=ctx.env)
        if not result.ok:
            tail = (result.stderr.strip().splitlines() or [""])[-1]
            raise ApplyError(f"{result.describe()}{': ' + tail if tail else ''}")
    else:  # pragma: no cover - APPLY always comes with a write
        raise ApplyError("nothing to write")
    journal.append({"event": "done", "seq": seq})
