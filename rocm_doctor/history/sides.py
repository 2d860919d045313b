"""The two runs `diff` compares, from what the user typed: a stored run's id (or the start of one), a date (the
last run that day), or a snapshot, report or stored-run file; by default the last healthy run and the newest."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from rocm_doctor import inputfile
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.observations import Observations
from rocm_doctor.history import store
from rocm_doctor.parsers import json_text

# best first; a verdict not listed ranks below every listed one
VERDICT_ORDER = ("healthy", "no-gpu", "not-enough-to-tell", "works-with-problems", "incomplete", "broken")
DATE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")


class HistoryError(Exception):
    """The runs cannot be chosen or read; the message is one line for the user."""


@dataclass
class Side:
    """One of the two runs compared."""

    observations: Observations
    source: str  # "history" or the file it was read from
    run_id: Optional[str] = None
    created_at: Optional[str] = None
    verdict: Optional[str] = None  # as recorded at the time
    chosen: str = ""  # why this run, when it was not named
    subject: Optional[dict] = None  # what the run diagnosed (store.subject_of)

    @property
    def name(self) -> str:
        return self.run_id or Path(self.source).name


def _from_run(run: store.StoredRun, chosen: str = "") -> Side:
    try:
        observations = run.observations()
    except snapshot.SnapshotError as exc:
        raise HistoryError(str(exc)) from None
    return Side(observations, "history", run.id, run.created_at, run.verdict, chosen, run.subject)


def from_file(path: Path) -> Side:
    """A snapshot, a `rocm-doctor report` bundle or a stored run file."""
    try:
        raw = json_text.loads(inputfile.read(path).decode("utf-8"))
    except inputfile.InputError as exc:
        raise HistoryError(str(exc)) from None
    except json_text.TooDeep as exc:
        raise HistoryError(f"{path} is no snapshot: {exc}") from None
    except ValueError:
        raise HistoryError(f"{path} is not valid JSON (corrupt, truncated or not a snapshot)") from None
    run = store.from_dict(raw, path)
    if run is not None:
        return _from_run(run)
    try:
        observations = snapshot.from_dict(raw, source=str(path))
    except snapshot.SnapshotError as exc:
        raise HistoryError(f"{exc} (a `check --json` report holds no observations: use `rocm-doctor report` or "
                           "`rocm-doctor snapshot`)") from None
    inner = raw.get("snapshot") if isinstance(raw.get("snapshot"), dict) else raw
    created = inner.get("created_at") or raw.get("generated_at")
    verdict = (raw.get("diagnosis") or {}).get("verdict") if isinstance(raw.get("diagnosis"), dict) else None
    return Side(observations, str(path), None, str(created) if created else None, verdict,
                subject=store.subject(observations))


def local_date(run: store.StoredRun) -> Optional[_dt.date]:
    when = run.when
    return when.astimezone().date() if when else None


def find(spec: str, runs: Sequence[store.StoredRun]) -> Side:
    """The run `spec` names: a file, an id, a date, or the start of exactly one id."""
    path = Path(spec)
    if path.is_file():
        return from_file(path)
    for run in runs:
        if run.id == spec:
            return _from_run(run)
    match = DATE.fullmatch(spec)
    if match:
        try:
            day = _dt.date(*map(int, match.groups()))
        except ValueError:
            raise HistoryError(f"{spec}: not a date") from None
        same_day = [r for r in runs if local_date(r) == day]
        if not same_day:
            raise HistoryError(f"no stored run on {day.isoformat()} ({_span(runs)})")
        return _from_run(same_day[-1], f"the last run on {day.isoformat()}")
    starting = [r for r in runs if r.id.startswith(spec)]
    if len(starting) == 1:
        return _from_run(starting[0])
    if starting:
        raise HistoryError(f"{spec} names {len(starting)} runs: give more of the id (`rocm-doctor diff --list`)")
    if path.exists():  # a folder, a device or a named pipe: the input reader says which, and refuses it
        return from_file(path)
    raise HistoryError(f"{spec}: no such file, and no stored run with that id or date (`rocm-doctor diff --list`)")


def describe(subject: Optional[dict]) -> str:
    """A run's subject in words: "/venv/bin/python (ollama.service's environment, user alice)"."""
    subject = subject or {}
    extra = [f"the {subject['environment']} environment"] if subject.get("environment") else []
    extra += [f"as {subject['user']}"] if subject.get("user") else []
    return str(subject.get("python") or "an unknown Python") + (f" ({', '.join(extra)})" if extra else "")


def _span(runs: Sequence[store.StoredRun]) -> str:
    if not runs:
        return "none is stored"
    first, last = local_date(runs[0]), local_date(runs[-1])
    return f"{len(runs)} stored, from {first} to {last}"


def _verdict_rank(verdict: Optional[str]) -> int:
    return VERDICT_ORDER.index(verdict) if verdict in VERDICT_ORDER else len(VERDICT_ORDER)


def baseline(runs: Sequence[store.StoredRun], newer: Side) -> Optional[store.StoredRun]:
    """The run to compare `newer` with when none is named: the last healthy run before it, else the last one with
    a better verdict, else the one just before it; only runs that diagnosed what `newer` diagnosed."""
    ids = [r.id for r in runs]
    before = list(runs[: ids.index(newer.run_id)]) if newer.run_id in ids else list(runs)
    before = [r for r in before if r.subject == newer.subject]  # another venv's or user's run is no baseline
    for wanted in (lambda r: r.verdict == "healthy", lambda r: _verdict_rank(r.verdict) < _verdict_rank(newer.verdict)):
        chosen = [r for r in before if wanted(r)]
        if chosen:
            return chosen[-1]
    return before[-1] if before else None


def choose(a: Optional[str], b: Optional[str], runs: Sequence[store.StoredRun], where: Path) -> tuple[Side, Side]:
    """(older, newer) from the arguments, with the defaults filled in."""
    if b is not None:
        newer = find(b, runs)
    elif runs:
        newer = _from_run(runs[-1], "the newest run")
    else:
        raise HistoryError(f"no run is stored in {where} yet: each `rocm-doctor check` adds one")
    if a is not None:
        return find(a, runs), newer
    base = baseline(runs, newer)
    if base is None and len(runs) > 1:
        raise HistoryError(f"no earlier stored run diagnosed {describe(newer.subject)}: nothing to compare the "
                           "newest run with (`rocm-doctor diff --list` shows what each run diagnosed; name two)")
    if base is None:
        raise HistoryError(f"only one run is stored in {where}: nothing to compare it with yet "
                           "(name a snapshot or report file, or run `rocm-doctor check` again later)")
    reason = ("the last run whose verdict was healthy" if base.verdict == "healthy" else
              f"the last run before it with a better verdict ({base.verdict}); no healthy run is stored"
              if _verdict_rank(base.verdict) < _verdict_rank(newer.verdict) else
              "the run before it; no run with a better verdict is stored")
    return _from_run(base, reason), newer

