"""Writes that respect the target: atomic replace of files through an exclusive random temp file, devices and
FIFOs written through and never replaced, refused links, and failed writes (also of stdout) as exit 2."""

import errno
import os
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from rocm_doctor import safefile

SNAPSHOT = Path(__file__).parent / "snapshots" / "linux-rx6600xt-gfx1032-override-11.0.0.json"
posix_only = pytest.mark.skipif(os.name != "posix", reason="devices, FIFOs and link owners are POSIX")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(safefile.TMP_SUFFIX))


def test_replaces_a_file_keeping_its_mode_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "out.md"
    target.write_text("old")
    target.chmod(0o640)
    safefile.write(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_a_link_at_the_old_fixed_temp_name_is_never_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    for name in (".out.md.tmp", ".out.md.tmp" + safefile.TMP_SUFFIX):
        (tmp_path / name).symlink_to(victim)
    safefile.write(tmp_path / "out.md", "report")
    assert victim.read_text() == "precious"
    assert (tmp_path / "out.md").read_text() == "report"


def test_the_temp_name_is_random_and_taken_exclusively(tmp_path, monkeypatch):
    """A link planted at the very name chosen is met by O_EXCL: another name is drawn, the victim is untouched."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    names = iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb"])
    monkeypatch.setattr(safefile.secrets, "token_hex", lambda n: next(names))
    (tmp_path / f".out.md.aaaaaaaaaaaa{safefile.TMP_SUFFIX}").symlink_to(victim)
    safefile.write(tmp_path / "out.md", "report")
    assert victim.read_text() == "precious"
    assert (tmp_path / "out.md").read_text() == "report"
    assert leftovers(tmp_path) == [f".out.md.aaaaaaaaaaaa{safefile.TMP_SUFFIX}"]  # the planted link, as it was


def test_a_symlinked_target_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "dotfiles" / "report.md"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "report.md"
    link.symlink_to(real)
    safefile.write(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


@posix_only
def test_devices_are_written_through_never_replaced():
    before = os.stat("/dev/null")
    safefile.write("/dev/null", "x" * 100_000)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


@posix_only
def test_a_full_device_is_an_error():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with pytest.raises(safefile.WriteError, match="^cannot write /dev/full: No space left on device$"):
        safefile.write("/dev/full", "report")


@posix_only
def test_a_fifo_is_streamed_to_its_reader_and_refused_without_one(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(safefile.WriteError, match="a pipe that nothing reads"):
        safefile.write(fifo, "report")  # returns at once instead of blocking
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        for _ in range(200):  # until the reader has the FIFO open
            try:
                safefile.write(fifo, b"r" * 300_000)  # larger than a pipe buffer: the write must block, not fail
                break
            except safefile.WriteError:
                threading.Event().wait(0.01)
    finally:
        reader.join(10)
    assert got == [b"r" * 300_000]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@posix_only
def test_files_that_must_be_files_refuse_a_fifo(tmp_path):
    fifo = tmp_path / "current"
    os.mkfifo(fifo)
    with pytest.raises(safefile.WriteError, match="not a regular file"):
        safefile.write(fifo, "name", stream=False)


def test_a_failed_write_keeps_the_old_file_and_removes_the_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old")

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safefile.os, "write", full)
    with pytest.raises(safefile.WriteError, match="No space left on device"):
        safefile.write(target, "new")
    assert target.read_text() == "old" and leftovers(tmp_path) == []


def test_a_short_write_that_stops_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(safefile.os, "write", lambda fd, data: 0)
    with pytest.raises(safefile.WriteError, match="stopped short"):
        safefile.write(tmp_path / "out.json", "new")
    assert not (tmp_path / "out.json").exists() and leftovers(tmp_path) == []


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(safefile.WriteError, match="is a folder"):
        safefile.write(tmp_path, "x")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to own a link as another user")
def test_a_link_another_user_planted_in_a_sticky_shared_folder_is_refused(tmp_path):
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    link = shared / "report.md"
    link.symlink_to(victim)
    os.lchown(link, 12345, 12345)
    with pytest.raises(safefile.WriteError, match="owned by another user in a shared folder"):
        safefile.write(link, "report")
    assert victim.read_text() == "precious"


def test_create_and_append_never_follow_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "backup").symlink_to(victim)
    (tmp_path / "journal.jsonl").symlink_to(victim)
    with pytest.raises(safefile.WriteError):
        safefile.create(tmp_path / "backup", b"copy")
    with pytest.raises(safefile.WriteError):
        safefile.append(tmp_path / "journal.jsonl", "{}\n")
    assert victim.read_text() == "precious"
    safefile.append(tmp_path / "new.jsonl", "a\n")
    safefile.append(tmp_path / "new.jsonl", "b\n")
    assert (tmp_path / "new.jsonl").read_text() == "a\nb\n"


def _doctor(*args, stdout=subprocess.PIPE, cwd=None):
    """The package under test, run from outside the checkout."""
    return subprocess.run([sys.executable, "-m", "rocm_doctor", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, cwd=cwd or tempfile.gettempdir())


def test_report_leaves_a_planted_temp_link_alone(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / ".out.md.tmp").symlink_to(victim)
    (tmp_path / ".out.json.tmp").symlink_to(victim)
    result = _doctor("report", "--from", str(SNAPSHOT), "-o", "out.md", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert victim.read_text() == "precious"
    assert (tmp_path / "out.md").read_text().startswith("### rocm-doctor report")


@posix_only
def test_report_to_dev_stdout_streams_the_markdown_only(tmp_path):
    result = _doctor("report", "--from", str(SNAPSHOT), "-o", "/dev/stdout", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout.startswith("### rocm-doctor report") and "beside this file" not in result.stdout
    assert not Path("/dev/stdout.json").exists()


@posix_only
def test_report_to_dev_stdout_redirected_to_a_file(tmp_path):
    with open(tmp_path / "captured.md", "w") as handle:
        result = _doctor("report", "--from", str(SNAPSHOT), "-o", "/dev/stdout", stdout=handle, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert (tmp_path / "captured.md").read_text().startswith("### rocm-doctor report")
    assert not Path("/dev/stdout.json").exists()  # no JSON "beside" a link into /proc


@posix_only
@pytest.mark.parametrize("args", [("check", "--json"), ("check",), ("checks",), ("--version",)])
def test_stdout_on_a_full_device_exits_2_with_one_line(args):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    extra = ("--from", str(SNAPSHOT)) if args[0] == "check" else ()
    with open("/dev/full", "w") as full:
        result = _doctor(*args, *extra, stdout=full)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "rocm-doctor: error: cannot write to standard output: No space left on device"]


def test_a_block_device_or_another_device_is_refused_without_force(tmp_path, doctor):
    import os
    import stat

    from rocm_doctor import safefile

    disks = [p for p in ("/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1") if os.path.exists(p)
             and stat.S_ISBLK(os.stat(p).st_mode)]
    for disk in disks[:1]:
        assert "block device" in safefile.unsafe_device(disk)
        result = doctor("report", "-o", disk)
        assert result.returncode == 2 and "block device" in result.stderr
    assert "a device" in safefile.unsafe_device("/dev/urandom")
    assert safefile.unsafe_device(os.devnull) is None and safefile.unsafe_device(tmp_path / "x.md") is None
