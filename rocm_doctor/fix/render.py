"""Plain-text and JSON renderings of a fix plan, an apply, an undo and the run history.

Functions return lines (no printing here), so the CLI owns the terminal and tests compare text.
"""

from __future__ import annotations

import shlex
from typing import Any, Optional

from rocm_doctor.fix.changes import ALREADY, APPLY, NEEDS_FLAG, Context, FileWrite, Preview, RegistryWrite
from rocm_doctor.engine.steps import AFTER_NEW_SHELL, AFTER_REBOOT, AFTER_RELOGIN, AFTER_RESTART
from rocm_doctor.report.envelope import envelope
from rocm_doctor.report.wrapping import Hanging, Verbatim, unquote

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
        return ("will apply" if dry_run else "to apply") + (f", {unquote(item.why)}" if item.why else "")
    if item.action == ALREADY:
        return "already applied"
    if item.action == NEEDS_FLAG:
        return f"needs {item.step.flag}: {unquote(item.why)}"
    return f"print only: {unquote(item.why)}" if item.why else "print only"


def plan_lines(previews: list[Preview], ctx: Context, target: str, dry_run: bool, verbose: bool = False) -> list[str]:
    """The plan step by step: prose lines wrap under their labels in a terminal, commands stand whole on lines of
    their own (report/wrapping.py)."""
    where = "HKCU\\Environment" if ctx.windows else ctx.show_path(ctx.rc_path())
    lines = [Hanging("", f"Fix plan for {target} ({len(previews)} step{'s' if len(previews) != 1 else ''}; "
                         f"shell: {ctx.shell}; your persistent environment: {where})", whole=(target, where)), ""]
    for item in previews:
        lines.append(Hanging(f"{item.item.number:>2}. ", f"{unquote(item.step.summary())}  [{label(item, dry_run)}]  "
                                                         f"({item.item.id})"))
        lines.append(Hanging("    fixes: ", _fixes(item.item.findings, item.item.message)))
        if item.step.note:
            lines.append(Hanging("    why: ", unquote(item.step.note)))
        if item.variable:
            old, new = show(item.env_old, verbose), show(item.env_new, verbose)
            lines.append(Hanging(f"    {item.variable}: ", f"current {old} -> new {new}", whole=(old, new)))
        write = item.write
        if isinstance(write, FileWrite) and item.action in (APPLY, ALREADY):
            lines += _file_lines(item, write, ctx)
        elif isinstance(write, RegistryWrite) and item.action in (APPLY, ALREADY):
            old = f"{show(write.old.value, verbose)} ({write.old.type_name})" if write.old else "(not set)"
            new = f"{show(write.new.value, verbose)} ({write.new.type_name})" if write.new else "(removed)"
            lines.append(Hanging(f"    HKCU\\Environment\\{write.name}: ", f"{old} -> {new}", whole=(old, new)))
        if item.action == APPLY or item.action == ALREADY:
            if item.session:
                lines.append("    to use it in this shell now:")
                lines.extend(Verbatim(f"      {cmd}") for cmd in item.session)
        else:
            lines += [line for text in item.instructions for line in _by_hand("    ", text)]
            if item.manual:
                lines.append("    run:")
                lines.extend(Verbatim(f"      {cmd}") for cmd in item.manual)
        if item.step.after in AFTER_TEXT:
            lines.append(Hanging("    ", AFTER_TEXT[item.step.after]))
        lines.append("")
    return lines


def _fixes(findings: list[str], message: str) -> str:
    """What the step mends in words, as `check` said it; finding keys (check-id:n) only where no words were given."""
    if not message:
        return ", ".join(findings)
    more = len(findings) - 1
    return unquote(message) + (f" The same step mends {more} other finding{'s' if more != 1 else ''}." if more else "")


def _by_hand(indent: str, text: str) -> list[str]:
    """An instruction that is no command; one that ends in a line for a file ("add to ~/.bashrc: export ...") has
    that line whole on its own, to copy."""
    where, sep, code = text.partition(": ")
    if not sep:
        return [Hanging(f"{indent}by hand: ", unquote(text))]
    return [Hanging(f"{indent}by hand: ", f"{where}:"), Verbatim(f"{indent}  {code}")]


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
    path = ctx.show_path(write.path)
    if write.kind == "drop-in" and write.old is None:
        return [Hanging("    ", f"{path} (a new file) will hold:", whole=(path,)),
                *(Verbatim(f"      {line}") for line in write.new.decode("utf-8", errors="replace").splitlines())]
    return [Hanging("    ", f"{path} {where} {verb}: {write.new_code}",
                    whole=(path, repr(write.old_code) if write.old_code else "", write.new_code))]


def dry_run_footer(previews: list[Preview], again: list[str], replayed: bool) -> list[str]:
    """The end of a preview: the command that applies what is marked to be applied (with the options that chose
    the plan), and only that; a replayed snapshot's plan is for the machine it was recorded on."""
    if replayed:
        return ["Dry run of a replayed snapshot: nothing was changed. These steps are for the machine it was "
                "recorded on; preview them there with:", Verbatim("    rocm-doctor fix --dry-run")]
    tail = "".join(f" {shlex.quote(a)}" for a in again)
    lines = ["Dry run: nothing was changed."]
    if any(p.action == APPLY for p in previews):
        lines += ["To apply the steps marked 'will apply':", Verbatim(f"    rocm-doctor fix{tail}")]
    also = " as well" if len(lines) > 1 else ""
    for flag in dict.fromkeys(p.step.flag for p in previews if p.action == NEEDS_FLAG):
        lines += [f"To apply the steps marked 'needs {flag}'{also}:", Verbatim(f"    rocm-doctor fix {flag}{tail}")]
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
        lines.append(Hanging(f"  {item.item.number}. ", unquote(item.step.summary())))
        lines += [line for text in item.instructions for line in _by_hand("      ", text)]
        lines.extend(Verbatim(f"      {command}") for command in item.manual)
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
        lines.append(Hanging("", f"{s.run_id}  {s.status:<11} {s.applied} change(s)  {', '.join(s.findings)}"))
        lines.extend(Hanging("    ", unquote(c)) for c in s.changes)
    return lines


def alternative_lines(diagnosis, again: list[str]) -> list[str]:
    """The paths the plan did not take, each with why it comes second and the command that previews it in the
    plan's place (`again`: the options that chose what was diagnosed)."""
    tail = "".join(f" {shlex.quote(a)}" for a in again)
    lines = []
    for root in diagnosis.root_causes:
        for alt in root.alternatives:
            label = "Workaround" if alt["workaround"] else "Alternative"
            lines.append(Hanging("  - ", f"{label}: {unquote(alt['title'])}"))
            if alt["why_not_first"]:
                lines.append(Hanging("    second because: ", unquote(alt["why_not_first"])))
            only = "".join(f" --only {shlex.quote(s['id'])}" for s in alt["steps"])
            if only:
                lines.append(Verbatim(f"      rocm-doctor fix --dry-run{only}{tail}"))
    if lines:
        lines = ["Not planned (the command under each previews it in the plan's place):"] + lines + [""]
    return lines
