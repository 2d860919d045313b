"""The managed block: one per file, entries replaced in place, everything outside it preserved byte for byte."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_doctor.fix import rcfile

KEY = ["env", "HSA_OVERRIDE_GFX_VERSION"]


def test_block_is_appended_once_and_entries_replace_in_place():
    text = "alias ll='ls -l'\nexport EDITOR=vim\n"
    once = rcfile.with_entry(text, KEY, "export HSA_OVERRIDE_GFX_VERSION=10.3.0")
    assert once.startswith(text)
    assert once.count(rcfile.BEGIN) == 1 and once.count(rcfile.END) == 1
    assert rcfile.with_entry(once, KEY, "export HSA_OVERRIDE_GFX_VERSION=10.3.0") == once  # idempotent
    other = rcfile.with_entry(once, ["env", "B"], "export B=1")
    replaced = rcfile.with_entry(other, KEY, "unset HSA_OVERRIDE_GFX_VERSION")
    assert replaced.count(rcfile.BEGIN) == 1
    assert rcfile.entries(replaced) == [(KEY, "unset HSA_OVERRIDE_GFX_VERSION"), (["env", "B"], "export B=1")]
    assert "10.3.0" not in replaced


def test_existing_block_in_the_middle_stays_where_it_is():
    before = "# top\n"
    after = "# bottom, no newline"
    block = rcfile.render_block([(["env", "A"], "export A=1")], "\n")
    text = before + block + after
    out = rcfile.with_entry(text, ["env", "C"], "export C=3")
    assert out.startswith(before) and out.endswith(after)
    assert rcfile.entries(out) == [(["env", "A"], "export A=1"), (["env", "C"], "export C=3")]


def test_crlf_and_missing_final_newline_are_respected():
    text = "set a\r\nset b"
    out = rcfile.with_entry(text, KEY, "export X=1")
    assert out.startswith("set a\r\nset b\r\n" + rcfile.BEGIN + "\r\n")
    assert "\n" not in out.replace("\r\n", "")
    assert rcfile.replace_block(out, None) == "set a\r\nset b\r\n"  # the only byte added is the missing line break


def test_odd_bytes_survive():
    raw = b"caf\xe9 latin-1 \xff\xfe\nexport A=1\n"
    text = rcfile.decode(raw)
    out = rcfile.encode(rcfile.with_entry(text, KEY, "export X=1"))
    assert out.startswith(raw)


@settings(max_examples=200)
@given(prefix=st.text(max_size=200), suffix=st.text(max_size=200))
def test_outside_of_the_block_is_untouched(prefix, suffix):
    prefix = prefix.replace(rcfile.BEGIN, "").replace(rcfile.END, "")
    suffix = suffix.replace(rcfile.BEGIN, "").replace(rcfile.END, "")
    text = prefix + ("\n" if prefix and not prefix.endswith(("\n", "\r")) else "") + rcfile.render_block(
        [(KEY, "export X=1")], "\n") + suffix
    out = rcfile.with_entry(text, ["env", "Y"], "export Y=2")
    span = rcfile.find_block(out)
    assert out[: span[0]] == text[: rcfile.find_block(text)[0]]
    assert out[span[1]:] == suffix


def test_rc_path_per_shell(tmp_path):
    home = tmp_path
    assert rcfile.rc_path("bash", home, {}, "linux") == home / ".bashrc"
    assert rcfile.rc_path("bash", home, {}, "macos") == home / ".bash_profile"
    assert rcfile.rc_path("zsh", home, {"ZDOTDIR": str(tmp_path / "z")}, "linux") == tmp_path / "z" / ".zshrc"
    assert rcfile.rc_path("fish", home, {}, "wsl") == home / ".config" / "fish" / "conf.d" / "rocm-doctor.fish"
    assert rcfile.rc_path("sh", home, {}, "linux") == home / ".profile"


def test_atomic_write_goes_through_symlinks_and_keeps_the_mode(tmp_path):
    real = tmp_path / "dotfiles" / "bashrc"
    real.parent.mkdir()
    real.write_bytes(b"old\n")
    real.chmod(0o600)
    link = tmp_path / ".bashrc"
    link.symlink_to(real)
    rcfile.atomic_write(link, b"new\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"
    assert real.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in real.parent.iterdir()] == ["bashrc"]  # no temporary left behind
