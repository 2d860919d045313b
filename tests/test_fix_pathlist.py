"""PATH editing never drops, reorders or duplicates an entry other than the one it adds or removes."""

import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine import shells
from rocm_doctor.fix import pathlist

# Entries with spaces, quotes, %VAR% references, unicode, backslashes; empty entries are drawn too.
_piece = st.sampled_from(
    ["C:\\Program Files\\AMD\\ROCm\\6.2\\bin", "%SystemRoot%\\system32", "%USERPROFILE%\\bin", '"C:\\Quoted Dir"',
     "/opt/rocm/bin", "/usr/local/bin", "/home/u/my tools", "it's", "", "C:\\x\\", "c:\\X", "/bin", "~/bin", "ü/ß"]
)
_text = st.text(st.characters(blacklist_characters=":;\n\r\0", blacklist_categories=("Cs",)), max_size=30)
entry_st = st.one_of(_piece, _text)
entries_st = st.lists(entry_st, max_size=60)
long_entries_st = st.lists(entry_st, min_size=200, max_size=400)
sep_st = st.sampled_from([":", ";"])


def _norm(entries):
    return [] if entries == [""] else entries


def _others(entries, entry, windows):
    return [e for e in entries if not pathlist.same_entry(e, entry, windows)]


def _check_prepend(entries, entry, sep, windows):
    value = pathlist.join(entries, sep)
    out = pathlist.split(pathlist.prepend(value, entry, sep, windows), sep)
    assert out[0] == entry
    assert out[1:] == _others(_norm(entries), entry, windows)
    # idempotent: a second prepend changes nothing
    again = pathlist.prepend(pathlist.join(out, sep), entry, sep, windows)
    assert again == pathlist.join(out, sep)
    assert pathlist.is_first(again, entry, sep, windows)


def _check_remove(entries, entry, sep, windows):
    value = pathlist.join(entries, sep)
    out = pathlist.split(pathlist.remove(value, entry, sep, windows), sep)
    assert _norm(out) == _norm(_others(_norm(entries), entry, windows))
    assert not pathlist.contains(pathlist.join(out, sep), entry, sep, windows)
    assert pathlist.remove(pathlist.join(out, sep), entry, sep, windows) == pathlist.join(out, sep)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(entries=entries_st, new=entry_st, sep=sep_st, windows=st.booleans())
def test_prepend_keeps_every_other_entry_in_order(entries, new, sep, windows):
    assume(new and sep not in new)
    entries = [e for e in entries if sep not in e]
    _check_prepend(entries, new, sep, windows)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(entries=entries_st, data=st.data(), sep=sep_st, windows=st.booleans())
def test_remove_keeps_every_other_entry_in_order(entries, data, sep, windows):
    entries = [e for e in entries if sep not in e]
    choices = [e for e in entries if e] or ["/not/there"]
    target = data.draw(st.one_of(st.sampled_from(choices), entry_st.filter(lambda e: e and sep not in e)))
    _check_remove(entries, target, sep, windows)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(entries=long_entries_st, new=entry_st, sep=sep_st, windows=st.booleans())
def test_very_long_paths(entries, new, sep, windows):
    assume(new and sep not in new)
    entries = [e for e in entries if sep not in e]
    _check_prepend(entries, new, sep, windows)
    _check_remove(entries + [new], new, sep, windows)


def test_windows_compare_is_case_insensitive_and_ignores_quotes_and_trailing_backslash():
    value = r'C:\A;"C:\Program Files\ROCm\bin";%SystemRoot%\system32;;c:\program files\rocm\BIN\;D:\z'
    out = pathlist.remove(value, r"C:\Program Files\ROCm\bin", ";", True)
    assert out == r"C:\A;%SystemRoot%\system32;;D:\z"
    assert pathlist.prepend(value, r"c:\a", ";", True).split(";")[0] == r"c:\a"
    assert pathlist.prepend(value, r"c:\a", ";", True).count("C:\\A") == 0
    # On Linux the case matters.
    assert pathlist.remove("/Opt:/opt", "/opt", ":", False) == "/Opt"


def test_empty_variable_gets_no_empty_entry():
    assert pathlist.prepend("", "/opt/rocm/bin", ":", False) == "/opt/rocm/bin"
    assert pathlist.prepend(None, "/opt/rocm/bin", ":", False) == "/opt/rocm/bin"
    assert pathlist.prepend("::", "/x", ":", False) == "/x:::"  # the user's empty entries stay


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=st.lists(st.sampled_from(["/a", "/b c", "", "/opt/rocm/bin", "/x'y", '/q"r', "/s*t", "/u[v]"]),
                        max_size=8),
       entry=st.sampled_from(["/opt/rocm/bin", "/b c", "/x'y", "/s*t", "/u[v]"]),
       prepend=st.booleans())
def test_rc_shell_code_does_what_pathlist_does(entries, entry, prepend):
    """The line written into ~/.bashrc edits PATH exactly like the Python model (run by a real bash and sh)."""
    value = ":".join(entries)
    step = S.path_prepend(entry, variable="RD_TEST_PATH") if prepend else S.path_remove(entry, variable="RD_TEST_PATH")
    code = shells.rc_code(step, "bash")
    expected = (pathlist.prepend if prepend else pathlist.remove)(value, entry, ":", False)
    for shell in [s for s in ("bash", "dash", "sh") if shutil.which(s)]:
        script = f"{code}\nprintf '%s' \"$RD_TEST_PATH\""
        proc = subprocess.run([shell, "-c", script], env={"RD_TEST_PATH": value}, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == expected, (shell, value)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    "value, entry, prepend",
    [(":/s*t", "/s*t", True), (":/s*t", "/s*t", False), ("/s*t", "/s*t", True), ("", "/u[v]", True),
     ("/a:/s*t::/b c", "/s*t", True), (r"/a\*:/a\*:/x", r"/a\*", False), ("/[!a]:/b", "/[!a]", True)],
)
def test_rc_shell_code_keeps_empty_entries_and_globs_literal(value, entry, prepend):
    """Regression (hypothesis found ':/s*t'): a lone empty entry left after the removal is kept, as in pathlist."""
    step = S.path_prepend(entry, variable="RD_TEST_PATH") if prepend else S.path_remove(entry, variable="RD_TEST_PATH")
    code = shells.rc_code(step, "bash")
    expected = (pathlist.prepend if prepend else pathlist.remove)(value, entry, ":", False)
    for shell in [s for s in ("bash", "dash", "sh", "zsh") if shutil.which(s)]:
        proc = subprocess.run([shell, "-c", f"{code}\nprintf '%s' \"$RD_TEST_PATH\""], env={"RD_TEST_PATH": value},
                              capture_output=True, text=True)
        assert (proc.returncode, proc.stdout) == (0, expected), (shell, value, proc.stderr)
