"""A corpus of realistic reports with planted secrets and identities: the redacted bundle (JSON and Markdown)
contains none of them, is valid against the report schema, and still replays with `check --from`. And every
output of a live run (check --json, snapshot, report JSON and Markdown, fleet report), with what each may carry
counted."""

import json
import re
from pathlib import Path

import jsonschema
import pytest

from rocm_doctor.diagnose import Options, diagnose
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.observations import FileRecord, Observations
from rocm_doctor.report import bundle, markdown
from rocm_doctor.report.redact import redact

FIXTURES = Path(__file__).parent / "fixtures"

HOME = "/home/alice"
PLANTED_ENV = {
    "USER": "alice", "LOGNAME": "alice", "HOME": HOME, "HOSTNAME": "gpu-box-7.lab.example.net",
    "PATH": f"{HOME}/.local/bin:{HOME}/venvs/torch/bin:/opt/rocm/bin:/usr/bin",
    "VIRTUAL_ENV": f"{HOME}/venvs/torch",
    "HF_TOKEN": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "GITHUB_TOKEN": "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "DB_PASSWORD": "correct horse battery staple",
    "MY_SERVICE_CONFIG": "internal-value-xyz",
    "DEPLOY_SSH_KEY": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAABG5vbmU\nQUFBQUJBQUFBQkFBQUFCQUFBQUI=\n"
                      "-----END OPENSSH PRIVATE KEY-----",
    "PIP_EXTRA_INDEX_URL": "https://deploy:Sup3rS3cretPw@pypi.internal.example/simple",
    "HSA_OVERRIDE_GFX_VERSION": "11.0.0",
    "ROCM_PATH": "/opt/rocm",
}
PLANTED_TEXT = (
    "alice@gpu-box-7:~$ ip addr\n"
    "    inet 10.20.30.40/24 brd 10.20.30.255 scope global eno1\n"
    "    inet6 2001:db8:85a3::8a2e:370:7334/64 scope global\n"
    "    link/ether 3c:7c:3f:aa:bb:cc brd ff:ff:ff:ff:ff:ff\n"
    "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlMTIz' https://hub.example\n"
    "connecting with password correct horse battery staple\n"
    f"Traceback: File \"{HOME}/venvs/torch/lib/python3.12/site-packages/torch/__init__.py\", line 1\n"
    "contact alice.smith@example.org, host gpu-box-7.lab.example.net (192.168.7.21)\n"
)
SERIALS = {
    "rocm-smi": "GPU[0]\t\t: Serial Number: 9A1B2C3D4E5F\nGPU[0]\t\t: Unique ID: 0x59a2b6c8d3e4f5a1\n",
    "amd-smi": "GPU: 0\n    ASIC:\n        ASIC_SERIAL: 0x1F2E3D4C5B6A7988\n    BOARD:\n        PRODUCT_SERIAL: 692237000042\n",
    "nvidia-smi": "    Serial Number                         : 1324520053141\n"
                  "    GPU UUID                              : GPU-5b4b6a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b\n",
}
# rc lines that set a GPU variable and a secret on the same line: the shell_rc probe records such lines
RC_LINES = [
    "export HSA_OVERRIDE_GFX_VERSION=11.0.0 HF_HUB_TOKEN='quoted secret value 1'",
    "export HIP_VISIBLE_DEVICES=0 WANDB_KEY=wandbkey0123456789",
    'export ROCR_VISIBLE_DEVICES=0 DB_PASS=dbpass-planted-7 SMTP_PASSWORD="smtp pass planted"',
    "alias train='HIP_VISIBLE_DEVICES=0 python train.py --wandb-key=wandbflag-planted-9'",
    "alias fetch='CUDA_VISIBLE_DEVICES=0 curl -u deployer:curlpass-planted https://files.example/x'",
    "export HIP_PLATFORM=amd PIP_INDEX_URL=https://builder:urlpass-planted@pypi.internal.example/simple",
]
RC_SECRETS = ["quoted secret value 1", "wandbkey0123456789", "dbpass-planted-7", "smtp pass planted",
              "wandbflag-planted-9", "deployer:curlpass", "curlpass-planted", "builder:urlpass", "urlpass-planted"]
PLANTED = [
    "alice", "gpu-box-7", "lab.example.net", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "ghp_1234567890abcdefghijABCDEFGHIJ123456", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "correct horse battery staple", "internal-value-xyz", "b3BlbnNzaC1rZXktdjEAAAABG5vbmU",
    "QUFBQUJBQUFBQkFBQUFCQUFBQUI=", "Sup3rS3cretPw", "10.20.30.40", "2001:db8:85a3::8a2e:370:7334", "3c:7c:3f:aa:bb:cc",
    "eyJhbGciOiJIUzI1NiJ9", "c2lnbmF0dXJlMTIz", "alice.smith@example.org", "192.168.7.21", "9A1B2C3D4E5F",
    "0x1F2E3D4C5B6A7988", "692237000042", "1324520053141", "5b4b6a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b",
    "43529fe3ce00c724", "362702d6dbbf2d1d", "00ff1900-0000-1000-8000-000000000000", "59a2b6c8d3e4f5a1",
] + RC_SECRETS
ROCMINFO = [
    "rocminfo/linux-cloud-vm-mi300x-vf-gfx942-xeon8568y-rocm7.2.4.txt",
    "rocminfo/linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt",
    "rocminfo/linux-gfx1151-strixhalo-apu-with-npu-agent-rocm7.2.txt",
]


def command(argv, stdout, stderr="", returncode=0):
    return CommandResult(argv=argv, returncode=returncode, stdout=stdout, stderr=stderr, duration_s=0.1)


def observations(rocminfo_fixture: str) -> Observations:
    obs = Observations()
    obs.platform = {"os": "linux", "system": "Linux", "release": "6.8.0-45-generic", "machine": "x86_64",
                    "doctor_executable": f"{HOME}/venvs/torch/bin/python"}
    obs.env = dict(PLANTED_ENV)
    obs.target = {"python": f"{HOME}/venvs/torch/bin/python", "reason": f"VIRTUAL_ENV={HOME}/venvs/torch"}
    obs.add_command("rocminfo", command(["/opt/rocm/bin/rocminfo"], (FIXTURES / rocminfo_fixture).read_text()))
    amd_smi = (FIXTURES / "amd-smi/linux-proxmox-780m-phoenix3-gfx1103-list.txt").read_text()
    obs.add_command("amd-smi-list", command(["amd-smi", "list"], amd_smi + SERIALS["amd-smi"]))
    obs.add_command("rocm-smi-json", command(["rocm-smi", "--showserial"], SERIALS["rocm-smi"]))
    obs.add_command("nvidia-smi", command(["nvidia-smi", "-q"], SERIALS["nvidia-smi"], returncode=0))
    log = (FIXTURES / "logs/amd_log_level/linux-nobara-rx7600xt-gfx1102-override-11.0.0-missing-CO-hipblaslt-then-segfault-torch-rocm6.2.txt").read_text()
    obs.add_command("torch-probe", command([f"{HOME}/venvs/torch/bin/python", "-c", "probe"], "", log + PLANTED_TEXT, -11))
    obs.add_file(FileRecord(path=f"{HOME}/.bashrc", exists=True,
                            content=f"export HF_TOKEN={PLANTED_ENV['HF_TOKEN']}\n" + "\n".join(RC_LINES) + "\n"))
    obs.add_probe("shell.rc", [{"file": "~/.bashrc", "line_no": n, "variable": "HSA_OVERRIDE_GFX_VERSION", "line": line}
                               for n, line in enumerate(RC_LINES, 2)])  # as an older rocm-doctor recorded them
    obs.add_file(FileRecord(path="/etc/hostname", exists=True, content="gpu-box-7\n"))
    obs.add_probe("pci.sysfs", [{"slot": "0000:03:00.0", "serial": "PHX-998877", "vendor": "0x1002"}])
    return obs


def raw_snapshot(obs: Observations) -> dict:
    """A snapshot as a hostile or older tool may hand one over: nothing masked when it was recorded."""
    return {"format": snapshot.FORMAT, "version": snapshot.VERSION, "observations": obs.to_dict()}


def build(tmp_path, fixture, redacted=True):
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(raw_snapshot(observations(fixture))))
    report, facts = diagnose(Options(from_file=path))
    report.stages = {"logs": {"hipblaslt": PLANTED_TEXT * 3}, "kernels": [{"name": "matmul", "outcome": "crash",
                                                                            "stderr": PLANTED_TEXT}]}
    data = bundle.build(report, facts)
    return bundle.redact_bundle(data)[0] if redacted else data


def leaks(text: str) -> list[str]:
    return [value for value in PLANTED if value.lower() in text.lower()]


@pytest.mark.parametrize("fixture", ROCMINFO)
def test_corpus_redacted_json_and_markdown_leak_nothing(tmp_path, fixture, report_schema):
    unredacted = bundle.to_json(build(tmp_path, fixture, redacted=False))
    assert "alice" in unredacted and "ghp_" in unredacted
    data = build(tmp_path, fixture)
    text = bundle.to_json(data)
    assert leaks(text) == []
    assert leaks(markdown.render(data, json_name="report.json")) == []
    jsonschema.validate(data, report_schema)
    assert data["redaction"]["applied"] is True and data["redaction"]["replaced"]
    assert (data["redacted"], json.loads(unredacted)["redacted"]) == (True, False)  # the envelope's word on it


def test_corpus_every_planted_value_was_present(tmp_path):
    text = bundle.to_json(build(tmp_path, ROCMINFO[0], redacted=False)) + bundle.to_json(build(tmp_path, ROCMINFO[1], redacted=False))
    assert leaks(text) == PLANTED  # else the corpus would prove nothing


def test_redacted_report_replays(tmp_path):
    data = build(tmp_path, ROCMINFO[0])
    path = tmp_path / "report.json"
    path.write_text(bundle.to_json(data))
    report, facts = diagnose(Options(from_file=path))
    assert report.findings
    assert facts.observations.env["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"
    assert "GPU-<uuid-1>" in facts.observations.commands["rocminfo"].stdout


def test_own_live_run_redacted(doctor, isolated_env, fake_bin, tmp_path, report_schema):
    """A real `rocm-doctor report` here, with identities and secrets planted in its environment and tools."""
    fake_bin.add("rocminfo", f"cat '{FIXTURES / ROCMINFO[1]}'\ncat <<'EOF'\n{PLANTED_TEXT}EOF\n")
    fake_bin.add("amd-smi", f"cat <<'EOF'\n{SERIALS['amd-smi']}EOF\n")
    home = tmp_path / "home" / "alice"
    home.mkdir(parents=True)
    env = dict(isolated_env, **{k: v for k, v in PLANTED_ENV.items() if k not in ("PATH", "VIRTUAL_ENV")})
    env["HOME"] = str(home)
    env["PATH"] = f"{home}/.local/bin:{isolated_env['PATH']}"
    result = doctor("report", "--format", "both", "-o", "out.md", env=env)
    assert result.returncode == 0, result.stderr
    md = (tmp_path / "out.md").read_text()
    raw = (tmp_path / "out.json").read_text()
    assert leaks(md) == [] and leaks(raw) == []
    assert str(home) not in raw
    data = json.loads(raw)
    jsonschema.validate(data, report_schema)
    assert data["snapshot"]["observations"]["env"]["HOME"] == "~"
    assert "GPU-<uuid-1>" in data["snapshot"]["observations"]["commands"]["rocminfo"]["stdout"]


@pytest.mark.parametrize("fixture, uuids", list(zip(ROCMINFO, (3, 3, 2))))
def test_corpus_counts_each_kind_once_per_value(tmp_path, fixture, uuids):
    """Distinct values replaced per kind: 5 secret env values and the 5 secret rc-line values (the curl and URL
    credentials are masked, not numbered), one user, one host (FQDN and short name), four addresses..."""
    _, redactor = redact(build(tmp_path, fixture, redacted=False))
    assert redactor.counts() == {"email": 1, "host": 1, "ip": 4, "mac": 2, "secret": 10, "serial": 6, "token": 1,
                                 "user": 1, "uuid": uuids}


def secrets_in(text: str) -> list[str]:
    secret_values = [v for k, v in PLANTED_ENV.items() if k.endswith(("TOKEN", "KEY", "PASSWORD"))]
    return [value for value in RC_SECRETS + secret_values if value.splitlines()[0] in text]


def test_every_output_of_a_live_run(doctor, isolated_env, fake_bin, tmp_path):
    """check --json, snapshot, report JSON and Markdown, fleet report: the rc-line secrets are in none (the probe
    masks them before it records a line), nor the secret env values (a snapshot masks them when it is written);
    the ticket outputs carry no planted value at all."""
    fake_bin.add("rocminfo", f"cat '{FIXTURES / ROCMINFO[1]}'\n")
    home = tmp_path / "home" / "alice"
    home.mkdir(parents=True)
    (home / ".bashrc").write_text("\n".join(RC_LINES) + "\n")
    env = dict(isolated_env, **{k: v for k, v in PLANTED_ENV.items() if k not in ("PATH", "VIRTUAL_ENV")})
    env.update(HOME=str(home), PATH=f"{home}/.local/bin:{isolated_env['PATH']}")
    check = doctor("check", "--json", "--no-history", env=env)
    assert check.returncode in (0, 1), check.stderr
    (tmp_path / "node-a.json").write_text(check.stdout)
    (tmp_path / "node-b.json").write_text(check.stdout)
    assert doctor("snapshot", "-o", "snap.json", env=env).returncode == 0
    assert doctor("report", "--format", "both", "-o", "out.md", env=env).returncode == 0
    fleet = doctor("fleet", "diff", "node-a.json", "node-b.json", "--json", env=env)
    assert fleet.returncode in (0, 1), fleet.stderr
    outputs = {"check --json": check.stdout, "snapshot": (tmp_path / "snap.json").read_text(),
               "report JSON": (tmp_path / "out.json").read_text(), "report Markdown": (tmp_path / "out.md").read_text(),
               "fleet": fleet.stdout}
    found = {name: secrets_in(text) for name, text in outputs.items()}
    assert {name: len(values) for name, values in found.items()} == {
        "check --json": 0, "snapshot": 0, "report JSON": 0, "report Markdown": 0, "fleet": 0}
    assert not any(set(values) & set(RC_SECRETS) for values in found.values())
    snap_rc = json.loads(outputs["snapshot"])["observations"]["probes"]["shell.rc"]
    assert [hit["line"] for hit in snap_rc][0] == "export HSA_OVERRIDE_GFX_VERSION=11.0.0 HF_HUB_TOKEN='<redacted>'"
    assert leaks(outputs["report JSON"]) == [] and leaks(outputs["report Markdown"]) == []
    for name in ("report JSON", "report Markdown"):
        assert "alice" not in outputs[name] and "gpu-box-7" not in outputs[name]


def test_fleet_node_reports_name_secret_variables_only_as_set():
    from rocm_doctor.distributed import fleet
    from rocm_doctor.knowledge.collectives_env import relevant_env

    env = {"NCCL_DEBUG": "INFO", "HIP_API_KEY": "hip-key-planted-1", "NCCL_IB_PASSWORD": "ib-pass-planted-2"}
    nodes = [fleet.node_report({"findings": []}, {"env": relevant_env(dict(env, NCCL_DEBUG=level))}, {"host": name})
             for name, level in (("n1", "INFO"), ("n2", "WARN"))]
    text = json.dumps(fleet.diff(nodes))
    assert "hip-key-planted-1" not in text and "ib-pass-planted-2" not in text
    assert nodes[0]["summary"]["env"] == {"HIP_API_KEY": "<redacted>", "NCCL_DEBUG": "INFO",
                                         "NCCL_IB_PASSWORD": "<redacted>"}


WORDY_LOG = ("torch@rocm:~$ pip install --index-url https://rocm.nightlies.amd.com/v2/gfx110X-dgpu/ torch\n"
             "MIOpen version 3.3.0.0\nDriver Version: 24.10.1.2\nJan 05 10:00:00 rocm kernel: amdgpu: ring timeout\n")


def test_a_host_named_rocm_and_a_user_named_torch(tmp_path):
    """The names are hidden where they are names; the domain's words, URLs, check ids and versions survive."""
    raw = json.loads((Path(__file__).parent / "snapshots" / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json")
                     .read_text())
    raw["observations"]["env"].update(USER="torch", HOSTNAME="rocm", HOME="/home/torch")
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(raw))
    report, facts = diagnose(Options(from_file=path))
    report.stages = {"logs": {"session": WORDY_LOG}}
    plain = bundle.build(report, facts)
    data = bundle.redact_bundle(plain)[0]
    text, page = bundle.to_json(data), markdown.render(data, json_name="report.json")
    assert "gfx-not-in-torch-arch-list" in text and "gfx-not-in-torch-arch-list" in page
    assert data["stages"]["logs"]["session"] == WORDY_LOG.replace("torch@rocm", "<user>@<host>").replace(
        "10:00:00 rocm", "10:00:00 <host>")
    env = data["snapshot"]["observations"]["env"]
    assert (env["USER"], env["HOSTNAME"], env["HOME"]) == ("<user>", "<host>", "~")
    words = lambda doc, word: len(re.findall(rf"\b{word}\b", doc))  # noqa: E731
    plain_text = bundle.to_json(plain)
    assert words(text, "torch") == words(plain_text, "torch") - 3  # USER, HOME (now ~), the log's prompt
    assert words(text, "rocm") == words(plain_text, "rocm") - 3  # HOSTNAME, the prompt, the syslog host field


WINDOWS_PLANTED = {"USERDOMAIN": "CONTOSO", "USERDNSDOMAIN": "CORP.CONTOSO.COM", "LOGONSERVER": "\\\\CONTOSO-DC01",
                   "COMPUTERNAME": "ANA-LAPTOP", "OneDrive": "C:\\Users\\ana\\OneDrive - Fabrikam Ltd",
                   "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567"}


def test_windows_registry_and_process_scope(tmp_path):
    raw = json.loads((Path(__file__).parent / "snapshots" / "windows-env-scopes.json").read_text())
    observations = raw["observations"]
    observations["env"].update(WINDOWS_PLANTED)
    observations["env"]["PATH"] += ";C:\\Users\\ana\\OneDrive - Fabrikam Ltd\\tools"
    values = observations["probes"]["windows.registry.env"]["HKCU\\Environment"]["values"]
    values.update(HF_TOKEN={"value": PLANTED_ENV["HF_TOKEN"], "type": "REG_SZ"},
                  MY_SETTING={"value": "internal-value-xyz", "type": "REG_SZ"},
                  DB_PASS={"value": "registry-pass-planted", "type": "REG_SZ"})
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(raw))
    report, facts = diagnose(Options(from_file=path))
    report.stages = {"logs": {"session": "CONTOSO\\ana logged on at \\\\CONTOSO-DC01 (corp.contoso.com)"}}
    data = bundle.redact_bundle(bundle.build(report, facts))[0]
    text = bundle.to_json(data) + markdown.render(data, json_name="report.json")
    assert data["stages"]["logs"]["session"] == "<domain>\\<user> logged on at \\\\<host> (<domain-2>)"
    planted = ["CONTOSO", "ANA-LAPTOP", "Fabrikam", "C:\\\\Users\\\\ana", "hf_AbCd", "internal-value-xyz",
               "registry-pass-planted", "0123456789abcdef"]
    assert [value for value in planted if value.lower() in text.lower()] == []
    _, redactor = redact(bundle.build(report, facts))
    # the Windows device-class GUID of display adapters counts as a uuid
    assert redactor.counts() == {"domain": 2, "host": 2, "org": 1, "secret": 3, "user": 1, "uuid": 1}
