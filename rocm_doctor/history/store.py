"""The run history: what `check` saw on its recent runs, kept in the user's state folder so that "it worked
yesterday" can be answered by comparing the runs (docs/history.md).

One JSON file per run in `<state folder>/history/`: the run's verdict and problems, and its observations in
snapshot form (so `check --from` replays it and `diff` re-reads it with today's parsers). Written atomically;
bounded by count and by size, the oldest dropped first. A folder that cannot be written costs the run its place
in the history and nothing else: the caller gets one sentence to say, never an exception.

The folder is read as untrusted: only regular files named as the history names them (`YYYYmmdd-HHMMSS-ffffff.json`),
no larger than a run may be, are opened (a FIFO, a device or a link is named, never opened); a run's time is the
one its name records, not what the file claims; pruning removes only such files owned by this user, so a folder
of other JSON files loses none of them.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

from rocm_doctor import __version__, inputfile, safefile
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.observations import Observations
from rocm_doctor.facts.keys import REQUEST_KEY
from rocm_doctor.parsers import json_text, secret_values

FOLDER = "history"
FORMAT = "rocm-doctor-history-run"
VERSION = 1
MAX_RUNS = 50
MAX_BYTES = 32 * 1024 * 1024
MAX_ENTRY_BYTES = 32 * 1024 * 1024  # a file larger than this is no run the history wrote: never read or removed
STALE_TMP_S = 3600  # a temporary file this old is left over from a killed run
PROBLEMS = ("fail", "error", "warn")
RUN_NAME = re.compile(r"(?P<when>\d{8}-\d{6}-\d{6})(?:-\d+)?\.json")


def folder(state: Path) -> Path:
    return state / FOLDER


@dataclass
class StoredRun:
    id: str
    path: Path
    created_at: str
    verdict: str
    root_causes: list[dict[str, Any]] = field(default_factory=list)  # finding, check, status
    problems: dict[str, str] = field(default_factory=dict)  # finding id -> status
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def observations(self) -> Observations:
        return snapshot.from_dict(self.raw, source=str(self.path))

    @property
    def subject(self) -> dict[str, Optional[str]]:
        """What this run diagnosed (see `subject`), read from its stored observations."""
        inner = (self.raw.get("snapshot") or {}).get("observations")
        return subject_of(inner if isinstance(inner, Mapping) else {})

    @property
    def when(self) -> Optional[_dt.datetime]:
        return parse_time(self.created_at)


def subject_of(observations: Mapping[str, Any]) -> dict[str, Optional[str]]:
    """What a run diagnosed, from its observations in their stored form: the interpreter, the service or Jupyter
    kernel whose environment was judged (`--unit`, `--user-unit`, `--kernel`) and the user it ran as. Only runs
    of the same subject compare like with like: another venv's or another user's run differs in everything."""
    target = observations.get("target") if isinstance(observations.get("target"), Mapping) else {}
    probes = observations.get("probes") if isinstance(observations.get("probes"), Mapping) else {}
    env = observations.get("env") if isinstance(observations.get("env"), Mapping) else {}
    request = probes.get(REQUEST_KEY) if isinstance(probes.get(REQUEST_KEY), Mapping) else {}
    judged = " ".join(str(request[k]) for k in ("kind", "scope", "name") if request.get(k)) or None
    user = env.get("USER") or env.get("USERNAME") or env.get("LOGNAME")
    return {"python": target.get("python"), "environment": judged, "user": str(user) if user else None}


def subject(observations: Observations) -> dict[str, Optional[str]]:
    """`subject_of` for live observations."""
    return subject_of({"target": observations.target, "probes": observations.probes, "env": observations.env})


def parse_time(text: Any) -> Optional[_dt.datetime]:
    """An ISO time as an aware datetime (UTC when it names no zone); None for anything else."""
    try:
        when = _dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def entry(run_id: str, created_at: str, report: Any, observations: Observations) -> dict[str, Any]:
    """The stored form of one `check` run."""
    diagnosis = report.diagnosis
    return {
        "format": FORMAT,
        "version": VERSION,
        "id": run_id,
        "created_at": created_at,
        "tool": {"name": "rocm-doctor", "version": __version__},
        "verdict": diagnosis.verdict,
        "headline": secret_values.mask_text(diagnosis.headline or ""),
        "root_causes": [{"finding": r.finding.id, "check": r.finding.check, "status": r.finding.status.value}
                        for r in diagnosis.root_causes],
        "problems": {f.id: f.status.value for f in report.findings if f.status.value in PROBLEMS},
        "snapshot": snapshot.to_dict(observations),  # secrets masked as it is recorded
    }


def record(state: Path, report: Any, observations: Observations, now: Optional[_dt.datetime] = None) -> Optional[str]:
    """Add this run to the history and trim it; returns what to tell the user when that could not be done."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    run_id = now.strftime("%Y%m%d-%H%M%S-%f")
    data = json.dumps(entry(run_id, now.isoformat(timespec="seconds"), report, observations),
                      default=str).encode("utf-8")
    where = folder(state)
    if len(data) > MAX_BYTES:
        return (f"this run ({len(data) // 1024} KiB) is larger than the run history keeps ({MAX_BYTES // 1024} KiB); "
                "it was not added")
    try:
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = where / f"{run_id}.json"
        suffix = 1
        while path.exists():
            suffix += 1
            path = where / f"{run_id}-{suffix}.json"
        safefile.write(path, data, mode=0o600, stream=False)
    except OSError as exc:
        return f"the run history in {where} cannot be written ({_reason(exc)}); this run was not added to it"
    return prune(where)


def prune(where: Path) -> Optional[str]:
    """Drop the oldest runs until at most MAX_RUNS remain in at most MAX_BYTES; also temporary files left by
    killed runs. Only files the history wrote are counted or removed. Returns what to tell the user when a file
    could not be removed."""
    try:
        names, _ = _entries(where)
        sizes = {p: p.lstat().st_size for p in names}
        stale = [p for p in where.iterdir() if _own_temporary(p)]
    except OSError as exc:
        return f"the run history in {where} cannot be read ({_reason(exc)})"
    total = sum(sizes.values())
    drop = []
    for path in names:
        if len(names) - len(drop) <= MAX_RUNS and total <= MAX_BYTES:
            break
        drop.append(path)
        total -= sizes[path]
    for path in drop + stale:
        try:
            path.unlink()
        except FileNotFoundError:
            continue  # another run trimmed it first
        except OSError as exc:
            return f"the run history in {where} cannot be trimmed ({_reason(exc)}); it keeps its older runs"
    return None


def _entries(where: Path) -> tuple[list[Path], list[Path]]:
    """(the files the history wrote, oldest first by their names; the other `*.json` entries, never opened)."""
    ours, others = [], []
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    with os.scandir(where) as found:
        for entry in found:
            if not entry.name.endswith(".json") or entry.name.startswith("."):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                others.append(Path(entry.path))
                continue
            mine = uid is None or info.st_uid == uid
            if RUN_NAME.fullmatch(entry.name) and stat.S_ISREG(info.st_mode) and info.st_size <= MAX_ENTRY_BYTES \
                    and mine:
                ours.append(Path(entry.path))
            else:
                others.append(Path(entry.path))
    return sorted(ours), sorted(others)


def _own_temporary(path: Path) -> bool:
    """A temporary file of a run write this user left (killed), old enough not to be one being written now."""
    match = safefile.temporary_target(path.name)
    if match is None or not RUN_NAME.fullmatch(match):
        return False
    info = path.lstat()
    return stat.S_ISREG(info.st_mode) and time.time() - info.st_mtime > STALE_TMP_S and (
        not hasattr(os, "geteuid") or info.st_uid == os.geteuid())


def recorded_at(path: Path) -> Optional[str]:
    """The time the history recorded in a run's file name (the file's own `created_at` is only its claim)."""
    match = RUN_NAME.fullmatch(path.name)
    if match is None:
        return None
    try:
        when = _dt.datetime.strptime(match.group("when"), "%Y%m%d-%H%M%S-%f").replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        return None
    return when.isoformat(timespec="seconds")


def newest_first(where: Path) -> Iterator[StoredRun]:
    """The readable runs, newest first, each read only when asked for (a caller often stops at the first)."""
    try:
        paths, _ = _entries(where)
    except OSError:
        return
    for path in reversed(paths):
        run = read(path)
        if run is not None:
            yield run


def runs(where: Path) -> tuple[list[StoredRun], list[Path]]:
    """(every readable run, oldest first by the time the history recorded; the files that are no run this
    rocm-doctor can read)."""
    try:
        paths, bad = _entries(where)
    except OSError:
        return [], []
    found = []
    for path in paths:
        run = read(path)
        if run is None:
            bad.append(path)
        else:
            found.append(run)
    found.sort(key=lambda r: (r.when or _dt.datetime.min.replace(tzinfo=_dt.timezone.utc), r.id))
    return found, sorted(bad)


def read(path: Path) -> Optional[StoredRun]:
    """One stored run, or None when the file is not one (cut short, another format, too large or deep, a FIFO
    or a device, unreadable). Its time is the one its name records, when it has a history's name."""
    try:
        raw = json_text.loads(inputfile.read(path, MAX_ENTRY_BYTES).decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    run = from_dict(raw, path)
    recorded = recorded_at(path)
    if run is not None and recorded is not None:
        run.created_at, run.id = recorded, path.stem
    return run


def from_dict(raw: Any, path: Path) -> Optional[StoredRun]:
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("version") != VERSION:
        return None
    if not isinstance(raw.get("snapshot"), dict):
        return None
    problems = raw.get("problems") if isinstance(raw.get("problems"), Mapping) else {}
    roots = [r for r in raw.get("root_causes") or [] if isinstance(r, dict)]
    return StoredRun(str(raw.get("id") or path.stem), path, str(raw.get("created_at") or ""),
                     str(raw.get("verdict") or "unknown"), roots, {str(k): str(v) for k, v in problems.items()}, raw)


def _reason(exc: OSError) -> str:
    if isinstance(exc, safefile.WriteError):
        text = str(exc)
        return text.rsplit(": ", 1)[-1] if ": " in text else text
    return "access denied" if isinstance(exc, PermissionError) else (exc.strerror or str(exc))
