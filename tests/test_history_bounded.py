"""The run history read as untrusted: FIFOs, devices and links in its folder are named, never opened; oversized
entries are not read; pruning removes only what the history wrote; runs are ordered by the time the history
recorded, not by what a file claims."""

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest

from rocm_doctor.diagnose import replay
from rocm_doctor.facts import snapshot
from rocm_doctor.history import store
from rocm_doctor.parsers import json_text

HEALTHY = Path(__file__).parent / "snapshots" / "linux-2x-mi100-gfx908-healthy.json"


def observations():
    return snapshot.from_dict(json.loads(HEALTHY.read_text()))


def record(state, obs, minutes: int) -> None:
    report, _ = replay(obs, "test")
    now = dt.datetime(2026, 2, 18, 10, 0, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=minutes)
    assert store.record(state, report, obs, now=now) is None


def test_a_fifo_a_device_link_and_a_huge_entry_are_passed_over_at_once(tmp_path):
    record(tmp_path, observations(), 0)
    folder = store.folder(tmp_path)
    os.mkfifo(folder / "20260218-110000-000000.json")  # nothing ever writes to it
    (folder / "20260218-110100-000000.json").symlink_to("/dev/zero")
    big = folder / "20260218-110200-000000.json"
    with open(big, "wb") as handle:
        handle.truncate(store.MAX_ENTRY_BYTES + 1)  # sparse: larger than a run may be
    started = time.monotonic()
    runs, bad = store.runs(folder)
    assert [len(runs), len(list(store.newest_first(folder)))] == [1, 1]
    assert sorted(p.name for p in bad) == ["20260218-110000-000000.json", "20260218-110100-000000.json",
                                           "20260218-110200-000000.json"]
    assert time.monotonic() - started < 30  # a blocked open would hang here, not be slow


def test_pruning_removes_only_runs_the_history_wrote(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "MAX_RUNS", 2)
    folder = store.folder(tmp_path)
    folder.mkdir(parents=True)
    experiments = [folder / f"experiment-{n}.json" for n in range(5)]
    for path in experiments:
        path.write_text(json.dumps({"loss": 1}))
    huge = folder / "20200101-000000-000000.json"
    with open(huge, "wb") as handle:
        handle.truncate(store.MAX_ENTRY_BYTES + 1)
    for minute in range(4):
        record(tmp_path, observations(), minute)
    assert all(p.exists() for p in experiments) and huge.exists()
    assert len(store.runs(folder)[0]) == 2  # the huge file did not wipe the stored runs


def test_runs_are_ordered_by_the_time_the_history_recorded(tmp_path):
    record(tmp_path, observations(), 0)
    record(tmp_path, observations(), 5)
    folder = store.folder(tmp_path)
    older = sorted(folder.iterdir())[0]
    forged = json.loads(older.read_text())
    forged["created_at"] = "2099-01-01T00:00:00+00:00"
    older.write_text(json.dumps(forged))
    runs, _ = store.runs(folder)
    assert [r.path for r in runs] == sorted(folder.iterdir())
    assert runs[0].created_at.startswith("2026-02-18T10:00")
    assert next(store.newest_first(folder)).path == sorted(folder.iterdir())[-1]


def test_structure_limits_refuse_a_flood_of_empty_lists():
    with pytest.raises(json_text.TooDeep, match="lists and objects"):
        json_text.loads("[" + "[]," * (json_text.MAX_CONTAINERS + 1) + "[]]")


@pytest.mark.parametrize("kind,words", [("fifo", "is a named pipe"), ("device", "is a device"),
                                        ("folder", "is a folder")])
def test_diff_names_what_a_path_given_to_it_is_instead_of_saying_no_such_file(tmp_path, kind, words):
    from rocm_doctor.history.sides import HistoryError, find

    path = {"fifo": tmp_path / "run.json", "device": Path("/dev/null"), "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    with pytest.raises(HistoryError) as raised:
        find(str(path), [])
    assert words in str(raised.value) and "no such file" not in str(raised.value)
