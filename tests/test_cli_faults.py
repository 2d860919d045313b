"""End to end with real processes: the faults the doctor must survive without crashing or hanging."""

import json
import time

import pytest

pytestmark = pytest.mark.slow


def findings_of(stdout: str) -> dict:
    return {f["id"]: f for f in json.loads(stdout)["findings"]}


def test_hipconfig_that_never_exits(doctor, fake_bin):
    fake_bin.add("hipconfig", "sleep 600\n")
    started = time.monotonic()
    proc = doctor("check", "--json", "--command-timeout", "2", "--only", "external-tool-misbehaved")
    elapsed = time.monotonic() - started
    assert elapsed < 30, f"the run took {elapsed:.1f} s"
    found = findings_of(proc.stdout)
    hung = [f for f in found.values() if f["id"].startswith("external-tool-misbehaved:hipconfig")]
    assert hung and all(f["status"] == "warn" for f in hung)
    assert "did not finish within 2 s" in hung[0]["message"]


def test_rocminfo_printing_invalid_utf8(doctor, fake_bin):
    fake_bin.add("rocminfo", "printf 'Agent 1\\n  Name: gfx\\377\\3761032\\n'\n")
    proc = doctor("check", "--json", "--only", "external-tool-misbehaved")
    assert proc.returncode == 0, proc.stderr
    finding = findings_of(proc.stdout)["external-tool-misbehaved:rocminfo"]
    assert finding["status"] == "info" and "not UTF-8" in finding["message"]


def test_rocminfo_printing_50_megabytes(doctor, fake_bin):
    fake_bin.add("rocminfo", "head -c 52428800 /dev/zero | tr '\\0' 'x'\n")
    proc = doctor("check", "--json", "--only", "external-tool-misbehaved")
    assert proc.returncode == 0, proc.stderr
    finding = findings_of(proc.stdout)["external-tool-misbehaved:rocminfo"]
    assert finding["status"] == "warn" and "bytes beyond the cap were dropped" in finding["message"]


def test_torch_import_segfaults(doctor, fake_python):
    python = fake_python("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    proc = doctor("check", "--json", "--python", str(python))
    found = findings_of(proc.stdout)
    crash = found["torch-probe-crashed"]
    assert crash["status"] == "fail"
    assert "SIGSEGV" in crash["message"] and "import torch" in crash["message"]
    assert proc.returncode == 1
    assert found["torch-not-installed"]["status"] == "skip"
    assert json.loads(proc.stdout)["diagnosis"]["root_causes"][0]["finding"] == "torch-probe-crashed"


def test_torch_cuda_is_available_hangs(doctor, fake_python):
    python = fake_python(
        """
        import time
        __version__ = "2.5.1+rocm6.2"
        class version:
            hip = "6.2.41133-dd7f95766"
            cuda = None
        class cuda:
            @staticmethod
            def is_available():
                time.sleep(600)
        """
    )
    started = time.monotonic()
    proc = doctor("check", "--json", "--python", str(python), "--torch-timeout", "3")
    assert time.monotonic() - started < 40
    found = findings_of(proc.stdout)
    hung = found["torch-probe-crashed"]
    assert hung["status"] == "fail"
    assert "no answer within 3 s" in hung["message"] and "torch.cuda.is_available()" in hung["message"]
    assert found["torch-not-installed"]["status"] == "ok"
    (root, *_) = json.loads(proc.stdout)["diagnosis"]["root_causes"]
    assert root["finding"] == "torch-probe-crashed"
    assert all(found[s]["caused_by"] == ["torch-probe-crashed"] for s in root["symptoms"])


def test_a_plugin_check_that_raises_and_plugins_that_cannot_load(doctor, isolated_env, tmp_path):
    site = tmp_path / "plugins"
    (site / "doctor_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "doctor_plugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: doctor-plugin\nVersion: 1.0\n")
    (site / "doctor_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[rocm_doctor.checks]\nraising = doctor_plugin:Raising\nbroken = doctor_plugin_missing:Nothing\n"
        "provider = doctor_plugin:provide\n"
    )
    (site / "doctor_plugin.py").write_text(
        "from rocm_doctor.engine.model import Check\n"
        "class Raising(Check):\n"
        "    id = 'plugin-raising'\n"
        "    title = 'a plugin check that raises'\n"
        "    def run(self, facts):\n"
        "        raise ZeroDivisionError('plugin bug')\n"
        "def provide():\n"
        "    raise RuntimeError('provider bug')\n"
    )
    env = dict(isolated_env, PYTHONPATH=str(site))
    proc = doctor("check", "--json", env=env)
    found = findings_of(proc.stdout)
    assert found["plugin-raising"]["status"] == "error"
    assert "ZeroDivisionError: plugin bug" in found["plugin-raising"]["message"]
    load_failures = [f for f in found.values() if f["check"] == "plugin-load-failed"]
    assert sorted(f["message"].split(": ", 1)[0] for f in load_failures) == [
        "entry point broken = doctor_plugin_missing:Nothing", "entry point provider = doctor_plugin:provide"]
    assert any("RuntimeError: provider bug" in f["message"] for f in load_failures)
    assert found["platform-supported"]["status"] == "ok", "the built-in checks still ran"


@pytest.mark.parametrize(
    "args, message",
    [
        (["check", "--from", "{tmp}/corrupt.json"], "not valid JSON"),
        (["check", "--from", "{tmp}/truncated.json"], "not valid JSON"),
        (["check", "--from", "{tmp}/absent.json"], "no such file"),
        (["check", "--python", "{tmp}/no-such-python"], "no such file"),
        (["snapshot", "--python", "{tmp}/no-such-python"], "no such file"),
        (["check", "--only", "no-such-check"], "unknown check id"),
        (["explain", "no-such-check"], "unknown check id"),
    ],
)
def test_bad_input_exits_2_with_one_line(doctor, tmp_path, args, message):
    (tmp_path / "corrupt.json").write_bytes(b"\x00\xffnot json at all")
    (tmp_path / "truncated.json").write_text('{"format": "rocm-doctor-snapshot", "version": 1, "observations": {"env"')
    proc = doctor(*[a.format(tmp=tmp_path) for a in args])
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_hung_tool_is_blamed_on_the_gpu_driver_only_when_it_talks_to_it():
    from rocm_doctor.testing import Case, run_case

    hung = {"returncode": None, "stdout": "", "stderr": "", "timed_out": True, "timeout_s": 10.0}
    commands = {"journalctl-kernel": dict(hung, argv=["journalctl", "-k", "-b"]),
                "rocminfo": dict(hung, argv=["/opt/rocm/bin/rocminfo"])}
    findings = {f.id: f for f in run_case(Case(check="external-tool-misbehaved", observations={"commands": commands},
                                               expect={"external-tool-misbehaved:journalctl-kernel": "warn",
                                                       "external-tool-misbehaved:rocminfo": "warn"}))}
    assert "GPU driver" not in findings["external-tool-misbehaved:journalctl-kernel"].remediation[0]
    assert "whether it waits on a stuck GPU driver or runtime could not be told" in findings["external-tool-misbehaved:rocminfo"].remediation[0]
