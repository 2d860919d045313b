"""The environment that runs the model, replayed: a service that lacks the shell's override, a Jupyter kernel that
runs another interpreter, and the existing environment checks judging a service's or kernel's environment (their
words say which, their steps go where it reads them). Healthy machines raise nothing from service-env-differs."""

import json
from pathlib import Path

import pytest

from rocm_doctor.testing import Case, assert_fix_passes, run_case

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
OLLAMA = "linux-rx6600xt-gfx1032-ollama-service-lacks-the-shells-override"
KERNEL = "linux-rx6600xt-gfx1032-jupyter-kernel-runs-another-interpreters-cpu-torch"
HEALTHY = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy", "linux-2x-h200-cuda-torch2.11",
           "linux-h200-live-state-idle-healthy"]



def snapshot(name):
    return json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))["observations"]


def test_the_service_lacking_the_shells_override_comes_first_with_the_drop_in(replayed):
    observations = snapshot(OLLAMA)
    for key, fixture in (("systemctl-cat-unit", "systemd/ollama-systemctl-cat-environment-path-dollar-path-literal.txt"),
                         ("systemctl-show-environment", "systemd/ubuntu-systemctl-show-environment-lang-path.txt")):
        assert observations["commands"][key]["stdout"] == (FIXTURES / fixture).read_text(encoding="utf-8")
    document = replayed(OLLAMA)
    first = document["diagnosis"]["root_causes"][0]
    assert first["finding"] == "service-env-differs:HSA_OVERRIDE_GFX_VERSION"
    assert {"gfx-not-in-torch-arch-list:0", "hsa-override-gfx-version:0"} <= set(first["symptoms"])
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    dropin, reload, restart = [steps[i] for i in first["plan"]]
    assert (dropin["kind"], dropin["unit"], dropin["name"], dropin["value"], dropin["apply"]) == (
        "unit_env", "ollama.service", "HSA_OVERRIDE_GFX_VERSION", "10.3.0", "auto")
    assert dropin["path"] == "/etc/systemd/system/ollama.service.d/rocm-doctor.conf"
    assert [reload["argv"], restart["argv"]] == [["sudo", "systemctl", "daemon-reload"],
                                                 ["sudo", "systemctl", "restart", "ollama.service"]]
    assert reload["apply"] == restart["apply"] == "print-only"  # fix restarts nothing
    findings = {f["id"]: f for f in document["findings"]}
    assert "~/.bashrc:118: export HSA_OVERRIDE_GFX_VERSION=10.3.0" in findings[first["finding"]]["evidence"]
    override = findings["hsa-override-gfx-version:0"]
    assert override["message"].startswith("In the ollama.service environment: ")
    assert [s["kind"] for s in override["fix"]] == ["unit_env", "run_command", "run_command"]  # never ~/.bashrc
    summary = findings["service-env-differs"]["evidence"]
    assert any("PATH=$PATH: systemd does not expand" in line for line in summary)
    assert document["target"]["environment"].startswith("the ollama.service environment")


def test_the_human_report_says_which_environment_it_judged(doctor):
    result = doctor("check", "--from", str(SNAPSHOTS / f"{OLLAMA}.json"))
    assert "Judging the ollama.service environment" in result.stdout
    assert "In the ollama.service environment: GPU 0" in result.stdout
    assert 'Environment="HSA_OVERRIDE_GFX_VERSION=10.3.0" in /etc/systemd/system/ollama.service.d/rocm-doctor.conf' \
        in result.stdout
    assert "\n          sudo systemctl daemon-reload\n" in result.stdout


def test_fix_dry_run_plans_the_same_steps(doctor, replayed):
    document = replayed(OLLAMA)
    dry = doctor("fix", "--dry-run", "--json", "--from", str(SNAPSHOTS / f"{OLLAMA}.json"))
    planned = json.loads(dry.stdout)["steps"]
    assert [s["id"] for s in planned] == [i["id"] for i in document["diagnosis"]["plan"]]
    change = planned[0]["change"]
    assert (change["type"], change["path"], change["new"], change["new_file"]) == (
        "drop-in", "/etc/systemd/system/ollama.service.d/rocm-doctor.conf",
        'Environment="HSA_OVERRIDE_GFX_VERSION=10.3.0"', True)
    assert [s["manual_commands"] for s in planned[1:]] == [["sudo systemctl daemon-reload"],
                                                           ["sudo systemctl restart ollama.service"]]


def test_a_kernel_running_another_interpreter_is_judged_for_that_interpreter(replayed):
    observations = snapshot(KERNEL)
    kernel_json = "/home/user/.local/share/jupyter/kernels/collection/kernel.json"
    assert observations["files"][kernel_json]["content"] == (
        FIXTURES / "jupyter/nsls2-conda-env-python-kernel.json").read_text(encoding="utf-8")
    document = replayed(KERNEL)
    first = document["diagnosis"]["root_causes"][0]
    assert first["finding"] == "torch-build-mismatch"
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert steps[first["plan"][0]]["python"] == "/opt/conda_envs/collection-2020-2.0rc9/bin/python"
    assert document["target"]["python"] == "/opt/conda_envs/collection-2020-2.0rc9/bin/python"
    assert "Jupyter kernel 'collection'" in document["target"]["environment"]
    summary = next(f for f in document["findings"] if f["id"] == "service-env-differs")
    assert summary["status"] == "ok"
    assert any("could not be read; it is taken as this shell's" in e for e in summary["evidence"])


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_machines_raise_nothing(replayed, name):
    findings = [f for f in replayed(name)["findings"] if f["check"] == "service-env-differs"]
    assert [f["status"] for f in findings] == ["skip"]
    assert "no --unit, --user-unit or --kernel was given" in findings[0]["message"]


# ---- the existing checks on a service's or kernel's environment -----------------------------------------------

SHELL = {"PATH": "/home/user/venv/bin:/usr/bin:/bin", "HOME": "/home/user", "SHELL": "/bin/bash"}
RX6600 = {"index": 0, "name": "AMD Radeon RX 6600", "gfx": "gfx1032", "node": 1, "igpu": False,
          "sources": {"kfd": "gfx1032"}}
TORCH = {"torch.flavour": "rocm", "torch.version": "2.7.1+rocm6.3", "torch.arch_list": ["gfx1030", "gfx1100"]}


def _cmd(argv, stdout):
    return {"argv": argv, "returncode": 0, "stdout": stdout, "stderr": "", "duration_s": 0.01}


def unit(environment="PATH=/usr/bin:/bin"):
    show = (f"Id=ollama.service\nLoadState=loaded\nEnvironment={environment}\nUser=ollama\n"
            "ExecStart={ path=/usr/local/bin/ollama ; argv[]=/usr/local/bin/ollama serve ; ignore_errors=no ; "
            "start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n")
    return {"probes": {"run.request": {"kind": "systemd", "name": "ollama", "scope": "system"}},
            "commands": {"systemctl-show-unit": _cmd(["systemctl", "show", "ollama"], show),
                         "systemctl-show-environment": _cmd(["systemctl", "show-environment"], "LANG=C.UTF-8\n")}}


def kernel(env):
    path = "/home/user/.local/share/jupyter/kernels/rocm/kernel.json"
    spec = {"argv": ["/home/user/rocm/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "ROCm", "language": "python", "env": env}
    return {"probes": {"run.request": {"kind": "jupyter", "name": "rocm"},
                       "run.kernel": {"resource_dir": path.rsplit("/", 1)[0], "kernel_json": path}},
            "files": {path: {"path": path, "exists": True, "content": json.dumps(spec)}}}


def test_the_override_check_on_a_service_writes_a_drop_in_not_the_bashrc():
    after = assert_fix_passes(Case(
        name="override-missing-in-a-service", check="hsa-override-gfx-version", env=SHELL, observations=unit(),
        facts={"gpu.inventory": [RX6600], **TORCH}, expect={"hsa-override-gfx-version:0": "warn"},
        text=["In the ollama.service environment: GPU 0", "Environment=\"HSA_OVERRIDE_GFX_VERSION=10.3.0\""],
        after={"run_command": {}}))
    assert after[0].message.startswith("In the ollama.service environment: HSA_OVERRIDE_GFX_VERSION=10.3.0 is the right")


def test_a_variable_to_remove_from_a_service_becomes_unset_environment():
    findings = run_case(Case(name="empty-visibility-in-a-service", check="gpu-visibility-env", env=SHELL,
                             observations=unit('HIP_VISIBLE_DEVICES= "PATH=/usr/bin:/bin"'),
                             expect={"gpu-visibility-env:HIP_VISIBLE_DEVICES": "fail"}))
    (fail,) = [f for f in findings if f.status.value == "fail"]
    assert fail.message.startswith("In the ollama.service environment: HIP_VISIBLE_DEVICES is set but empty")
    assert fail.fix[0].line() == "UnsetEnvironment=HIP_VISIBLE_DEVICES"
    assert [s.kind for s in fail.fix] == ["unit_env", "run_command", "run_command"]


def test_a_kernel_json_setting_is_changed_in_kernel_json():
    findings = run_case(Case(name="empty-visibility-in-a-kernel", check="gpu-visibility-env", env=SHELL,
                             observations=kernel({"HIP_VISIBLE_DEVICES": "", "MIOPEN_USER_DB_PATH": "/tmp/db"}),
                             expect={"gpu-visibility-env:HIP_VISIBLE_DEVICES": "fail"}))
    (fail,) = [f for f in findings if f.status.value == "fail"]
    assert fail.message.startswith("In the Jupyter kernel 'rocm' environment: ")
    step, restart = fail.fix
    assert (step.kind, step.kernel, step.name, step.value) == ("kernel_env", "rocm", "HIP_VISIBLE_DEVICES", None)
    assert step.path == "/home/user/.local/share/jupyter/kernels/rocm/kernel.json"
    assert restart.kind == "advice" and "Restart the kernel 'rocm'" in restart.text


def test_a_variable_the_kernel_inherits_is_removed_where_the_server_gets_it():
    findings = run_case(Case(name="inherited-visibility", check="gpu-visibility-env",
                             env=dict(SHELL, CUDA_VISIBLE_DEVICES="-1"), observations=kernel({}),
                             expect={"gpu-visibility-env:CUDA_VISIBLE_DEVICES": "fail"}))
    (fail,) = [f for f in findings if f.status.value == "fail"]
    assert [(s.kind, s.scope) for s in fail.fix] == [("unset_env", "process")]  # the shell, as without --kernel


def test_a_check_that_reads_the_shells_probe_is_not_relabelled():
    paths = {"installs": [{"path": "/opt/rocm", "exists": True, "active": True}],
             "PATH": [{"entry": "/opt/rocm-5.7/bin", "exists": False}], "LD_LIBRARY_PATH": []}
    findings = run_case(Case(name="shell-path", check="rocm-paths", env=SHELL, observations=unit(),
                             facts={"rocm.paths": paths}, expect={"rocm-paths:PATH-missing": "warn"}))
    warn = next(f for f in findings if f.id == "rocm-paths:PATH-missing")
    assert not warn.message.startswith("In ") and warn.fix[0].kind == "path_remove"
