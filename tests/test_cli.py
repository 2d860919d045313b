"""The CLI on this machine (real torch CPU build in a child), the JSON contract, replay, the fast commands."""

import json
import re
import sys

import jsonschema
import pytest

pytestmark = pytest.mark.slow


def test_check_json_validates_against_the_schema(doctor, report_schema):
    proc = doctor("check", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    jsonschema.validate(report, report_schema)
    assert report["tool"]["name"] == "rocm-doctor"
    assert report["target"]["python"]
    assert sum(report["summary"].values()) == len(report["findings"])
    ids = {f["id"] for f in report["findings"]}
    assert {"torch-probe-crashed", "torch-not-installed", "platform-supported"} <= ids


def test_real_torch_is_diagnosed_in_a_child(doctor):
    proc = doctor("check", "--json", "--only", "torch-not-installed", "--only", "torch-probe-crashed")
    found = {f["id"]: f for f in json.loads(proc.stdout)["findings"]}
    if found["torch-not-installed"]["status"] == "fail":
        pytest.skip("torch is not installed in the test interpreter")
    assert found["torch-probe-crashed"]["status"] == "ok"
    assert "torch " in found["torch-not-installed"]["message"]


def test_snapshot_then_replay_gives_the_same_findings(doctor, tmp_path):
    snap = tmp_path / "snap.json"
    proc = doctor("snapshot", "-o", str(snap))
    assert proc.returncode == 0 and snap.exists(), proc.stderr
    live = json.loads(doctor("check", "--json").stdout)
    replay = json.loads(doctor("check", "--json", "--from", str(snap)).stdout)
    assert replay["source"] == str(snap)
    statuses = lambda r: {f["id"]: f["status"] for f in r["findings"] if f["check"] != "torch-probe-crashed"}
    assert statuses(replay) == statuses(live)


def test_human_output_is_plain_without_a_terminal(doctor, isolated_env):
    proc = doctor("check", env=dict(isolated_env, NO_COLOR="1"))
    assert "\x1b[" not in proc.stdout
    assert "[ok]" in proc.stdout
    lines = proc.stdout.strip().splitlines()
    footer = [n for n, line in enumerate(lines) if re.match(r"^(Healthy|No GPU found|Broken|Works|Could not).*: \d+ ", line)]
    assert footer and all(line.startswith(("To see", " " * 10)) for line in lines[footer[-1] + 1:])  # then a plan's commands


def test_verbose_shows_evidence_and_skips(doctor):
    proc = doctor("check", "-v", "--only", "torch-probe-crashed", "--only", "wsl-detected")
    assert "torch-probe-crashed" in proc.stdout and "not applicable on" in proc.stdout


def test_fail_on_warn_changes_the_exit_code(doctor, fake_bin):
    fake_bin.add("rocminfo", "sleep 600\n")
    args = ("check", "--command-timeout", "1", "--only", "external-tool-misbehaved")
    assert doctor(*args).returncode == 0
    assert doctor(*args, "--fail-on", "warn").returncode == 1


def test_checks_and_explain(doctor):
    document = json.loads(doctor("checks", "--json").stdout)
    assert document["kind"] == "checks" and document["schema_version"] == 2
    listing = document["checks"]
    ids = {row["id"] for row in listing}
    assert "gpu-visibility-env" in ids
    proc = doctor("explain", "gpu-visibility-env")
    assert proc.returncode == 0 and "How to fix" in proc.stdout
    assert proc.stdout.count("gpu-visibility-env") == 1  # the header line names it; the doc's own title is dropped
    assert json.loads(doctor("explain", "gpu-visibility-env", "--json").stdout)["doc"].startswith(
        "# gpu-visibility-env")  # the JSON keeps the document whole


def test_explain_igpu_enumerated_first_covers_every_platform(doctor):
    """One id for the iGPU-first problem on Linux, WSL and Windows; its doc gives both platforms' remedies."""
    platforms = {row["id"]: row["platforms"] for row in json.loads(doctor("checks", "--json").stdout)["checks"]}
    assert platforms["igpu-enumerated-first"] == ["linux", "wsl", "windows"] and "igpu-before-dgpu" not in platforms
    proc = doctor("explain", "igpu-enumerated-first")
    assert proc.returncode == 0 and "How to fix" in proc.stdout
    for remedy in ("export HIP_VISIBLE_DEVICES=1", "$env:HIP_VISIBLE_DEVICES = '1'", "set HIP_VISIBLE_DEVICES=1"):
        assert remedy in proc.stdout


def test_version_and_fast_commands_do_not_import_torch(tmp_path):
    import subprocess

    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from rocm_doctor.cli.main import cli\n"
        "for args in (['--version'], ['checks'], ['explain', 'torch-build-mismatch']):\n"
        "    result = CliRunner().invoke(cli, args)\n"
        "    assert result.exit_code == 0, result.output\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
