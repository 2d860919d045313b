"""Under --unit / --user-unit / --kernel the GPU tools whose output depends on the environment (rocminfo, hipconfig,
rocm_agent_enumerator, amdgpu-arch) run in the service's or kernel's environment, the one the checks judge, and their
records say so; rocm-smi, amd-smi and nvidia-smi (which ask the driver) and every tool without --unit run as before.
A fake systemctl gives the unit's Environment=, a fake rocminfo prints what it was given."""

import json
import sys
from pathlib import Path

from rocm_doctor.testing import Case, run_case

FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOTS = Path(__file__).parent / "snapshots"
ECHO = ('echo "ROCR_VISIBLE_DEVICES=${ROCR_VISIBLE_DEVICES-unset} '
        'HSA_OVERRIDE_GFX_VERSION=${HSA_OVERRIDE_GFX_VERSION-unset}"\n')
SERVICE = "ROCR_VISIBLE_DEVICES=GPU-4f2e7c1a9b3d5e60 HSA_OVERRIDE_GFX_VERSION=10.3.0"
SHELL = "ROCR_VISIBLE_DEVICES=unset HSA_OVERRIDE_GFX_VERSION=11.0.0"


def fake_unit(fake_bin, tmp_path, exec_start="/usr/local/bin/ollama serve"):
    """A systemctl that knows ollama.service, whose Environment= sets the two GPU variables."""
    show = ["Id=ollama.service", "LoadState=loaded", f"Environment={SERVICE}", "User=ollama",
            f"ExecStart={{ path={exec_start.split()[0]} ; argv[]={exec_start} ; ignore_errors=no ; "
            "start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }",
            "FragmentPath=/etc/systemd/system/ollama.service", "DropInPaths="]
    (tmp_path / "show.txt").write_text("\n".join(show) + "\n")
    manager = FIXTURES / "systemd/ubuntu-systemctl-show-environment-lang-path.txt"
    fake_bin.add("systemctl", f"""\
        case "$*" in
          *show-environment*) cat '{manager}' ;;
          *"show ollama"*) cat '{tmp_path}/show.txt' ;;
          *show*) printf 'LoadState=not-found\\n' ;;
        esac
        """)
    for tool in ("rocminfo", "rocm-smi", "amdgpu-arch"):
        fake_bin.add(tool, ECHO)


def snapshot_of(doctor, tmp_path, env, *args) -> dict:
    out = tmp_path / "snap.json"
    result = doctor("snapshot", *args, "-o", str(out), "--force", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())["observations"]["commands"]


def test_the_gpu_tools_see_the_services_variables(doctor, fake_bin, tmp_path, isolated_env):
    fake_unit(fake_bin, tmp_path)
    env = dict(isolated_env, HSA_OVERRIDE_GFX_VERSION="11.0.0")
    commands = snapshot_of(doctor, tmp_path, env, "--unit", "ollama")
    for key in ("rocminfo", "amdgpu-arch"):  # found on this shell's PATH: the service's has no fake tools
        assert commands[key]["stdout"].strip() == SERVICE and commands[key].get("environment") == "run.env", key
        assert commands[key]["argv"][0] == str(fake_bin.path / key)
    smi = commands["rocm-smi-json"]  # asks the driver: unchanged
    assert smi["stdout"].strip() == SHELL and smi.get("environment") is None
    torch = commands["torch-probe"]  # ExecStart is no Python: the torch checks judge the default interpreter
    assert torch.get("environment") is None
    assert all(commands[k].get("environment") is None for k in commands if k.startswith("systemctl"))


def test_without_unit_nothing_changes(doctor, fake_bin, tmp_path, isolated_env):
    fake_unit(fake_bin, tmp_path)
    commands = snapshot_of(doctor, tmp_path, dict(isolated_env, HSA_OVERRIDE_GFX_VERSION="11.0.0"))
    assert commands["rocminfo"]["stdout"].strip() == SHELL and commands["rocminfo"].get("environment") is None
    assert "systemctl-show-unit" not in commands


def test_a_python_service_runs_torch_and_the_tools_in_its_environment(doctor, fake_bin, tmp_path, isolated_env):
    fake_unit(fake_bin, tmp_path, exec_start=f"{sys.executable} main.py")
    commands = snapshot_of(doctor, tmp_path, isolated_env, "--unit", "ollama")
    assert commands["torch-probe"].get("environment") == "run.env"
    assert commands["rocminfo"]["stdout"].strip() == SERVICE


# ---- what a check may conclude from rocminfo under --unit ----------------------------------------------------

def unit_with(environment: str) -> dict:
    show = (f"Id=ollama.service\nLoadState=loaded\nEnvironment={environment}\nUser=ollama\n"
            "ExecStart={ path=/usr/local/bin/ollama ; argv[]=/usr/local/bin/ollama serve ; ignore_errors=no ; "
            "start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n")
    run = {"argv": ["systemctl", "show", "ollama"], "returncode": 0, "stdout": show}
    manager = {"argv": ["systemctl", "show-environment"], "returncode": 0, "stdout": "LANG=C.UTF-8\n"}
    return {"probes": {"run.request": {"kind": "systemd", "name": "ollama", "scope": "system"}},
            "commands": {"systemctl-show-unit": run, "systemctl-show-environment": manager}}


CPU_ONLY = {"rocminfo.agents": [{"name": "AMD Ryzen 5 3600 6-Core Processor", "device_type": "CPU", "node": 0}],
            "kfd.nodes": [{"node": 1, "kind": "gpu", "gfx": "gfx1032", "name": "navi23"}]}


def status(environment):
    return {"rocminfo.status": {"state": "ok", "evidence": [], "environment": environment}}


BAD_ROCR = "ROCR_VISIBLE_DEVICES=GPU-4f2e7c1a9b3d5e60"


def test_rocminfo_in_the_services_environment_shows_what_its_variable_selects():
    findings = run_case(Case(check="gpu-visibility-unknown-id", observations=unit_with(BAD_ROCR),
                             facts={**CPU_ONLY, **status("run.env")},
                             expect={"gpu-visibility-unknown-id:ROCR_VISIBLE_DEVICES": "fail"},
                             text="with it set rocminfo lists no GPU, while KFD lists 1"))
    assert findings[0].message.startswith("In the ollama.service environment: ")


def test_rocminfo_of_an_older_snapshot_ran_in_the_shell_and_cannot_tell():
    run_case(Case(check="gpu-visibility-unknown-id", observations=unit_with(BAD_ROCR),
                  facts={**CPU_ONLY, **status(None)},
                  expect={"gpu-visibility-unknown-id:ROCR_VISIBLE_DEVICES": "skip"},
                  text="rocminfo ran in this shell's environment"))


# ---- replayed ------------------------------------------------------------------------------------------------

TOOLS_IN_SERVICE = "linux-rx6600xt-gfx1032-ollama-service-gpu-tools-run-in-its-environment"
OLLAMA = "linux-rx6600xt-gfx1032-ollama-service-lacks-the-shells-override"


def test_replayed_service_snapshot_keeps_its_cause_and_says_where_the_tools_ran(replayed):
    commands = json.loads((SNAPSHOTS / f"{TOOLS_IN_SERVICE}.json").read_text())["observations"]["commands"]
    assert commands["rocminfo"].get("environment") == "run.env" and "gfx1032" in commands["rocminfo"]["stdout"]
    assert commands["torch-probe"].get("environment") is None
    document, before = replayed(TOOLS_IN_SERVICE), replayed(OLLAMA)
    first = document["diagnosis"]["root_causes"][0]
    assert first["finding"] == "service-env-differs:HSA_OVERRIDE_GFX_VERSION"
    assert "hsa-override-gfx-version:0" in first["symptoms"]
    assert document["diagnosis"]["plan"] == before["diagnosis"]["plan"]  # the records change no judgement
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert any("ollama.service" in json.dumps(steps[i]) for i in first["plan"])
