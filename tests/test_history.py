"""The run history (store, bounds, unwritable folders), choosing the runs to compare, and the comparison itself on
replayed snapshots: the change a now-failing check needs comes first, and a new root cause says since when."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from rocm_doctor import safefile
from rocm_doctor.compare import engine, fields, relevance
from rocm_doctor.diagnose import load_snapshot, replay
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts import snapshot
from rocm_doctor.history import annotate, rundiff, sides, store

SNAPSHOTS = Path(__file__).parent / "snapshots"
HEALTHY = SNAPSHOTS / "linux-2x-mi100-gfx908-healthy.json"
CHECKS = load_registry().checks


def observations(path: Path = HEALTHY, drop_gfx908: bool = False, env: dict | None = None):
    """The snapshot's observations; with `drop_gfx908` torch's arch list lacks the MI100's gfx908 (a torch update
    that dropped it)."""
    raw = json.loads(path.read_text())
    probe = raw["observations"]["commands"]["torch-probe"]
    if drop_gfx908:
        probe["stdout"] = probe["stdout"].replace('"gfx908", ', "")
    raw["observations"]["env"].update(env or {})
    return snapshot.from_dict(raw)


def when(minutes: int) -> dt.datetime:
    return dt.datetime(2026, 2, 18, 10, 0, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=minutes)


def record(state: Path, obs, minutes: int) -> None:
    report, _ = replay(obs, "test")
    assert store.record(state, report, obs, now=when(minutes)) is None


def test_record_and_read_back(tmp_path):
    good, bad = observations(), observations(drop_gfx908=True)
    record(tmp_path, good, 0)
    record(tmp_path, bad, 5)
    runs, unreadable = store.runs(store.folder(tmp_path))
    assert unreadable == []
    assert [r.id for r in runs] == ["20260218-100000-000000", "20260218-100500-000000"]
    assert runs[1].problems["gfx-not-in-torch-arch-list:0"] == "fail"
    assert runs[1].root_causes[0]["check"] == "gfx-not-in-torch-arch-list"
    assert runs[0].observations().env == good.env
    assert (store.folder(tmp_path) / f"{runs[0].id}.json").stat().st_mode & 0o077 == 0  # env may hold secrets


def test_history_is_bounded_by_count_and_size_oldest_first(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "MAX_RUNS", 3)
    obs = observations()
    for minute in range(5):
        record(tmp_path, obs, minute)
    runs, _ = store.runs(store.folder(tmp_path))
    assert [r.id[9:13] for r in runs] == ["1002", "1003", "1004"]
    size = max(p.stat().st_size for p in store.folder(tmp_path).iterdir())
    monkeypatch.setattr(store, "MAX_BYTES", size * 2 + size // 2)
    record(tmp_path, obs, 10)
    assert [r.id[9:13] for r in store.runs(store.folder(tmp_path))[0]] == ["1004", "1010"]
    monkeypatch.setattr(store, "MAX_BYTES", size // 2)
    report, _ = replay(obs, "test")
    note = store.record(tmp_path, report, obs, now=when(20))
    assert "larger than the run history keeps" in note
    assert len(store.runs(store.folder(tmp_path))[0]) == 2


def test_stale_temporary_files_are_removed(tmp_path):
    record(tmp_path, observations(), 0)
    stale = store.folder(tmp_path) / f".20260218-100500-000000.json.0123456789ab{safefile.TMP_SUFFIX}"
    stale.write_text("half")
    fresh = store.folder(tmp_path) / f".20260218-100600-000000.json.0123456789ab{safefile.TMP_SUFFIX}"
    fresh.write_text("being written")
    other = store.folder(tmp_path) / f".notes.json.0123456789ab{safefile.TMP_SUFFIX}"  # not the history's
    other.write_text("someone else's")
    old = stale.stat().st_mtime - store.STALE_TMP_S - 10
    import os

    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    record(tmp_path, observations(), 1)
    assert not stale.exists() and fresh.exists() and other.exists()


def test_unwritable_state_folder_says_so_and_loses_nothing(tmp_path, monkeypatch):
    obs = observations()
    report, _ = replay(obs, "test")
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("x")
    note = store.record(blocker, report, obs)
    assert "cannot be written" in note and str(blocker) in note and blocker.read_text() == "x"

    record(tmp_path, obs, 0)
    before = {p.name: p.read_bytes() for p in store.folder(tmp_path).iterdir()}

    def refuse(path, data, **kw):
        raise safefile.WriteError(f"cannot write {path}: access denied")

    monkeypatch.setattr(safefile, "write", refuse)
    note = store.record(tmp_path, report, obs, now=when(1))
    assert note.endswith("(access denied); this run was not added to it")
    assert {p.name: p.read_bytes() for p in store.folder(tmp_path).iterdir()} == before


def test_unreadable_files_are_skipped_and_named(tmp_path):
    record(tmp_path, observations(), 0)
    (store.folder(tmp_path) / "20260218-110000-000000.json").write_text('{"format": "rocm-doctor-history-run", "ver')
    runs, bad = store.runs(store.folder(tmp_path))
    assert len(runs) == 1 and [p.name for p in bad] == ["20260218-110000-000000.json"]


def stored(tmp_path, *verdict_obs):
    for minute, obs in enumerate(verdict_obs):
        record(tmp_path, obs, minute * 60 * 24)  # one run a day
    return store.runs(store.folder(tmp_path))[0]


def test_choosing_runs_by_id_date_file_and_by_default(tmp_path):
    good, bad = observations(), observations(drop_gfx908=True)
    runs = stored(tmp_path, good, bad, bad)
    a, b = sides.choose(None, None, runs, tmp_path)
    assert (a.run_id, b.run_id) == (runs[0].id, runs[2].id) and a.chosen == "the last run whose verdict was healthy"
    assert sides.find(runs[1].id, runs).run_id == runs[1].id
    assert sides.find(runs[1].id[:8], runs).run_id == runs[1].id  # a date, 20260219
    assert sides.find("2026-02-20", runs).run_id == runs[2].id
    assert sides.find(str(HEALTHY), runs).source == str(HEALTHY)
    assert sides.find(str(runs[0].path), runs).run_id == runs[0].id
    with pytest.raises(sides.HistoryError, match="no stored run on 2026-03-01"):
        sides.find("2026-03-01", runs)
    with pytest.raises(sides.HistoryError, match="names 3 runs"):
        sides.find("2026", runs)
    with pytest.raises(sides.HistoryError, match="no such file"):
        sides.find("nonsense", runs)
    with pytest.raises(sides.HistoryError, match="only one run"):
        sides.choose(None, None, runs[:1], tmp_path)
    with pytest.raises(sides.HistoryError, match="no run is stored"):
        sides.choose(None, None, [], tmp_path)
    check_json = tmp_path / "check.json"
    check_json.write_text(json.dumps({"schema_version": 2, "findings": []}))
    with pytest.raises(sides.HistoryError, match="holds no observations"):
        sides.find(str(check_json), runs)


def diff_of(older, newer, tmp_path):
    a = rundiff.judge(sides.Side(older, "a.json", created_at="2026-02-18T10:00:00+00:00"))
    b = rundiff.judge(sides.Side(newer, "b.json", created_at="2026-02-19T10:00:00+00:00"))
    return rundiff.document(a, b, CHECKS, tmp_path)


def test_the_fact_a_now_failing_check_requires_comes_first(tmp_path):
    older = observations()
    newer = observations(drop_gfx908=True, env={"SOME_TOOL_HOME": "/opt/x", "ROCBLAS_LAYER": "0"})
    doc = diff_of(older, newer, tmp_path)
    first = doc["changes"][0]
    assert first["field"] == "torch_arch_list" and first["relevance"] == relevance.NEW_PROBLEM
    # it requires gpu.inventory and torch.flavour, and reads torch.arch_list: a read counts as much as `requires`
    assert {"check": "gfx-not-in-torch-arch-list", "status": "fail", "before": "ok", "how": "reads",
            "new": True, "clears": True} in first["checks"]
    tiers = [c["relevance"] for c in doc["changes"]]
    assert tiers == sorted(tiers, key=relevance.TIERS.index)
    by_field = {c["field"]: c for c in doc["changes"]}
    assert by_field["env.ROCBLAS_LAYER"]["relevance"] == relevance.GPU_STACK
    assert by_field["env.SOME_TOOL_HOME"]["relevance"] == relevance.OTHER
    assert {"check": "gfx-not-in-torch-arch-list", "before": "ok", "after": "fail"} in doc["findings"]
    assert rundiff.has_changes(doc) and (doc["kind"], doc["schema_version"]) == ("diff", 2)


def test_a_changed_variable_is_tied_by_trying_the_earlier_value(tmp_path):
    older = observations()
    newer = observations(env={"HIP_VISIBLE_DEVICES": "", "API_TOKEN": "s3cr3t-abcdef123456"})
    older.env["API_TOKEN"] = "0ld-s3cr3t-abcdef0987"
    doc = diff_of(older, newer, tmp_path)
    first = doc["changes"][0]
    assert first["field"] == "env.HIP_VISIBLE_DEVICES"
    assert first["checks"][0]["check"] == "gpu-visibility-env" and first["checks"][0]["how"] == "changes its verdict"
    secret = next(c for c in doc["changes"] if c["field"] == "env.API_TOKEN")
    assert "s3cr3t" not in json.dumps(doc) and secret["before"] != secret["after"]


def test_same_run_twice_has_no_relevant_change(tmp_path):
    doc = diff_of(observations(), observations(env={"TERM_SESSION_ID": "x", "PWD": "/elsewhere"}), tmp_path)
    assert doc["changes"] == [] and doc["findings"] == [] and not rundiff.has_changes(doc)


def test_fix_runs_between_the_two_are_listed(tmp_path):
    folder = tmp_path / "runs" / "20260218-120000-000000"
    folder.mkdir(parents=True)
    (folder / "journal.jsonl").write_text(
        json.dumps({"event": "start", "time": "2026-02-18T12:00:00+00:00", "findings": ["x"]}) + "\n"
        + json.dumps({"event": "intent", "seq": 1, "summary": "set HSA_OVERRIDE_GFX_VERSION=10.3.0"}) + "\n")
    doc = diff_of(observations(), observations(), tmp_path)
    assert [r["run"] for r in doc["fix_runs"]] == ["20260218-120000-000000"]
    assert doc["fix_runs"][0]["changes"] == ["set HSA_OVERRIDE_GFX_VERSION=10.3.0 (not confirmed)"]


def test_new_root_cause_says_since_when_and_what_changed(tmp_path):
    good, bad = observations(), observations(drop_gfx908=True)
    runs = stored(tmp_path, good, bad)  # the older run had no problem with torch's arch list; the newer one has it
    report, facts = replay(observations(drop_gfx908=True), "live")
    annotate.annotate(report, facts, store.newest_first(store.folder(tmp_path)), CHECKS)
    root = report.diagnosis.root("gfx-not-in-torch-arch-list:0")
    assert root.new_since["run"] == runs[0].id and root.new_since["date"] == runs[0].created_at
    assert [c["field"] for c in root.new_since["changes"]] == ["torch_arch_list"]
    assert root.new_since["changes"][0]["how"] == "reads"
    assert root.to_dict()["new_since"] == root.new_since

    report, facts = replay(observations(drop_gfx908=True), "live")
    annotate.annotate(report, facts, [runs[1]], CHECKS)  # every stored run had it: not new
    assert report.diagnosis.root("gfx-not-in-torch-arch-list:0").new_since is None


def test_fleet_and_run_diff_read_facts_the_same_way():
    from rocm_doctor.distributed.fleet import summarize

    _, facts = replay(observations(), "test")
    node = summarize(facts, {})
    mine, _ = fields.summary(facts, ())
    assert {k: node[k] for k in ("torch", "torch_hip", "rocm", "kernel", "gpus")} == \
        {k: mine[k] for k in ("torch", "torch_hip", "rocm", "kernel", "gpus")}
    differing, same = engine.differences([engine.flatten(node), engine.flatten(dict(node, torch="2.8.0"))])
    assert differing == [("torch", [node["torch"], "2.8.0"])] and "torch_hip" in same


def test_a_fact_in_requires_ties_a_change_to_the_check():
    from rocm_doctor.engine.model import Check

    class NeedsGfx908(Check):
        id = "test-needs-gfx908"
        title = "torch builds gfx908"
        requires = ("torch.arch_list",)

        def run(self, facts):
            return None if "gfx908" in facts["torch.arch_list"] else self.fail("no gfx908")

    _, older = replay(observations(), "a")
    _, newer = replay(observations(drop_gfx908=True, env={"HSA_ENABLE_SDMA": "0"}), "b")
    items, _ = rundiff.changes(older, newer, {NeedsGfx908.id: "ok"}, {NeedsGfx908.id: "fail"}, [NeedsGfx908])
    assert items[0]["field"] == "torch_arch_list"
    assert items[0]["checks"] == [{"check": NeedsGfx908.id, "status": "fail", "before": "ok", "how": "requires",
                                   "new": True, "clears": True}]
    assert next(i for i in items if i["field"] == "env.HSA_ENABLE_SDMA")["relevance"] == relevance.GPU_STACK


def test_new_since_is_rendered_in_the_terminal_and_in_markdown():
    from rich.console import Console

    from rocm_doctor.report import bundle, human, markdown

    report, facts = replay(observations(drop_gfx908=True), "live")
    root = report.diagnosis.root("gfx-not-in-torch-arch-list:0")
    root.new_since = {"date": "2026-02-18T10:00:00+00:00", "run": "20260218-100000-000000", "changes": [
        {"field": "torch_arch_list", "before": "gfx906, gfx908", "after": "gfx906", "how": "reads", "clears": True}]}
    console = Console(record=True, width=200, no_color=True)
    human.render(report, console)
    text = console.export_text()
    assert "new since " in text and "(run 20260218-100000-000000, the last one without it)" in text
    assert "torch_arch_list: gfx906, gfx908 → gfx906 (it reads this fact, and undoing only this change clears" in text
    page = markdown.render(bundle.build(report, facts))
    assert "   - new since " in page and "     - torch_arch_list: gfx906, gfx908 → gfx906" in page


def test_live_gpu_state_is_compared_leaf_by_leaf_and_a_new_process_is_one_change(tmp_path):
    idle = SNAPSHOTS / "linux-h200-live-state-idle-healthy.json"
    busy = SNAPSHOTS / "linux-h200-other-process-holds-93pct-of-memory.json"
    if not (idle.exists() and busy.exists()):
        pytest.skip("the live-state snapshots are not in this tree")
    doc = diff_of(load_snapshot(idle), load_snapshot(busy), tmp_path)
    first = doc["changes"][0]
    assert first["field"] == "gpu.live.gpus[0].memory_used_mib" and first["relevance"] == relevance.NEW_PROBLEM
    assert first["checks"][0] == {"check": "gpu-memory-held", "status": "fail", "before": "ok", "how": "requires",
                                  "new": True, "clears": True}
    process = next(c for c in doc["changes"] if c["field"].startswith("gpu.live.processes"))
    assert process["field"] == "gpu.live.processes[0]" and process["before"] is None and "pid=736" in process["after"]
    assert not any(c["field"].endswith("self_pid") for c in doc["changes"])  # the doctor's own pid


def test_readings_of_the_moment_count_only_when_a_check_needs_them():
    reading = {"field": "gpu.live.gpus[0].temperature_c", "group": "live"}
    assert relevance._tier(reading, []) == relevance.OTHER
    assert relevance._tier(reading, [{"new": True}]) == relevance.NEW_PROBLEM
    assert relevance._tier({"field": "env.EDITOR", "group": "environment"}, []) == relevance.OTHER
    assert relevance._tier({"field": "env.LD_LIBRARY_PATH", "group": "environment"}, []) == relevance.GPU_STACK
    assert relevance._tier({"field": "rocm", "group": "rocm"}, [{"new": False}]) == relevance.PROBLEM
