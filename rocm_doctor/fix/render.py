"""Plain-text and JSON renderings of a fix plan, an apply, an undo and the run history.

Functions return lines (no printing here), so the CLI owns the terminal and tests compare text.
"""

from __future__ import annotations

import shlex
from typing import Any, Optional

from rocm_doctor.fix.changes import ALREADY, APPLY, NEEDS_FLAG, Context, FileWrite, Preview, RegistryWrite
from rocm_doctor.engine.steps import AFTER_NEW_SHELL, AFTER_REBOOT, AFTER_RELOGIN, AFTER_RESTART
from rocm_doctor.report.envelope import envelope

PLAN_FORMAT = 1
AFTER_TEXT = {AFTER_NEW_SHELL: "takes effect in a new shell/terminal", AFTER_RELOGIN: "takes effect after you log out and in",
              AFTER_REBOOT: "takes effect after a reboot",
              AFTER_RESTART: "takes effect when the service or kernel starts again (the steps after it)"}


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
        return ("will apply" if dry_run else "to apply") + (f", {item.why}" if item.why else "")
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
            lines += _file_lines(item, write, ctx)
        elif isinstance(write, RegistryWrite) and item.action in (APPLY, ALREADY):
            old = f"{show(write.old.value, verbose)} ({write.old.type_name})" if write.old else "(not set)"
            new = f"{show(write.new.value, verbose)} ({write.new.type_name})" if write.new else "(removed)"
            lines.append(f"    HKCU\\Environment\\{write.name}: {old} -> {new}")
        if item.action == APPLY or item.action == ALREADY:
            if item.session:
                lines.append("    to use it in this shell now:")
                lines.extend(f"      {cmd}" for cmd in item.session)
        else:
            lines.extend(f"    by hand: {text}" for text in item.instructions)
            if item.manual:
                lines.append("    run:")
                lines.extend(f"      {cmd}" for cmd in item.manual)
        if item.step.after in AFTER_TEXT:
            lines.append(f"    {AFTER_TEXT[item.step.after]}")
        lines.append("")
    return lines


def _file_lines(item: Preview, write: FileWrite, ctx: Context) -> list[str]:
    """The file a step writes and the line it puts there; a new drop-in in full."""
    where = {"rc-file": "(rocm-doctor block)", "drop-in": "under [Service]", "kernel.json": 'in "env"'}[write.kind]
    removes = write.kind == "kernel.json" and item.step.value is None
    if item.action == ALREADY:
        verb = "already without" if removes else "keeps"
    elif removes:
        verb = "removes"
    else:
        verb = f"replaces {write.old_code!r} with" if write.old_code else "adds"
    if write.kind == "drop-in" and write.old is None:
        return [f"    {ctx.show_path(write.path)} (a new file) will hold:",
                *(f"      {line}" for line in write.new.decode("utf-8", errors="replace").splitlines())]
    return [f"    {ctx.show_path(write.path)} {where} {verb}: {write.new_code}"]


def dry_run_footer(previews: list[Preview], again: list[str], replayed: bool) -> list[str]:
    """The end of a preview: the command that applies what is marked to be applied (with the options that chose
    the plan), and only that; a replayed snapshot's plan is for the machine it was recorded on."""
    if replayed:
        return ["Dry run of a replayed snapshot: nothing was changed. These steps are for the machine it was "
                "recorded on; preview them there with `rocm-doctor fix --dry-run`."]
    tail = "".join(f" {shlex.quote(a)}" for a in again)
    lines = ["Dry run: nothing was changed."]
    if any(p.action == APPLY for p in previews):
        lines += ["To apply the steps marked 'will apply':", f"    rocm-doctor fix{tail}"]
    also = " as well" if len(lines) > 1 else ""
    for flag in dict.fromkeys(p.step.flag for p in previews if p.action == NEEDS_FLAG):
        lines += [f"To apply the steps marked 'needs {flag}'{also}:", f"    rocm-doctor fix {flag}{tail}"]
    if all(p.action == ALREADY for p in previews):
        lines.append("Every step is already applied.")
    elif not any(p.action in (APPLY, NEEDS_FLAG) for p in previews):
        lines.append("rocm-doctor applies none of these steps itself: run the commands under 'run:' yourself.")
    return lines


def next_lines(previews: list[Preview]) -> list[str]:
    """What is left to the user after an apply: the steps fix does not carry out, in plan order, with their commands."""
    left = [p for p in previews if p.action not in (APPLY, ALREADY)]
    lines = ["Still to do (fix runs none of these):"] if left else []
    for item in left:
        lines.append(f"  {item.item.number}. {item.step.summary()}")
        lines.extend(f"      by hand: {text}" for text in item.instructions)
        lines.extend(f"      {command}" for command in item.manual)
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
