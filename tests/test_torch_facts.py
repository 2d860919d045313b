"""The torch child's JSON lines become torch.* facts, whatever point the child reached."""

import json

from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret


def observe(lines, returncode=0, timed_out=False, stderr=""):
    obs = Observations(platform={"os": "linux"}, target={"python": "/usr/bin/python3", "reason": "test"})
    stdout = "".join(json.dumps(line) + "\n" for line in lines)
    obs.add_command("torch-probe", CommandResult(argv=["python3", "child"], returncode=returncode, stdout=stdout,
                                                 stderr=stderr, timed_out=timed_out, timeout_s=5))
    return interpret(obs)


START = {"stage": "start", "python": "3.11.7", "prefix": "/venv"}
IMPORT_ROCM = {"stage": "import", "ok": True, "version": "2.5.1+rocm6.2", "hip": "6.2.41133-dd7f95766", "cuda": None,
               "file": "/venv/torch/__init__.py"}


def test_complete_rocm_run():
    facts = observe([
        START, IMPORT_ROCM, {"stage": "build", "config": "PyTorch built with: ..."},
        {"stage": "available", "available": True, "error": None, "warnings": []},
        {"stage": "count", "device_count": 1},
        {"stage": "arch_list", "arch_list": ["gfx900", "gfx1030", "gfx1100"]},
        {"stage": "device", "index": 0, "name": "AMD Radeon RX 6650 XT", "gcnArchName": "gfx1032"},
        {"stage": "libraries", "paths": ["/venv/torch/lib/libamdhip64.so"]},
        {"stage": "done"},
    ])
    assert facts["torch.flavour"] == "rocm" and facts["torch.hip"].startswith("6.2")
    assert facts["torch.available"] is True and facts["torch.device_count"] == 1
    assert facts["torch.devices"][0]["gcnArchName"] == "gfx1032"
    assert facts["torch.arch_list"] == ["gfx900", "gfx1030", "gfx1100"]
    assert facts["torch.probe"]["state"] == "ok"
    assert facts["python.target.version"] == "3.11.7"


def test_abort_during_is_available_keeps_what_came_before():
    facts = observe([START, IMPORT_ROCM, {"stage": "build"}], returncode=-6,
                    stderr='"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"')
    probe = facts["torch.probe"]
    assert probe["state"] == "crashed" and "SIGABRT" in probe["detail"]
    assert "torch.cuda.is_available()" in probe["detail"]
    assert facts["torch.version"] == "2.5.1+rocm6.2"
    assert not facts.has("torch.available") and "SIGABRT" in facts.why_missing("torch.available")


def test_hang_during_import():
    facts = observe([START], returncode=-9, timed_out=True)
    assert facts["torch.probe"]["state"] == "hung"
    assert "import torch" in facts["torch.probe"]["detail"]
    assert "hung" in facts.why_missing("torch.installed")


def test_not_installed_and_noise_lines_are_ignored():
    obs_lines = [START, {"stage": "import", "ok": False, "missing": True, "error": "No module named 'torch'"},
                 {"stage": "done"}]
    facts = observe(obs_lines)
    assert facts["torch.installed"] is False
    noisy = Observations(platform={"os": "linux"})
    noisy.add_command("torch-probe", CommandResult(argv=["p"], returncode=0,
                                                   stdout="warning: blah\n{not json\n" + json.dumps(START) + "\n"))
    assert interpret(noisy)["torch.probe"]["last_stage"] == "start"
