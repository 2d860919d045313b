"""End to end: `check` keeps its runs in a temporary state folder (ROCM_DOCTOR_STATE_DIR) and `diff` compares
them. Fake tools on PATH and a fake torch in the target interpreter change between two runs."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOTS = Path(__file__).parent / "snapshots"
ROCMINFO = "rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt"
DENIED = "rocminfo/container-ubuntu-on-opensuse-podman-kfd-permission-denied-nogroup.txt"
ROCM63 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200",
          "gfx1201"]
FAKE_TORCH = '''
__version__ = "{version}"
class version:
    hip = "6.3.42131-fa1d09cbd"
    cuda = None
class _Props:
    name = "AMD Radeon RX 6600 XT"
    gcnArchName = "gfx1032"
    total_memory = 8573157376
    is_integrated = 0
class cuda:
    is_available = staticmethod(lambda: True)
    device_count = staticmethod(lambda: 1)
    get_arch_list = staticmethod(lambda: {archs!r})
    get_device_properties = staticmethod(lambda index: _Props())
'''


@pytest.fixture
def machine(doctor, fake_bin, isolated_env, tmp_path):
    """`run(archs=..., env=..., rocminfo=..., hip=...)`: one live `check --json --no-gpu` on a fake RX 6600 XT whose
    target interpreter (always the same one) imports the fake torch written for that run."""
    state = Path(isolated_env["ROCM_DOCTOR_STATE_DIR"])
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n")
    python.chmod(0o755)

    def run(*extra, archs=ROCM63 + ["gfx1032"], env=None, rocminfo=ROCMINFO, hip="6.3.42134", version="2.7.1+rocm6.3"):
        fake_bin.add_output("rocminfo", rocminfo)
        fake_bin.add("hipconfig", f"echo {hip}\n")
        (site / "torch" / "__init__.py").write_text(FAKE_TORCH.format(version=version, archs=archs))
        return doctor("check", "--json", "--no-gpu", "--python", str(python), *extra,
                      env=dict(isolated_env, **(env or {})))

    run.state = state
    run.history = state / "history"
    run.python = python
    return run


def diff(doctor, isolated_env, *args, env=None):
    return doctor("diff", *args, env=dict(isolated_env, NO_COLOR="1", **(env or {})))


def test_a_changed_torch_build_is_the_first_change_and_the_diagnosis_names_it(machine, doctor, isolated_env,
                                                                              report_schema):
    first = machine(env={"EDITOR": "vi"})
    assert first.returncode in (0, 1), first.stderr
    # a nightly torch without gfx1032, a newer HIP and unrelated variables: only the first breaks the GPU
    second = machine(archs=ROCM63, hip="6.4.43482", version="2.8.0+rocm6.4",
                     env={"EDITOR": "nano", "MIOPEN_LOG_LEVEL": "3"})
    assert second.returncode == 1, second.stderr
    report = json.loads(second.stdout)
    jsonschema.validate(report, report_schema)
    root = next(r for r in report["diagnosis"]["root_causes"] if r["check"] == "gfx-not-in-torch-arch-list")
    assert root["new_since"]["run"] == sorted(p.stem for p in machine.history.iterdir())[0]
    assert "torch_arch_list" in [c["field"] for c in root["new_since"]["changes"]]

    proc = diff(doctor, isolated_env, "--json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "diff" and doc["schema_version"] == 2
    assert doc["changes"][0]["field"] == "torch_arch_list"
    assert doc["changes"][0]["checks"][0]["check"] == "gfx-not-in-torch-arch-list"
    fields = [c["field"] for c in doc["changes"]]
    assert {"torch", "rocm", "env.MIOPEN_LOG_LEVEL", "env.EDITOR"} <= set(fields)
    assert fields.index("env.EDITOR") > fields.index("rocm")  # not the GPU stack: last
    assert {"check": "gfx-not-in-torch-arch-list", "before": "ok", "after": "fail"} in doc["findings"]

    human = diff(doctor, isolated_env)
    assert human.returncode == 1
    lines = human.stdout.splitlines()
    first_change = next(i for i, line in enumerate(lines) if line.startswith(" 1. "))
    assert lines[first_change].startswith(" 1. torch_arch_list:") and "gfx-not-in-torch-arch-list" in lines[first_change + 1]
    markdown = diff(doctor, isolated_env, "--format", "markdown")
    assert "| 1 | torch_arch_list:" in markdown.stdout and markdown.returncode == 1


def test_a_changed_tool_output_comes_first_and_is_named(machine, doctor, isolated_env):
    assert machine(env={"OTHER_SETTING": "1"}).returncode in (0, 1)
    second = machine(rocminfo=DENIED, env={"OTHER_SETTING": "2"})  # rocminfo now cannot open /dev/kfd
    roots = {r["check"]: r for r in json.loads(second.stdout)["diagnosis"]["root_causes"]}
    assert "rocminfo" in {c["field"] for c in roots["rocm-device-access"]["new_since"]["changes"]}
    doc = json.loads(diff(doctor, isolated_env, "--json").stdout)
    top = [c for c in doc["changes"] if c["relevance"] == "new-problem"]
    assert doc["changes"][: len(top)] == top and "rocminfo" in {c["field"] for c in top}
    assert all(c["checks"][0]["check"] == "rocm-device-access" for c in top)
    assert doc["changes"][-1]["field"] == "env.OTHER_SETTING" and doc["changes"][-1]["relevance"] == "other"


def test_a_changed_variable_comes_first_and_is_named(machine, doctor, isolated_env):
    assert machine().returncode in (0, 1)
    second = machine(env={"HIP_VISIBLE_DEVICES": "", "UNRELATED": "x"})
    assert second.returncode == 1
    roots = {r["check"]: r for r in json.loads(second.stdout)["diagnosis"]["root_causes"]}
    (change,) = roots["gpu-visibility-env"]["new_since"]["changes"]
    assert change == {"field": "env.HIP_VISIBLE_DEVICES", "before": None, "after": "", "how": "changes its verdict",
                      "clears": True}
    human = doctor("check", "--no-gpu", "--no-history", env=dict(isolated_env, HIP_VISIBLE_DEVICES="", NO_COLOR="1"))
    assert "env.HIP_VISIBLE_DEVICES: (unset) → ''" not in human.stdout  # --no-history: not compared
    doc = json.loads(diff(doctor, isolated_env, "--json").stdout)
    assert doc["changes"][0]["field"] == "env.HIP_VISIBLE_DEVICES"
    assert doc["changes"][0]["checks"][0]["check"] == "gpu-visibility-env"


def test_no_history_and_replays_write_nothing(machine, doctor, isolated_env):
    assert machine("--no-history").returncode in (0, 1)
    assert not machine.history.exists()
    replay = doctor("check", "--from", str(SNAPSHOTS / "linux-2x-mi100-gfx908-healthy.json"), env=isolated_env)
    assert replay.returncode == 0 and not machine.history.exists()
    assert machine("--only", "gpu-visibility-env").returncode == 0 and not machine.history.exists()
    none = diff(doctor, isolated_env)
    assert none.returncode == 2 and none.stderr.count("\n") == 1 and "no run is stored" in none.stderr


def test_history_stays_within_its_bounds(machine, isolated_env):
    from rocm_doctor.history import store

    assert machine().returncode in (0, 1)
    (only,) = machine.history.iterdir()
    for n in range(store.MAX_RUNS + 3):
        shutil.copy(only, machine.history / f"2020010{n // 10}-0000{n % 10:02d}-000000.json")
    assert machine().returncode in (0, 1)
    kept = sorted(p.name for p in machine.history.iterdir())
    assert len(kept) == store.MAX_RUNS
    assert "20200100-000000-000000.json" not in kept and only.name in kept  # oldest dropped first
    assert sum(p.stat().st_size for p in machine.history.iterdir()) <= store.MAX_BYTES


def test_a_state_folder_that_cannot_be_written_costs_nothing(machine, isolated_env, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the state folder should be")
    proc = machine(env={"ROCM_DOCTOR_STATE_DIR": str(blocked)})
    assert proc.returncode in (0, 1) and json.loads(proc.stdout)["diagnosis"]
    notes = [line for line in proc.stderr.splitlines() if "history" in line]
    assert len(notes) == 1 and notes[0].startswith("rocm-doctor: note: the run history in") and "Traceback" not in proc.stderr
    assert blocked.read_text() == "a file where the state folder should be"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_history_loses_nothing(machine):
    assert machine().returncode in (0, 1)
    before = {p.name: p.read_bytes() for p in machine.history.iterdir()}
    machine.history.chmod(0o500)
    try:
        proc = machine(env={"HIP_VISIBLE_DEVICES": ""})
    finally:
        machine.history.chmod(0o700)
    assert proc.returncode == 1 and "new_since" in proc.stdout  # still compared with what is there
    assert proc.stderr.count("rocm-doctor: note:") == 1
    assert {p.name: p.read_bytes() for p in machine.history.iterdir()} == before


def test_read_only_history_in_process_loses_nothing_and_raises_nothing(machine, isolated_env, monkeypatch):
    from click.testing import CliRunner

    from rocm_doctor import safefile
    from rocm_doctor.cli.main import cli

    assert machine().returncode in (0, 1)
    before = {p.name: p.read_bytes() for p in machine.history.iterdir()}

    def refuse(path, data, **kw):
        raise safefile.WriteError(f"cannot write {path}: access denied")

    monkeypatch.setattr(safefile, "write", refuse)
    env = dict(isolated_env, HIP_VISIBLE_DEVICES="")
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into the output otherwise
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(cli, ["check", "--json", "--no-gpu", "--python", str(machine.python)], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1
    roots = json.loads(result.stdout)["diagnosis"]["root_causes"]
    assert any(r.get("new_since") for r in roots)
    assert result.stderr.count("rocm-doctor: note:") == 1 and "access denied" in result.stderr
    assert {p.name: p.read_bytes() for p in machine.history.iterdir()} == before


def test_diff_of_files_ids_and_bad_input(machine, doctor, isolated_env, tmp_path):
    healthy = SNAPSHOTS / "linux-rx6600xt-gfx1032-cpu-torch.json"
    other = SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json"
    files = diff(doctor, isolated_env, str(healthy), str(other), "--json")
    assert files.returncode == 1, files.stderr
    doc = json.loads(files.stdout)
    assert doc["a"]["source"] == str(healthy) and "torch" in {c["field"] for c in doc["changes"]}
    same = diff(doctor, isolated_env, str(healthy), str(healthy))
    assert same.returncode == 0 and "No relevant change" in same.stdout
    assert machine().returncode in (0, 1)
    assert machine().returncode in (0, 1)
    listed = diff(doctor, isolated_env, "--list", "--json")
    runs = [r["run"] for r in json.loads(listed.stdout)["runs"]]
    assert len(runs) == 2
    by_id = diff(doctor, isolated_env, runs[0][:-2], runs[1])
    assert by_id.returncode == 0, by_id.stdout + by_id.stderr  # the same fake machine twice
    check_json = tmp_path / "check.json"
    check_json.write_text(doctor("check", "--json", "--from", str(healthy), env=isolated_env).stdout)
    for args in ([str(check_json)], ["nope"], ["--json", "--format", "markdown"], [str(tmp_path)]):
        bad = diff(doctor, isolated_env, *args)
        assert bad.returncode == 2 and bad.stderr.startswith("rocm-doctor: error: ") and bad.stderr.count("\n") == 1, \
            (args, bad.stderr)


def test_readme_usage_names_every_diff_option():
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    usage = readme[readme.index("## Usage"):]
    usage = usage[: usage.index("```", usage.index("```") + 3)]
    line = next(line for line in usage.splitlines() if line.startswith("rocm-doctor diff"))
    for option in ("[A]", "[B]", "--json", "--format", "--list"):
        assert option in line
    assert "--no-history" in usage
