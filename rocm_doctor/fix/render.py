"""Plain-text and JSON renderings of a fix plan, an apply, an undo and the run history.

Functions return lines (no printing here), so the CLI owns the terminal and tests compare text.
"""

from __future__ import annotations

from typing import Any, Optional

from rocm_doctor.fix.changes import ALREADY, APPLY, NEEDS_FLAG, Context, FileWrite, Preview, RegistryWrite
from rocm_doctor.engine.remedy import AFTER_NEW_SHELL, AFTER_REBOOT, AFTER_RELOGIN
from rocm_doctor.report.envelope import envelope

PLAN_FORMAT = 1
AFTER_TEXT = {AFTER_NEW_SHELL: "takes effect in a new shell/terminal", AFTER_RELOGIN: "takes effect after you log out and in",
              AFTER_REBOOT: "takes effect after a reboot"}


def show(value: Optional[str], verbose: bool = False, limit: int = 160) -> str:
    if value is None:
        return "(not set)"
    text = f"'{value}'"
    if not verbose and len(text) > limit:
        half = limit // 2 - 3
        text = f"{text[:half]} … {text[-half:]} ({len(value)} chars; -v shows all)"
    return text


def label(item: Preview, dry_run: bool) -> str:
    if item.action == APPLY:
        return "will apply" if dry_run else "to apply"
    if item.action == ALREADY:
        return "already applied"
    if item.action == NEEDS_FLAG:
        return f"needs {item.step.flag}: {item.why}"
    return f"print only: {item.why}" if item.why else "print only"


def plan_lines(previews: list[Preview], ctx: Context, target: str, dry_run: bool, verbose: bool = False) -> list[str]:
    where = "HKCU\\Environment" if ctx.windows else ctx.show_path(ctx.rc_path())
    lines = [f"Fix plan for {target} ({len(previews)} step{'s' if len(previews) != 1 else ''}; shell: {ctx.shell}; "
             f"your persistent environment: {where})", ""]
    for item in previews:
        lines.append(f"{item.item.number:>2}. {item.step.summary()}  [{label(item, dry_run)}]  ({item.item.id})")
        lines.append(f"    fixes: {', '.join(item.item.findings)}" + (f" — {item.item.message}" if item.item.message else ""))
        if item.step.note:
            lines.append(f"    why: {item.step.note}")
        if item.variable:
            lines.append(f"    {item.variable}: current {show(item.env_old, verbose)} -> new {show(item.env_new, verbose)}")
        write = item.write
        if isinstance(write, FileWrite) and item.action in (APPLY, ALREADY):
            verb = "keeps" if item.action == ALREADY else ("replaces " + repr(write.old_code) + " with" if write.old_code else "adds")
            lines.append(f"    {ctx.show_path(write.path)} (rocm-doctor block) {verb}: {write.new_code}")
        elif isinstance(write, RegistryWrite) and item.action in (APPLY, ALREADY):
            old = f"{show(write.old.value, verbose)} ({write.old.type_name})" if write.old else "(not set)"
            new = f"{show(write.new.value, verbose)} ({write.new.type_name})" if write.new else "(removed)"
            lines.append(f"    HKCU\\Environment\\{write.name}: {old} -> {new}")
        if item.action == APPLY or item.action == ALREADY:
            if item.session:
                lines.append("    to use it in this shell now:")
                lines.extend(f"      {cmd}" for cmd in item.session)
        else:
            if item.manual:
                lines.append("    run:")
                lines.extend(f"      {cmd}" for cmd in item.manual)
        if item.step.after in AFTER_TEXT:
            lines.append(f"    {AFTER_TEXT[item.step.after]}")
        lines.append("")
    return lines


def plan_json(previews: list[Preview], ctx: Context, target: str, dry_run: bool) -> dict[str, Any]:
    return envelope(
        "fix-plan",
        format=PLAN_FORMAT,
        dry_run=dry_run,
        target=target,
        os=ctx.os,
        shell=ctx.shell,
        persistent_environment="HKCU\\Environment" if ctx.windows else str(ctx.rc_path()),
        steps=[p.to_dict(ctx) for p in previews],
    )


def history_lines(summaries: list) -> list[str]:
    if not summaries:
        return ["No fix runs recorded yet."]
    lines = []
    for s in reversed(summaries):
        lines.append(f"{s.run_id}  {s.status:<11} {s.applied} change(s)  {', '.join(s.findings)}")
        lines.extend(f"    {c}" for c in s.changes)
    return lines


def alternative_lines(diagnosis) -> list[str]:
    """The paths the plan did not take, with their step ids: `fix --only ID` takes one instead."""
    lines = []
    for root in diagnosis.root_causes:
        for alt in root.alternatives:
            ids = ", ".join(s["id"] for s in alt["steps"])
            label = "workaround" if alt["workaround"] else "alternative"
            lines.append(f"  - {alt['title']} ({label}" + (f"; {alt['why_not_first']}" if alt["why_not_first"] else "")
                         + ")" + (f": {ids}" if ids else ""))
    if lines:
        lines = ["Not planned (`rocm-doctor fix --only STEP_ID` takes one instead):"] + lines + [""]
    return lines
