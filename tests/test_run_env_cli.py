"""`--unit`, `--user-unit` and `--kernel` live, with a fake systemctl on PATH and kernel folders in a fake home:
what is read, which interpreter the torch probe runs, and bad input (no such unit, no systemctl, a FIFO as an
EnvironmentFile, a malformed kernel.json) as one line or a finding, never a traceback."""

import json
import os
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def fake_systemctl(fake_bin, tmp_path, exec_start="/usr/local/bin/ollama serve", files=()):
    """A systemctl that knows ollama.service (any other unit: LoadState=not-found) and records its arguments."""
    show = ["Id=ollama.service", "LoadState=loaded", 'Environment="PATH=$PATH" OLLAMA_HOST=0.0.0.0',
            *(f"EnvironmentFiles={path} (ignore_errors={'yes' if optional else 'no'})" for path, optional in files),
            "User=ollama", f"ExecStart={{ path={exec_start.split()[0]} ; argv[]={exec_start} ; ignore_errors=no ; "
            "start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }",
            "FragmentPath=/etc/systemd/system/ollama.service", "DropInPaths="]
    (tmp_path / "show.txt").write_text("\n".join(show) + "\n")
    (tmp_path / "manager.txt").write_text("LANG=C.UTF-8\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin\n")
    cat = FIXTURES / "systemd/ollama-systemctl-cat-environment-path-dollar-path-literal.txt"
    fake_bin.add("systemctl", f"""\
        echo "$*" >> '{tmp_path}/calls.txt'
        case "$*" in
          *show-environment*) cat '{tmp_path}/manager.txt' ;;
          *"cat ollama"*) cat '{cat}' ;;
          *"show ollama"*) cat '{tmp_path}/show.txt' ;;
          *show*) printf 'LoadState=not-found\\n' ;;
        esac
        """)


def test_a_unit_is_read_and_judged(doctor, fake_bin, tmp_path, isolated_env):
    fifo = tmp_path / "fifo.env"
    os.mkfifo(fifo)
    good = tmp_path / "ollama.env"
    good.write_text("export FOO=1\nHF_TOKEN=hf_secret_value\nOLLAMA_KEEP_ALIVE=5m\n")
    fake_systemctl(fake_bin, tmp_path, files=[(str(fifo), False), (str(good), True), ("/nonexistent/x.env", False),
                                              ("/nonexistent/optional.env", True)])
    env = dict(isolated_env, HSA_OVERRIDE_GFX_VERSION="10.3.0")
    result = doctor("check", "--unit", "ollama", "--no-gpu", "--no-history", "--json", env=env)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    findings = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert findings["service-env-differs:environment-file"]["status"] == "fail"
    assert "/nonexistent/x.env does not exist" in findings["service-env-differs:environment-file"]["message"]
    evidence = "\n".join(findings["service-env-differs"]["evidence"])
    assert f"{fifo} could not be read (a named pipe (FIFO), not a file: not read)" in evidence
    assert "systemd does not know 'export'" in evidence and "optional: systemd skips it" in evidence
    assert "HSA_OVERRIDE_GFX_VERSION: your shell has '10.3.0', ollama.service has no such variable" in evidence
    calls = (tmp_path / "calls.txt").read_text()
    assert "show ollama -p Id -p LoadState -p Environment -p EnvironmentFiles" in calls and "--no-pager" in calls


def test_a_snapshot_keeps_the_unit_and_replays_it_without_secrets(doctor, fake_bin, tmp_path):
    env_file = tmp_path / "ollama.env"
    env_file.write_text("HF_TOKEN=hf_secret_value\nHIP_VISIBLE_DEVICES=0\n")
    fake_systemctl(fake_bin, tmp_path, files=[(str(env_file), False)])
    out = tmp_path / "snap.json"
    result = doctor("snapshot", "--user-unit", "ollama", "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "hf_secret_value" not in text and "HF_TOKEN=<redacted>" in text
    assert "--user show ollama" in (tmp_path / "calls.txt").read_text()
    replayed = doctor("check", "--from", str(out), "--json", "--no-history")
    findings = {f["id"]: f for f in json.loads(replayed.stdout)["findings"]}
    assert "HIP_VISIBLE_DEVICES" in findings["service-env-differs"]["message"]
    assert "(a user unit)" in json.loads(replayed.stdout)["target"]["environment"]


def test_a_python_exec_start_becomes_the_target_interpreter(doctor, fake_bin, tmp_path):
    fake_systemctl(fake_bin, tmp_path, exec_start=f"{sys.executable} main.py --listen")
    result = doctor("check", "--unit", "ollama", "--no-gpu", "--no-history", "--json")
    document = json.loads(result.stdout)
    assert document["target"]["python"] == sys.executable
    assert document["target"]["reason"] == "the Python that ollama.service's ExecStart runs"


def test_bad_units_and_options_are_one_line(doctor, fake_bin, tmp_path, isolated_env):
    fake_systemctl(fake_bin, tmp_path)
    for args, words in ((["--unit", "nosuch"], "cannot read nosuch: no unit nosuch (systemctl show: LoadState=not-found)"),
                        (["--unit", "a", "--kernel", "b"], "--unit and --kernel: give one of them"),
                        (["--unit", "-x"], "not a unit name"),
                        (["--unit", "ollama", "--from", str(tmp_path / "x.json")], "--unit applies only to a live run")):
        result = doctor("check", *args, "--no-gpu", "--no-history")
        assert result.returncode == 2 and words in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
    bare = tmp_path / "bare"
    bare.mkdir()
    result = doctor("check", "--unit", "ollama", "--no-gpu", "--no-history", env=dict(isolated_env, PATH=str(bare)))
    assert result.returncode == 2 and "systemctl was not found on PATH" in result.stderr


def _kernel(home: Path, name: str, content: str) -> Path:
    folder = home / ".local/share/jupyter/kernels" / name
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(content)
    return folder


def test_a_kernel_is_found_without_jupyter_and_its_python_diagnosed(doctor, tmp_path, isolated_env):
    home = Path(isolated_env["HOME"])
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "Torch",
            "language": "python", "env": {"HIP_VISIBLE_DEVICES": ""}}
    _kernel(home, "Torch-CPU", json.dumps(spec))
    result = doctor("check", "--kernel", "torch-cpu", "--no-gpu", "--no-history", "--json")
    document = json.loads(result.stdout)
    assert document["target"]["python"] == sys.executable
    assert "argv[0] of kernel.json of the Jupyter kernel 'Torch-CPU'" in document["target"]["reason"]
    findings = {f["id"]: f for f in document["findings"]}
    visibility = findings["gpu-visibility-env:HIP_VISIBLE_DEVICES"]
    assert visibility["status"] == "fail" and visibility["message"].startswith("In the Jupyter kernel 'Torch-CPU'")
    step = visibility["fix"][0]
    assert (step["kind"], step["name"], step["value"]) == ("kernel_env", "HIP_VISIBLE_DEVICES", None)
    assert step["path"] == str(home / ".local/share/jupyter/kernels/Torch-CPU/kernel.json")


def test_a_malformed_or_missing_kernel_is_one_line(doctor, fixture_text, isolated_env):
    home = Path(isolated_env["HOME"])
    _kernel(home, "sing", fixture_text("jupyter/singularity-kernel-missing-comma-malformed.json"))
    result = doctor("check", "--kernel", "sing", "--no-gpu", "--no-history")
    assert result.returncode == 2 and "kernel.json is not valid JSON (Expecting ',' delimiter" in result.stderr
    result = doctor("check", "--kernel", "nope", "--no-gpu", "--no-history")
    assert result.returncode == 2 and "no Jupyter kernel named nope in " in result.stderr
    assert "Traceback" not in result.stderr
