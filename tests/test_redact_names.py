"""Names that are words of the domain are replaced only where they stand as names; versions are not addresses;
Windows scopes and registry values are environments; rc lines are read as shell."""

import json

import pytest

from rocm_doctor.report.redact import Identities, redact


def one(text, **ids):
    out, _ = redact({"text": text}, Identities(**ids))
    return out["text"]


@pytest.mark.parametrize("text", [
    "MIOpen version 3.3.0.0", "Driver Version: 24.10.1.2", '{"version": "3.3.0.0"}', "amdgpu 6.8.5.3 loaded",
    "rocBLAS 4.3.0.1 found", "Firmware: 1.2.3.4",
])
def test_four_part_versions_are_not_addresses(text):
    assert one(text) == text


def test_an_address_is_still_an_address():
    assert one("inet 24.10.1.2/24 and peer 3.3.0.1") == "inet <ip-1>/24 and peer <ip-2>"


@pytest.mark.parametrize("text", [
    "pip install --index-url https://rocm.nightlies.amd.com/v2/gfx110X-dgpu/ torch",
    "rocm-doctor explain gfx-not-in-torch-arch-list", "/opt/rocm/lib/librocblas.so",
    "/home/x/venv/lib/python3.12/site-packages/torch/__init__.py", "torch 2.5.1+rocm6.2", "ROCm 6.2 and rocm-smi",
])
def test_word_like_names_leave_the_domain_alone(text):
    assert one(text, users=["torch"], hosts=["rocm"]) == text


@pytest.mark.parametrize("text, expected", [
    ("torch@rocm:~$ ls", "<user>@<host>:~$ ls"),
    ("/home/torch/venv", "/home/<user>/venv"),
    ("uid=1000(torch) gid=1000(torch)", "uid=1000(<user>) gid=1000(<user>)"),
    ("USER=torch HOSTNAME=rocm", "USER=<user> HOSTNAME=<host>"),
    ("hostname rocm", "hostname <host>"),
    ("Jan 05 10:00:00 rocm kernel: amdgpu: ring gfx timeout", "Jan 05 10:00:00 <host> kernel: amdgpu: ring gfx timeout"),
    ("C:\\Users\\torch\\venv", "C:\\Users\\<user>\\venv"),
])
def test_word_like_names_are_replaced_where_they_are_names(text, expected):
    assert one(text, users=["torch"], hosts=["rocm"]) == expected


def test_a_value_that_is_the_name_alone_under_a_name_key():
    data = {"files": {"/etc/hostname": {"path": "/etc/hostname", "content": "rocm\n"}},
            "torch": {"flavour": "rocm"}, "platform": {"node": "rocm", "user": "torch"}}
    out, _ = redact(data, Identities(hosts=["rocm"], users=["torch"]))
    assert out == {"files": {"/etc/hostname": {"path": "/etc/hostname", "content": "<host>\n"}},
                   "torch": {"flavour": "rocm"}, "platform": {"node": "<host>", "user": "<user>"}}


def test_distinctive_names_are_still_replaced_anywhere():
    assert one("alice ran it on gpu-box-7 for alice", users=["alice"], hosts=["gpu-box-7"]) == \
        "<user> ran it on <host> for <user>"


WINDOWS = {
    "facts": {"values": {"windows.env.scopes": {
        "process": {"USERDOMAIN": "CONTOSO", "USERNAME": "ana", "COMPUTERNAME": "ANA-LAPTOP",
                    "ONEDRIVE": "C:\\Users\\ana\\OneDrive - Contoso Ltd", "HF_TOKEN": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
                    "HIP_PATH": "C:\\Program Files\\AMD\\ROCm\\6.2\\"},
        "user": {"MY_SETTING": {"name": "MY_SETTING", "value": "internal-value-xyz", "type": "REG_SZ",
                                "expanded": "internal-value-xyz", "unresolved": []}},
        "machine": {"HIP_PATH": {"name": "HIP_PATH", "value": "C:\\Program Files\\AMD\\ROCm\\6.2\\",
                                 "type": "REG_SZ", "expanded": "C:\\Program Files\\AMD\\ROCm\\6.2\\", "unresolved": []}},
    }}},
    "snapshot": {"observations": {"probes": {"windows.registry.env": {"HKCU\\Environment": {"values": {
        "WANDB_API_KEY": {"value": "wandb-value-planted", "type": "REG_SZ"},
        "TEMP": {"value": "%USERPROFILE%\\AppData\\Local\\Temp", "type": "REG_EXPAND_SZ"},
        "Count": {"value": 3, "type": "REG_DWORD"}}, "complete": True}}}}},
    "log": "CONTOSO\\ana logged on to \\\\CONTOSO-DC01 from ANA-LAPTOP; files in C:\\Users\\ana\\OneDrive - Contoso Ltd\\x",
}


def test_windows_scopes_and_registry_values_are_environments():
    out, redactor = redact(json.loads(json.dumps(WINDOWS)), Identities(hosts=["CONTOSO-DC01"]))
    scopes = out["facts"]["values"]["windows.env.scopes"]
    assert scopes["process"]["USERDOMAIN"] == "<redacted>" and scopes["process"]["ONEDRIVE"] == "<redacted>"
    assert scopes["process"]["HF_TOKEN"].startswith("<secret-") and scopes["process"]["USERNAME"] == "<user>"
    assert scopes["process"]["HIP_PATH"] == "C:\\Program Files\\AMD\\ROCm\\6.2\\"
    assert scopes["user"]["MY_SETTING"]["value"] == "<redacted>" and scopes["user"]["MY_SETTING"]["expanded"] == "<redacted>"
    assert scopes["machine"]["HIP_PATH"]["value"] == "C:\\Program Files\\AMD\\ROCm\\6.2\\"
    values = out["snapshot"]["observations"]["probes"]["windows.registry.env"]["HKCU\\Environment"]["values"]
    assert values["WANDB_API_KEY"]["value"].startswith("<secret-") and values["Count"]["value"] == 3
    text = json.dumps(out)
    for planted in ("CONTOSO", "Contoso", "ana", "ANA-LAPTOP", "hf_AbCd", "internal-value-xyz", "wandb-value-planted"):
        assert planted not in text.replace("Manager", "")
    assert out["log"] == ("<domain>\\<user> logged on to \\\\<host-2> from <host>; "
                          "files in C:\\Users\\<user>\\OneDrive - <org>\\x")
    assert redactor.counts() == {"domain": 1, "host": 2, "org": 1, "secret": 2, "user": 1}


@pytest.mark.parametrize("line, secret, placeholder", [
    ("export HSA_OVERRIDE_GFX_VERSION=11.0.0 HF_HUB_TOKEN='quoted secret value 1'", "quoted secret value 1",
     "<secret-1>"),
    ("export HIP_VISIBLE_DEVICES=0 WANDB_KEY=wandbkey0123456789", "wandbkey0123456789", "<secret-1>"),
    ("export ROCR_VISIBLE_DEVICES=0 DB_PASS=dbpass-planted-7", "dbpass-planted-7", "<secret-1>"),
    ('export SMTP_PASSWORD="smtp pass planted"', "smtp pass planted", "<secret-1>"),
    ("alias train='HIP_VISIBLE_DEVICES=0 python train.py --wandb-key=wandbflag-planted-9'", "wandbflag-planted-9",
     "<secret-1>"),
    ("alias fetch='curl -u deployer:curlpass-planted https://files.example/x'", "deployer:curlpass-planted",
     "<redacted>"),
])
def test_rc_lines_are_read_as_shell(line, secret, placeholder):
    out = one(line)
    assert secret not in out and out.replace(placeholder, secret) == line
