"""As root, state another user can write (a HOME kept by `sudo -E`) is refused with one line: the fix journal,
the run history and the data folder."""

import os

import pytest

from rocm_doctor import safefile
from rocm_doctor.fix import journal


@pytest.fixture
def as_root(monkeypatch):
    really_root = os.geteuid() == 0
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    return really_root


def test_a_state_folder_others_can_write_is_refused(tmp_path, as_root):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    env = {"ROCM_DOCTOR_STATE_DIR": str(state)}
    if as_root:
        assert journal.trusted_state_dir(env) == state
    state.chmod(0o777)
    with pytest.raises(journal.JournalError) as refused:
        journal.trusted_state_dir(env)
    assert "\n" not in str(refused.value) and str(refused.value).startswith(f"refusing to use {state} as root")


def test_a_folder_of_another_user_is_refused_and_named(tmp_path, as_root):
    if not as_root:
        pytest.skip("giving a folder to another user needs root")
    home = tmp_path / "home-of-alice"
    (home / ".local" / "state").mkdir(parents=True)
    os.chown(home, 1000, 1000)
    why = safefile.untrusted_by_root(home / ".local" / "state" / "rocm-doctor")
    assert "belongs to" in why and "uid 1000" in why and "sudo -E" in why


def test_a_link_to_a_users_folder_is_judged_where_it_leads(tmp_path, as_root):
    if not as_root:
        pytest.skip("giving a folder to another user needs root")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 1000, 1000)
    (tmp_path / "state").symlink_to(theirs)
    assert "belongs to" in safefile.untrusted_by_root(tmp_path / "state")


def test_not_root_trusts_its_own_state(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o777)
    assert safefile.untrusted_by_root(folder) is None


def test_check_says_in_one_line_that_the_history_was_not_used(tmp_path, as_root, monkeypatch):
    from rocm_doctor.history import annotate

    state = tmp_path / "state"
    state.mkdir(mode=0o777)
    state.chmod(0o777)
    monkeypatch.setenv("ROCM_DOCTOR_STATE_DIR", str(state))
    note = annotate.after_check(report=None, facts=None, add=True)
    assert note.startswith("the run history was not used: refusing to use") and not list(state.iterdir())
