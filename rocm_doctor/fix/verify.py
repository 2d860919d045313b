"""Did it work? Re-run the affected checks in a fresh child process with the environment a new shell would have.

The doctor's own process keeps its old environment (and never imports torch), so the check runs as
`<sys.executable> -m rocm_doctor check --json --only <ids>` with the process environment plus the applied
environment changes, through the one runner. What an rc file sets is read back from the user's shell running the
managed block as written (its bytes and line endings), not from what the step meant to set. With `--unit` or
`--kernel` the child judges that service or kernel again; a unit's drop-in is not re-checked, since systemd reads
it only once the user reloads it.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from rocm_doctor.engine import runner
from rocm_doctor.engine import steps as S
from rocm_doctor.fix import rcfile
from rocm_doctor.fix.changes import Context, FileWrite, Preview, env_after

_DUMP = 'exec "$ROCM_DOCTOR_PYTHON" -c "import json, os, sys; sys.stdout.write(json.dumps(dict(os.environ)))"'


@dataclass
class Verification:
    statuses: dict = field(default_factory=dict)  # finding id -> status
    messages: dict = field(default_factory=dict)
    checks_seen: set = field(default_factory=set)
    error: Optional[str] = None
    argv: list = field(default_factory=list)


RESOLVED = "resolved"
NOT_REPORTED = "not-reported"
AFTER_RELOAD = "after-reload"  # written to a unit's drop-in, which systemd reads on `systemctl daemon-reload`
RUN_FLAGS = {("systemd", "system"): "--unit", ("systemd", "user"): "--user-unit", ("jupyter", None): "--kernel"}


def outcome(verification: Verification, finding_id: str, check_id: str) -> str:
    """The finding's status in the re-check; `resolved` when its check ran and no longer reports it."""
    if finding_id in verification.statuses:
        return verification.statuses[finding_id]
    return RESOLVED if check_id in verification.checks_seen else NOT_REPORTED


def is_fixed(status: str) -> bool:
    return status in ("ok", "info", "skip", RESOLVED)


def waits_for_reload(step: S.Step) -> bool:
    """A step systemd sees only after `systemctl daemon-reload`: a re-check now would judge the old environment."""
    return isinstance(step, S.UnitEnv)


def findings_after(verification: Optional[Verification], results: list) -> dict:
    """finding id -> its status after the applied `results`: as re-checked, or AFTER_RELOAD where a drop-in fixes it."""
    out: dict = {}
    for result in results:
        for finding_id in result.preview.item.findings:
            if waits_for_reload(result.preview.step):
                out.setdefault(finding_id, AFTER_RELOAD)
            elif verification is not None and not verification.error:
                out[finding_id] = outcome(verification, finding_id, finding_id.split(":", 1)[0])
    return out


def new_environment(ctx: Context, applied: Iterable[Preview]) -> dict:
    """The environment of a new shell: the steps' effects, then what each rc file really sets for their names."""
    env, names = dict(ctx.env), {}
    for preview in applied:
        step = preview.step
        if isinstance(step, (S.SetEnv, S.UnsetEnv, S.PathPrepend, S.PathRemove)):
            env = env_after(step, env, ctx)
            if isinstance(preview.write, FileWrite):
                names.setdefault(preview.write.path, set()).add(step.name)
    for path, touched in names.items():
        shell_env = read_back(ctx, path)
        for name in touched if shell_env is not None else ():
            if name in shell_env:
                env[name] = shell_env[name]
            else:
                env.pop(name, None)
    return env


def read_back(ctx: Context, path: Path, timeout_s: float = 30.0) -> Optional[dict]:
    """The environment the user's shell has after running the managed block of `path` as it is on disk, or None
    when that shell is not installed here or fails (the steps' computed effects stand then)."""
    shell = shutil.which(ctx.rc_shell)
    try:
        block = rcfile.block_text(rcfile.decode(rcfile.read(path) or b""))
    except rcfile.RcFileError:
        return None
    if shell is None or block is None:
        return None
    result = runner.run([shell, "-c", block + "\n" + _DUMP], timeout=timeout_s,
                        env={**ctx.env, "ROCM_DOCTOR_PYTHON": sys.executable}, cwd=tempfile.gettempdir())
    try:
        env = json.loads(result.stdout) if result.ok else None
    except ValueError:
        return None
    if not isinstance(env, dict):
        return None
    env.pop("ROCM_DOCTOR_PYTHON", None)
    return env


def verify(check_ids: list, env: dict, python: Optional[str] = None, timeout_s: float = 180.0,
           run_target: Optional[dict] = None) -> Verification:
    argv = [sys.executable, "-m", "rocm_doctor", "check", "--json"]
    for check_id in check_ids:
        argv += ["--only", check_id]
    if python:
        argv += ["--python", python]
    if run_target:
        scope = run_target.get("scope") if run_target.get("kind") == "systemd" else None
        argv += [RUN_FLAGS[(run_target.get("kind"), scope)], str(run_target.get("name"))]
    # From a neutral folder: `-m` puts the current folder first on sys.path, and a rocm_doctor source checkout
    # there would shadow the installed package.
    result = runner.run(argv, timeout=timeout_s, env=env, cwd=tempfile.gettempdir())
    out = Verification(argv=argv)
    try:
        report = json.loads(result.stdout)
        for finding in report.get("findings", []):
            out.statuses[finding["id"]] = finding["status"]
            out.messages[finding["id"]] = finding.get("message", "")
            out.checks_seen.add(finding.get("check"))
    except (ValueError, KeyError, TypeError, AttributeError):
        tail = (result.stderr.strip().splitlines() or [""])[-1]
        out.error = f"the re-check did not produce a report ({result.describe()}){': ' + tail if tail else ''}"
    return out
