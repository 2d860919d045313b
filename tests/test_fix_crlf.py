"""An rc file with Windows line endings: the block keeps them, yet the shell must not read the carriage return
into the value (bash would set HSA_OVERRIDE_GFX_VERSION="10.3.0\\r", which libhsakmt rejects); and `fix`
verifies what the shell really sets, read back from the file as written."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from rocm_doctor.cli.app import App
import rocm_doctor.diagnose as diagnose_mod
from rocm_doctor.cli.main import cli
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Finding, Severity, Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.fix import rcfile
from rocm_doctor.fix.changes import Context, FileWrite, Preview
from rocm_doctor.fix.verify import new_environment, read_back
from rocm_doctor.engine.plan import PlanItem

KEY = ["env", "HSA_OVERRIDE_GFX_VERSION"]
CODE = "export HSA_OVERRIDE_GFX_VERSION=10.3.0"
USER_PART = b"# mine\r\nexport EDITOR=vim\r\n"
# What an earlier rocm-doctor wrote into a CRLF file: the value the shell reads ends in \r.
UNGUARDED = USER_PART + (f"{rcfile.BEGIN}\r\n{rcfile.HEADER}\r\n{rcfile.KEY_PREFIX}{json.dumps(KEY)}\r\n"
                         f"{CODE}\r\n{rcfile.END}\r\n").encode()
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def bash_sets(rc, name="HSA_OVERRIDE_GFX_VERSION"):
    """What an interactive bash gets from sourcing the file (the test's own file, nothing else runs)."""
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", f'. "$1"; printf %s "${name}"', "bash", str(rc)],
                         capture_output=True, check=True, env={"PATH": os.environ["PATH"]})
    return out.stdout.decode()  # bytes: text mode would turn a \r into \n


def test_the_block_keeps_crlf_and_guards_each_code_line():
    new = rcfile.with_entry(rcfile.decode(USER_PART), KEY, CODE)
    assert new.startswith(USER_PART.decode())
    assert f"{CODE}{rcfile.CR_GUARD}\r\n" in new
    assert all(line.endswith("\r\n") for line in new.splitlines(keepends=True))
    assert rcfile.code_for(new, KEY) == CODE  # read back clean: applying again is a no-op
    assert rcfile.with_entry(new, KEY, CODE) == new


def test_a_unix_file_gets_no_guard():
    new = rcfile.with_entry("export EDITOR=vim\n", KEY, CODE)
    assert f"\n{CODE}\n" in new and rcfile.CR_GUARD + "\n" not in new


def test_an_unguarded_crlf_entry_reads_as_the_shell_sees_it_and_is_rewritten():
    text = rcfile.decode(UNGUARDED)
    assert rcfile.code_for(text, KEY) == CODE + "\r"  # not "already applied"
    fixed = rcfile.with_entry(text, KEY, CODE)
    assert f"{CODE}{rcfile.CR_GUARD}\r\n" in fixed and rcfile.code_for(fixed, KEY) == CODE


@needs_bash
def test_bash_reads_the_value_without_the_carriage_return(tmp_path):
    rc = tmp_path / ".bashrc"
    rc.write_bytes(UNGUARDED)
    assert bash_sets(rc) == "10.3.0\r"  # the defect, as bash really has it
    rc.write_bytes(rcfile.encode(rcfile.with_entry(rcfile.decode(UNGUARDED), KEY, CODE)))
    assert bash_sets(rc) == "10.3.0"
    assert bash_sets(rc, "EDITOR") == "vim\r"  # the user's own lines stay byte for byte, as the shell reads them


@needs_bash
def test_read_back_reports_what_the_shell_sets_not_what_was_meant(tmp_path):
    rc = tmp_path / ".bashrc"
    rc.write_bytes(UNGUARDED)
    ctx = Context(os="linux", shell="bash", home=tmp_path, env={"PATH": os.environ["PATH"],
                                                                "HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    assert read_back(ctx, rc)["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0\r"
    step = S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    preview = Preview(PlanItem(number=1, id="set-override", step=step, findings=["f"], checks=["c"]), "applied",
                      write=FileWrite(rc, None, UNGUARDED, None, CODE))
    assert new_environment(ctx, [preview])["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0\r"


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    for name, value in {"HOME": str(home), "SHELL": "/bin/bash", "ROCM_DOCTOR_STATE_DIR": str(tmp_path / "state"),
                        "HSA_OVERRIDE_GFX_VERSION": "11.0.0", "PATH": os.environ["PATH"]}.items():
        monkeypatch.setenv(name, value)
    finding = Finding(id="hsa-override-gfx-version", check="hsa-override-gfx-version", status=Status.FAIL,
                      title="t", message="HSA_OVERRIDE_GFX_VERSION=11.0.0 does not match gfx1032",
                      severity=Severity.CRITICAL, fix=[S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0")])

    def fake_diagnose(options):
        from rocm_doctor.report.model import Report

        facts = Facts(Observations(env=dict(os.environ)))
        facts.set("platform.os", "linux")
        return Report(findings=[finding], target={"python": sys.executable}, platform={"os": "linux"}), facts

    monkeypatch.setattr(diagnose_mod, "diagnose", fake_diagnose)
    monkeypatch.setattr(App, "interactive", property(lambda app: False))
    return home / ".bashrc"


@needs_bash
@pytest.mark.parametrize("before", [USER_PART, UNGUARDED], ids=["fresh", "earlier-unguarded-block"])
def test_fix_on_a_crlf_bashrc_sets_the_value_the_runtime_accepts(sandbox, before):
    sandbox.write_bytes(before)
    result = CliRunner().invoke(cli, ["fix", "--yes", "--json"], catch_exceptions=False)
    out = json.loads(result.output)
    assert out["results"][0]["outcome"] == "applied"
    written = sandbox.read_bytes()
    assert written.startswith(USER_PART) and b"\n" not in written.replace(b"\r\n", b"")
    assert bash_sets(sandbox) == "10.3.0"
    # The re-check ran with what bash reads back: the override is well formed there (no AMD GPU here: skip).
    assert out["verification"]["error"] is None
    assert out["verification"]["findings"]["hsa-override-gfx-version"] in ("skip", "ok", "info", "resolved")
    assert result.exit_code == 0, result.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_an_rc_file_that_is_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / ".bashrc"
    os.mkfifo(fifo)
    with pytest.raises(rcfile.RcFileError, match="is not a regular file"):
        rcfile.read(fifo)
    with pytest.raises(rcfile.RcFileError, match="not a regular file"):
        rcfile.atomic_write(fifo, b"export X=1\n")
    assert os.path.exists(fifo) and not os.path.isfile(fifo)
