"""`rocm-doctor fix`: preview (--dry-run), apply with consent, verify, and undo the fix plans of the findings.

Exit codes: 0 done (or nothing to do, or a preview, with or without a plan), 1 problems remain (manual steps,
declined, still failing after the re-check), 2 could not run (bad usage, a change refused without --yes, a change
could not be written).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from rocm_doctor.cli.app import EXIT_CANNOT_RUN, EXIT_OK, EXIT_PROBLEMS, DoctorUsageError, diagnosed, pass_app
from rocm_doctor.cli.options import (chosen_run_env, chosen_stages, python_option, run_env_options, stage_options,
                                     target_args, torch_timeout_option)
from rocm_doctor.facts.keys import RUN_ENV, TORCH_VERSION

LATEST = "latest"
RECHECKED = {"resolved": "resolved (no longer reported)",
             "after-reload": "written; systemd reads it once you run the reload and restart steps below"}


def _confirm(app, question: str, yes: bool) -> bool:
    return True if yes else app.confirm(question)


@click.command("fix")
@click.option("--dry-run", is_flag=True, help="Show the plan, the exact commands and every current/new value; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and results) as one JSON object.")
@click.option("-y", "--yes", is_flag=True, help="Apply without asking (required when stdin is not a terminal).")
@click.option("--only", multiple=True, metavar="ID",
              help="Apply only this step (step id), or the steps of this finding or check (repeatable).")
@click.option("--allow-install", is_flag=True, help="Also run pip installs (they download packages).")
@click.option("--shell", "shell_name", metavar="NAME", help="Write commands for this shell: bash, zsh, fish, sh, powershell, cmd.")
@click.option("--undo", "undo", is_flag=False, flag_value=LATEST, default=None, metavar="[RUN_ID]",
              help="Revert the last fix run (or RUN_ID) exactly.")
@click.option("--history", is_flag=True, help="List the recorded fix runs.")
@click.option("--no-verify", is_flag=True, help="Do not re-run the checks after applying.")
@click.option("-v", "--verbose", is_flag=True, help="Show long values (PATH) in full.")
@python_option
@click.option("--from", "from_file", type=click.Path(path_type=Path), help="Preview the plan for a snapshot or report file.")
@run_env_options
@stage_options
@torch_timeout_option
@pass_app
def command(app, dry_run, as_json, yes, only, allow_install, shell_name, undo, history, no_verify, verbose, python,
            from_file, torch_timeout, no_gpu=False, bench=False, collectives=False, unit=None, user_unit=None,
            kernel=None):
    """Fix what check found: preview with --dry-run, apply with consent, undo with --undo."""
    from rocm_doctor.fix.journal import JournalError, sweep_leftovers, trusted_state_dir

    try:
        root = trusted_state_dir()
    except JournalError as exc:
        raise DoctorUsageError(str(exc)) from None
    sweep_leftovers(root)  # what a killed run left beside the files it was writing
    app.use("json" if as_json else "human", verbose=verbose)
    if history:
        _history(app, root)
    if undo is not None:
        _undo(app, root, None if undo == LATEST else undo, yes)
    if from_file is not None and not dry_run:
        raise DoctorUsageError("--from replays a snapshot: fix can only preview it; add --dry-run")
    if from_file is not None and python:
        raise DoctorUsageError("--from replays a snapshot; --python applies only to a live run")
    shell = None
    if shell_name:
        from rocm_doctor.engine.shells import SHELLS, normalise

        shell = normalise(shell_name)
        if shell is None:
            raise DoctorUsageError(f"--shell {shell_name}: unknown shell (one of {', '.join(SHELLS)})")

    run_target = chosen_run_env(unit, user_unit, kernel, from_file)
    report, facts = _diagnose(app, python, from_file, torch_timeout, chosen_stages(no_gpu, bench, collectives), run_target,
                              show_progress=not as_json)
    plan = report.diagnosis.plan
    unknown = [i for i in only if i not in _known_ids(report)]
    if unknown:
        from rocm_doctor.engine.engine import did_you_mean

        hints = "".join(did_you_mean(i, _known_ids(report)) for i in unknown)
        raise DoctorUsageError(f"--only {', '.join(unknown)}: no step, finding or check with that id in this run{hints}")
    plan = report.diagnosis.select(only) if only else plan
    ctx = _context(report, facts, from_file, shell, allow_install)
    target = report.target.get("python", "the target interpreter")
    if not plan:
        _nothing_to_fix(app, report, only, ctx, target, dry_run)

    from rocm_doctor.fix import render
    from rocm_doctor.fix.changes import APPLY, preview_all
    from rocm_doctor.report.format import Lines

    previews = preview_all(plan.items, ctx)
    if dry_run:
        again = target_args(python, unit, user_unit, kernel) + [a for i in only for a in ("--only", i)]
        again += ["--shell", shell_name] if shell_name else []
        lines = render.plan_lines(previews, ctx, target, dry_run=True, verbose=verbose)
        replay = ["--from", str(from_file)] if from_file is not None else []
        lines += [] if only else render.alternative_lines(report.diagnosis, replay + again)
        lines += render.dry_run_footer(previews, again, replayed=from_file is not None)
        app.show(Lines(render.plan_json(previews, ctx, target, dry_run=True), lines))
        app.exit(EXIT_OK)

    to_apply = [p for p in previews if p.action == APPLY]
    manual = [p for p in previews if p.action not in (APPLY, "already-applied")]
    if to_apply and not yes and not app.interactive:
        raise DoctorUsageError("refusing to change anything in a non-interactive run without --yes (preview with --dry-run)")
    if not as_json:
        app.show(Lines({}, render.plan_lines(previews, ctx, target, dry_run=False, verbose=verbose)), "human")
    if to_apply and not _confirm(app, f"Apply {len(to_apply)} change(s)?", yes):
        app.say("Nothing was changed.")
        app.exit(EXIT_PROBLEMS)
    _apply(app, plan, previews, ctx, root, report, python, torch_timeout, no_verify, target, bool(manual),
           run_target)


def _known_ids(report) -> set:
    return ({f.id for f in report.findings} | {f.check for f in report.findings}
            | report.diagnosis.step_ids())


def _diagnose(app, python, from_file, torch_timeout, stages, run_target=None, show_progress=True):
    with app.status("diagnosing: loading the checks", enabled=show_progress) as progress:
        from rocm_doctor.diagnose import Options

        return diagnosed(Options(python=python, from_file=from_file, torch_timeout_s=torch_timeout, stages=stages,
                                 run_target=run_target, progress=progress))


def _context(report, facts, from_file, shell, allow_install):
    from rocm_doctor.fix.changes import Context
    from rocm_doctor.engine.shells import detect_shell
    from rocm_doctor.fix.winenv import default_registry
    from rocm_doctor.probes import detect_os

    live = from_file is None
    os_name = detect_os() if live else (report.platform.get("os") or facts.os)
    env = dict(os.environ) if live else dict(facts.env or {})
    home_var = env.get("USERPROFILE") if os_name == "windows" else env.get("HOME")
    home = Path(home_var) if home_var else Path.home()
    installed = {"torch": facts.get(TORCH_VERSION)} if facts.get(TORCH_VERSION) else {}
    run = facts.get(RUN_ENV)
    return Context(
        os=os_name,
        shell=shell or detect_shell(env, os_name),
        home=home,
        env=env,
        registry=default_registry() if live and os_name == "windows" else None,
        allow_install=allow_install,
        installed=installed,
        target_env=dict(run.get("env") or {}) if isinstance(run, dict) else {},
    )


def _nothing_to_fix(app, report, only, ctx, target, dry_run):
    """No plan: a preview has done its job (0); a fix leaves the open findings to the user (1), or had none (0)."""
    from rocm_doctor.engine.model import Status
    from rocm_doctor.fix import render
    from rocm_doctor.report.format import Lines
    from rocm_doctor.report.wrapping import Hanging, unquote

    open_findings = [f for f in report.findings if f.status in (Status.FAIL, Status.WARN)]
    if only:
        open_findings = [f for f in open_findings if f.id in only or f.check in only]
    document = render.plan_json([], ctx, target, dry_run=True)
    document["without_plan"] = [f.id for f in open_findings]
    if open_findings:
        lines = ["No automatic fix plan for the open findings; follow the advice rocm-doctor check gives for each:"]
        lines += [Hanging(f"  [{finding.status.value}] ", unquote(f"{finding.title}: {finding.message}"))
                  for finding in open_findings]
    else:
        lines = ["Nothing to fix: no check failed or warned."]
    app.show(Lines(document, lines))
    app.exit(EXIT_PROBLEMS if open_findings and not dry_run else EXIT_OK)


def _apply(app, plan, previews, ctx, root, report, python, torch_timeout, no_verify, target, manual_left, run_target):
    from rocm_doctor.fix import render
    from rocm_doctor.fix.apply import ALREADY, APPLIED, ApplyError, apply_plan, preflight
    from rocm_doctor.fix.journal import Journal, JournalError
    from rocm_doctor.report.format import Lines
    from rocm_doctor.report.wrapping import Hanging, Verbatim, unquote

    as_json = app.format == "json"
    try:
        preflight(previews, ctx)
    except ApplyError as exc:
        raise DoctorUsageError(str(exc)) from None
    try:
        journal = Journal.create(root, {"target": target, "findings": sorted({f for i in plan.items for f in i.findings}),
                                        "plan": [i.to_dict() for i in plan.items], "os": ctx.os, "shell": ctx.shell})
    except JournalError as exc:
        raise DoctorUsageError(str(exc)) from None

    def show(result):  # each step as it is applied
        if not as_json:
            failed = result.outcome not in (APPLIED, ALREADY) and result.message
            said = f" — {unquote(result.message)}" if failed else ""
            app.show(Lines({}, [Hanging(f"  [{result.outcome}] {result.preview.item.number}. ",
                                        unquote(result.preview.step.summary()) + said)]), "human")

    try:
        outcome = apply_plan(plan.items, ctx, journal, on_result=show)
    except JournalError as exc:
        undo = f"to revert what was done, run: rocm-doctor fix --undo {journal.run_id}"
        raise DoctorUsageError(f"{exc}; {undo}") from None
    from rocm_doctor.fix.verify import findings_after, is_fixed, waits_for_reload

    verification = None
    effective = [r for r in outcome.results if r.outcome in (APPLIED, ALREADY)]
    checked = [r for r in effective if not waits_for_reload(r.preview.step)]
    if checked and not no_verify and not outcome.error:
        from rocm_doctor.fix.verify import new_environment, verify

        checks = sorted({c for r in checked for c in r.preview.item.checks})
        env = new_environment(ctx, [r.preview for r in checked])
        with app.status("re-checking in a fresh process with the new environment", enabled=not as_json):
            verification = verify(checks, env, python=python, timeout_s=torch_timeout + 120, run_target=run_target)
    rechecked = {} if no_verify or outcome.error else findings_after(verification, effective)
    still_failing = [f for f, status in rechecked.items() if not is_fixed(status)]

    document = render.plan_json(previews, ctx, target, dry_run=False)
    document["kind"] = "fix-apply"
    document.update({"run": journal.run_id, "journal": str(journal.folder), "error": outcome.error,
                     "results": [{"number": r.preview.item.number, "outcome": r.outcome, "message": r.message}
                                 for r in outcome.results]})
    if verification is not None or rechecked:
        document["verification"] = {"findings": rechecked, "error": verification.error if verification else None,
                                    "argv": verification.argv if verification else []}
    lines = []
    if verification is not None and verification.error:
        lines.append(Hanging("Re-check: ", unquote(verification.error)))
    elif rechecked:
        lines.append("Re-checked in a fresh process with the new environment:" if verification else "After the fix:")
        lines += [Hanging(f"  {finding_id}: ", RECHECKED.get(status, "now " + status))
                  for finding_id, status in sorted(rechecked.items())]
    if outcome.applied:
        lines += [Hanging("Journal: ", str(journal.folder), whole=(journal.folder,)),
                  f"To revert run {journal.run_id}:", Verbatim(f"    rocm-doctor fix --undo {journal.run_id}")]
    if any(r.preview.step.after not in ("nothing", "restart") for r in outcome.applied):
        lines.append("Open a new shell (or run the 'this shell now' commands above) for the changes to take effect.")
    if manual_left:
        lines += render.next_lines(previews)
    app.show(Lines(document, lines))
    if outcome.error:
        app.error(outcome.error + (f"; to revert the steps before it, run: rocm-doctor fix --undo {journal.run_id}"
                                   if outcome.applied else ""))
        app.exit(EXIT_CANNOT_RUN)
    problems = manual_left or bool(still_failing) or bool(verification and verification.error)
    app.exit(EXIT_PROBLEMS if problems else EXIT_OK)


def _history(app, root):
    from rocm_doctor.fix import render
    from rocm_doctor.fix.journal import runs, summarise
    from rocm_doctor.report.envelope import envelope
    from rocm_doctor.report.format import Lines

    summaries = [summarise(j) for j in runs(root)]
    app.show(Lines(envelope("fix-history", runs=[s.to_dict() for s in summaries]), render.history_lines(summaries)))
    app.exit(EXIT_OK)


def _undo(app, root, run_id, yes):
    from rocm_doctor.fix.journal import find
    from rocm_doctor.fix.undo import undo_run
    from rocm_doctor.fix.winenv import default_registry
    from rocm_doctor.report.envelope import envelope
    from rocm_doctor.report.format import Lines
    from rocm_doctor.report.wrapping import Hanging, unquote

    journal = find(root, run_id)
    if journal is None:
        raise DoctorUsageError(f"no fix run {run_id} in {root}" if run_id else f"no fix run to undo in {root}")
    if not yes and not app.interactive:
        raise DoctorUsageError("refusing to undo in a non-interactive run without --yes")
    if not _confirm(app, f"Undo fix run {journal.run_id}?", yes):
        app.say("Nothing was changed.")
        app.exit(EXIT_PROBLEMS)
    result = undo_run(journal, default_registry())
    if result.already_undone:
        lines = [f"Run {result.run_id} was already undone; nothing changed."]
    else:
        lines = [Hanging(f"  [{item.outcome}] {item.seq}. ", unquote(f"{item.summary} — {item.message}"))
                 for item in result.items]
        lines.append(f"Undid run {result.run_id}." if not result.error else "")
    app.show(Lines(envelope("fix-undo", run=result.run_id, already_undone=result.already_undone, error=result.error,
                            items=[vars(i) for i in result.items]), lines))
    if result.error:
        raise DoctorUsageError(result.error)
    app.exit(EXIT_OK)
