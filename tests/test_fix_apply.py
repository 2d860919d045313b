"""Apply, journal and undo: exact restores of rc files and registry values, idempotence, failures that leave nothing
half-written, and an apply killed half way that can still be undone."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.diagnosis import build
from rocm_doctor import safefile
from rocm_doctor.fix import apply, changes, journal, rcfile, undo
from rocm_doctor.engine import remedy as S
from rocm_doctor.fix.regvalue import REG_EXPAND_SZ, REG_SZ, RegValue
from rocm_doctor.fix.winenv import MemoryRegistry

ENV_STEPS = [
    S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"),
    S.path_prepend("/opt/rocm/bin"),
    S.unset_env("HIP_VISIBLE_DEVICES"),
]


def _items(*steps):
    return build([Finding(id="demo-check", check="demo-check", status=Status.FAIL, title="t", message="m",
                          fix=list(steps))]).plan.items


def _ctx(home, **kw):
    return changes.Context(os=kw.pop("os", "linux"), shell=kw.pop("shell", "bash"), home=home,
                           env=kw.pop("env", {"PATH": "/usr/bin:/bin", "HIP_VISIBLE_DEVICES": ""}), **kw)


def _run(items, ctx, state):
    previews = changes.preview_all(items, ctx)
    apply.preflight(previews, ctx)
    j = journal.Journal.create(state, {"findings": ["demo-check"]})
    return apply.apply_plan(items, ctx, j), j


@pytest.fixture
def home(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def state(tmp_path):
    return tmp_path / "state"


EXISTING_BLOCK = (b"# mine\n" + rcfile.encode(rcfile.render_block([(["env", "ROCM_PATH"], "export ROCM_PATH=/opt/rocm")], "\n"))
                  + b"alias x=y")

RC_CONTENTS = {
    "absent": None,
    "empty": b"",
    "lf": b"# ~/.bashrc\nalias ll='ls -l'\nexport PATH=\"$HOME/bin:$PATH\"\n",
    "no-final-newline": b"alias ll='ls -l'\nexport EDITOR=vim",
    "crlf": b"alias ll='ls -l'\r\nexport EDITOR=vim\r\n",
    "crlf-no-final-newline": b"alias ll='ls -l'\r\nexport EDITOR=vim",
    "existing-block": EXISTING_BLOCK,
    "odd-bytes": b"caf\xe9\n\xff\xfe tail",
}


@pytest.mark.parametrize("name", sorted(RC_CONTENTS))
def test_apply_then_undo_restores_the_rc_file_byte_for_byte(name, home, state):
    rc = home / ".bashrc"
    original = RC_CONTENTS[name]
    if original is not None:
        rc.write_bytes(original)
        rc.chmod(0o640)
    report, j = _run(_items(*ENV_STEPS), _ctx(home), state)
    assert [r.outcome for r in report.results] == ["applied"] * 3, report.error
    text = rc.read_bytes()
    assert text.count(rcfile.BEGIN.encode()) == 1
    if original:
        outside = rcfile.encode(rcfile.replace_block(rcfile.decode(text), rcfile.block_text(rcfile.decode(original))))
        assert outside.rstrip(b"\r\n") == original.rstrip(b"\r\n")  # only a missing final line break was added
    assert b"export HSA_OVERRIDE_GFX_VERSION=10.3.0" in text
    assert (b"\r\n" in text) == (original is not None and b"\r\n" in original)

    result = undo.undo_run(journal.find(state, None))
    assert result.error is None and {i.outcome for i in result.items} == {undo.RESTORED}
    if original is None:
        assert not rc.exists()
    else:
        assert rc.read_bytes() == original
        assert rc.stat().st_mode & 0o777 == 0o640
    assert undo.undo_run(journal.find(state, j.run_id)).already_undone
    assert journal.find(state, None) is None  # nothing left to undo


def test_second_apply_changes_nothing_and_says_already_applied(home, state):
    rc = home / ".bashrc"
    rc.write_bytes(b"# mine\n")
    _run(_items(*ENV_STEPS), _ctx(home), state)
    after_first = rc.read_bytes()
    mtime = rc.stat().st_mtime_ns
    report, j = _run(_items(*ENV_STEPS), _ctx(home), state)
    assert [r.outcome for r in report.results] == ["already-applied"] * 3
    assert rc.read_bytes() == after_first and rc.stat().st_mtime_ns == mtime
    assert not [r for r in j.records() if r["event"] == "intent"]


def test_a_changed_value_replaces_its_line_in_place(home, state):
    _run(_items(S.set_env("HSA_OVERRIDE_GFX_VERSION", "11.0.0"), S.set_env("B", "1")), _ctx(home), state)
    _run(_items(S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0")), _ctx(home), state)
    text = rcfile.decode((home / ".bashrc").read_bytes())
    assert rcfile.entries(text) == [(["env", "HSA_OVERRIDE_GFX_VERSION"], "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
                                    (["env", "B"], "export B=1")]


def test_undo_keeps_edits_made_after_the_fix(home, state):
    rc = home / ".bashrc"
    rc.write_bytes(b"# mine\n")
    _run(_items(*ENV_STEPS), _ctx(home), state)
    rc.write_bytes(rc.read_bytes() + b"alias added=later\n")
    result = undo.undo_run(journal.find(state, None))
    assert result.items[-1].outcome == undo.PARTIAL
    assert rc.read_bytes() == b"# mine\nalias added=later\n"


def test_undo_never_deletes_or_writes_through_a_link_put_there_since(home, state, tmp_path):
    _run(_items(S.set_env("A", "1")), _ctx(home, shell="fish"), state)
    fish = home / ".config" / "fish" / "conf.d" / "rocm-doctor.fish"
    precious = tmp_path / "precious.conf"
    precious.write_bytes(fish.read_bytes())  # same content: an undo that followed the link would delete it
    fish.unlink()
    fish.symlink_to(precious)
    result = undo.undo_run(journal.find(state, None))
    assert result.items[-1].outcome == undo.LEFT and "now leads to" in result.items[-1].message
    assert precious.exists() and fish.is_symlink()


def test_fish_goes_to_its_own_conf_d_file(home, state):
    report, _ = _run(_items(S.set_env("A", "1")), _ctx(home, shell="fish"), state)
    fish = home / ".config" / "fish" / "conf.d" / "rocm-doctor.fish"
    assert b"set -gx A '1'" in fish.read_bytes()
    undo.undo_run(journal.find(state, None))
    assert not fish.exists()


# ---- failures: one line, nothing half-written -------------------------------------------------------------------


def test_read_only_rc_file_is_refused_before_anything_changes(home, state):
    rc = home / ".bashrc"
    rc.write_bytes(b"# read only\n")
    rc.chmod(0o444)
    ctx = _ctx(home)
    previews = changes.preview_all(_items(*ENV_STEPS), ctx)
    with pytest.raises(apply.ApplyError) as err:
        apply.preflight(previews, ctx)
    assert "read-only" in str(err.value) and "\n" not in str(err.value)
    # Even without the preflight, the step fails cleanly.
    j = journal.Journal.create(state, {})
    report = apply.apply_plan(_items(*ENV_STEPS), ctx, j)
    assert report.results[0].outcome == "failed" and "read-only" in report.error
    assert rc.read_bytes() == b"# read only\n"
    assert [p.name for p in home.iterdir()] == [".bashrc"]  # no temporary file left


def test_missing_home_folder(tmp_path, state):
    ctx = _ctx(tmp_path / "nobody")
    with pytest.raises(apply.ApplyError) as err:
        apply.preflight(changes.preview_all(_items(*ENV_STEPS), ctx), ctx)
    assert "home folder" in str(err.value) and "does not exist" in str(err.value)
    assert not (tmp_path / "nobody").exists()


def test_a_step_that_raises_stops_the_run_and_undo_restores_what_was_done(home, state, monkeypatch):
    rc = home / ".bashrc"
    rc.write_bytes(b"original\n")
    real = rcfile.atomic_write
    calls = []

    def failing(path, data, mode=None):
        calls.append(path)
        if len(calls) == 2:
            raise rcfile.RcFileError(f"cannot write {path}: disk full; it was left unchanged")
        real(path, data, mode)

    monkeypatch.setattr(rcfile, "atomic_write", failing)
    report, j = _run(_items(*ENV_STEPS), _ctx(home), state)
    assert [r.outcome for r in report.results] == ["applied", "failed"]
    assert "disk full" in report.error
    monkeypatch.setattr(rcfile, "atomic_write", real)
    assert journal.summarise(j).status == "failed"
    undo.undo_run(journal.find(state, None))
    assert rc.read_bytes() == b"original\n"


CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from rocm_doctor.engine.model import Finding, Status
    from rocm_doctor.engine.diagnosis import build
    from rocm_doctor.fix import apply, changes, journal, rcfile
    from rocm_doctor.engine import remedy as S

    home, state, where = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    steps = [S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), S.path_prepend("/opt/rocm/bin"), S.set_env("B", "2")]
    items = build([Finding(id="d", check="d", status=Status.FAIL, title="t", message="m", fix=steps)]).plan.items
    ctx = changes.Context(os="linux", shell="bash", home=home, env={"PATH": "/usr/bin"})
    real, calls = rcfile.atomic_write, []

    def slow(path, data, mode=None):
        calls.append(path)
        if len(calls) == 2 and where == "before-write":
            print("ready", flush=True); time.sleep(60)
        real(path, data, mode)
        if len(calls) == 2 and where == "after-write":
            print("ready", flush=True); time.sleep(60)

    rcfile.atomic_write = slow
    apply.apply_plan(items, ctx, journal.Journal.create(state, {"findings": ["d"]}))
""")


@pytest.mark.parametrize("where", ["before-write", "after-write"])
def test_an_apply_killed_half_way_can_be_undone(where, home, state, tmp_path):
    rc = home / ".bashrc"
    original = b"# keep me\r\nexport EDITOR=vim"
    rc.write_bytes(original)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script), str(home), str(state), where],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert rc.read_bytes() != original  # step 1 really happened
    j = journal.find(state, None)
    assert journal.summarise(j).status == "interrupted"
    events = [(r["event"], r.get("seq")) for r in j.records()]
    assert ("intent", 2) in events and ("done", 2) not in events
    result = undo.undo_run(j)
    assert result.error is None
    assert rc.read_bytes() == original


# ---- Windows: the registry seam (fake) -------------------------------------------------------------------------


def _win_ctx(home, registry, **kw):
    env = {"Path": r"C:\Windows\system32;C:\Users\me\bin", "HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    return changes.Context(os="windows", shell="powershell", home=home, env=env, registry=registry, **kw)


def _registry():
    return MemoryRegistry({
        "Path": RegValue(r"%USERPROFILE%\AppData\Local\Microsoft\WindowsApps;C:\Old\ROCm\bin;%USERPROFILE%\bin", REG_EXPAND_SZ),
        "HSA_OVERRIDE_GFX_VERSION": RegValue("11.0.0", REG_SZ),
        "TEMP": RegValue(r"%USERPROFILE%\AppData\Local\Temp", REG_EXPAND_SZ),
    })


WIN_STEPS = [
    S.path_prepend(r"C:\Program Files\AMD\ROCm\6.2\bin", variable="PATH"),
    S.path_remove(r"c:\old\rocm\BIN\\", variable="Path"),
    S.unset_env("HSA_OVERRIDE_GFX_VERSION"),
    S.set_env("HIP_PATH", r"%ProgramFiles%\AMD\ROCm\6.2\\"),
    S.set_env("TEMP", r"%USERPROFILE%\Temp2"),
]


def test_registry_changes_keep_types_and_undo_exactly(home, state):
    registry = _registry()
    before = dict(registry.values)
    report, _ = _run(_items(*WIN_STEPS), _win_ctx(home, registry), state)
    assert [r.outcome for r in report.results] == ["applied"] * 5, report.error
    path = registry.get("PATH")
    assert path.type == REG_EXPAND_SZ
    assert path.value == r"C:\Program Files\AMD\ROCm\6.2\bin;%USERPROFILE%\AppData\Local\Microsoft\WindowsApps;%USERPROFILE%\bin"
    assert registry.get("HSA_OVERRIDE_GFX_VERSION") is None
    assert registry.get("HIP_PATH").type == REG_EXPAND_SZ  # new value with %VAR%: expandable
    assert registry.get("TEMP") == RegValue(r"%USERPROFILE%\Temp2", REG_EXPAND_SZ)  # existing type kept
    assert registry.broadcasts == 1
    assert list(home.iterdir()) == []  # no rc file on Windows

    again, _ = _run(_items(*WIN_STEPS), _win_ctx(home, registry), state)
    assert [r.outcome for r in again.results] == ["already-applied"] * 5

    result = undo.undo_run(journal.find(state, None), registry)
    assert result.error is None
    assert registry.values == before
    assert registry.broadcasts == 2


def test_registry_value_changed_since_is_left_alone(home, state):
    registry = _registry()
    _run(_items(S.set_env("HIP_PATH", r"C:\ROCm")), _win_ctx(home, registry), state)
    registry.set("HIP_PATH", RegValue(r"D:\mine", REG_SZ))
    result = undo.undo_run(journal.find(state, None), registry)
    assert result.items[0].outcome == undo.LEFT
    assert registry.get("HIP_PATH") == RegValue(r"D:\mine", REG_SZ)


def test_locked_registry_key_fails_cleanly(home, state):
    registry = _registry()
    registry.locked = True
    before = dict(registry.values)
    report, j = _run(_items(*WIN_STEPS), _win_ctx(home, registry), state)
    assert report.results[0].outcome == "failed"
    assert report.error == r"step 1 failed: cannot write HKCU\Environment\PATH: access denied; it was left unchanged"
    assert registry.values == before
    assert [r["event"] for r in j.records()] == ["start", "intent", "failed", "end"]


def test_windows_plan_previews_manual_commands_without_a_registry(home):
    ctx = _win_ctx(home, None)
    previews = changes.preview_all(_items(*WIN_STEPS[:1]), ctx)
    assert previews[0].action == changes.PRINT
    by_hand = previews[0].instructions + previews[0].manual
    assert "Environment Variables" in by_hand[0] or "Set-ItemProperty" in by_hand[0]


# ---- journal ---------------------------------------------------------------------------------------------------


def test_state_dir_resolution(tmp_path):
    assert safefile.state_dir({"ROCM_DOCTOR_STATE_DIR": str(tmp_path)}) == tmp_path
    assert safefile.state_dir({"XDG_STATE_HOME": "/x/state", "HOME": "/h"}) == Path("/x/state/rocm-doctor")
    assert safefile.state_dir({"HOME": "/h"}) == Path("/h/.local/state/rocm-doctor")


def test_journal_ignores_a_line_cut_off_by_a_kill(state):
    j = journal.Journal.create(state, {"findings": ["x"]})
    j.append({"event": "intent", "seq": 1, "summary": "set A=1 (user)", "target": {"type": "file", "path": "/nope"}})
    with open(j.path, "a", encoding="utf-8") as handle:
        handle.write('{"event": "done", "se')
    assert [r["event"] for r in j.records()] == ["start", "intent"]
    summary = journal.summarise(j)
    assert summary.status == "interrupted" and summary.changes == ["set A=1 (user) (not confirmed)"]
    json.dumps(summary.to_dict())
