"""Redaction rules one by one: what is replaced, that placeholders are consistent, and what must survive."""

import json

import pytest

from rocm_doctor.report.redact import Identities, redact


def one(text, **ids):
    out, redactor = redact({"text": text}, Identities(**ids))
    return out["text"], redactor


@pytest.mark.parametrize("text, hidden", [
    ("inet 192.168.1.23/24 brd 192.168.1.255", "192.168.1.23"),
    ("addr fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff:fe23:4567:890a"),
    ("inet6 2001:db8:85a3::8a2e:370:7334/64", "2001:db8:85a3::8a2e:370:7334"),
    ("link/ether 3c:7c:3f:aa:bb:cc brd ff:ff:ff:ff:ff:ff", "3c:7c:3f:aa:bb:cc"),
    ("  Uuid:                    GPU-43529fe3ce00c724   ", "43529fe3ce00c724"),
    ("GPU 0: NVIDIA H200 (UUID: GPU-5b4b6a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b)", "5b4b6a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"),
    ("    UUID: 00ff1900-0000-1000-8000-000000000000", "00ff1900-0000-1000-8000-000000000000"),
    ("        ASIC_SERIAL: 0x1F2E3D4C5B6A7988", "0x1F2E3D4C5B6A7988"),
    ("GPU[0]\t\t: Serial Number: 9A1B2C3D4E5F", "9A1B2C3D4E5F"),
    ("    Serial Number                         : 1324520053141", "1324520053141"),
    ('{"card0": {"Serial Number": "692237000000"}}', "692237000000"),
    ("pip install --index-url https://deploy:Sup3rS3cret@pypi.internal.example/simple", "Sup3rS3cret"),
    ("token ghp_1234567890abcdefghijABCDEFGHIJ123456 used", "ghp_1234567890abcdefghijABCDEFGHIJ123456"),
    ("HF hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    ("Authorization: Bearer abc.DEF-123_456789xyz", "abc.DEF-123_456789xyz"),
    ("export DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ('{"api_key": "k-77777777"}', "k-77777777"),
    ("mail alice@example.org now", "alice@example.org"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAA"),
])
def test_patterns_hide_the_value(text, hidden):
    out, redactor = one(text)
    assert hidden not in out and hidden.lower() not in out.lower()
    assert redactor.redactions


@pytest.mark.parametrize("text", [
    "HIP version: 6.2.41133-dd7f95766", "torch 2.5.1+rocm6.2", "gfx1100:sramecc-:xnack-", "Runtime Version: 1.1",
    "ROCk module version 6.16.13 is loaded", "12:34:56 elapsed", "std::vector<int>::at", "bind ::1 and 127.0.0.1",
    "  Uuid:                    GPU-XX  ", "        ASIC_SERIAL: 0x0000000000000000", "PRODUCT_SERIAL: N/A",
    "SMC VERSION: 00.85.108.00", "HSA_OVERRIDE_GFX_VERSION=11.0.0", "Compute Unit: 60", "Marketing Name: AMD Radeon RX 7900 XTX",
])
def test_ordinary_text_survives(text):
    out, _ = one(text)
    assert out == text


def test_same_value_same_placeholder_everywhere():
    data = {"a": "from 10.0.0.7 to 10.0.0.8", "b": ["10.0.0.8 then 10.0.0.7"], "c": {"10.0.0.7": "key too"}}
    out, _ = redact(data)
    assert out["a"] == "from <ip-1> to <ip-2>"
    assert out["b"] == ["<ip-2> then <ip-1>"]
    assert out["c"] == {"<ip-1>": "key too"}


def test_user_home_and_host_from_the_environment():
    data = {"observations": {
        "env": {"USER": "alice", "HOME": "/home/alice", "HOSTNAME": "gpu-box-7.lab.example.net",
                "PATH": "/home/alice/.local/bin:/opt/rocm/bin", "LD_LIBRARY_PATH": "/home/alice/rocm/lib"},
        "files": {"/home/alice/.bashrc": {"path": "/home/alice/.bashrc", "content": "# alice on gpu-box-7\n"}},
        "log": "alice@gpu-box-7:~$ ls /home/bob/shared; ssh GPU-BOX-7.lab.example.net",
    }}
    out, _ = redact(data)
    obs = out["observations"]
    assert obs["env"]["USER"] == "<user>" and obs["env"]["HOME"] == "~" and obs["env"]["HOSTNAME"] == "<host>"
    assert obs["env"]["PATH"] == "~/.local/bin:/opt/rocm/bin"
    assert obs["files"] == {"~/.bashrc": {"path": "~/.bashrc", "content": "# <user> on <host>\n"}}
    assert obs["log"] == "<user>@<host>:~$ ls /home/<user-2>/shared; ssh <host>"


def test_windows_profile_is_home():
    data = {"env": {"USERPROFILE": "C:\\Users\\Alice", "USERNAME": "Alice"}, "t": "C:\\Users\\Alice\\venv\\Scripts\\python.exe"}
    out, _ = redact(data)
    assert out["t"] == "~\\venv\\Scripts\\python.exe"
    assert out["env"]["USERNAME"] == "<user>"


def test_env_policy():
    env = {
        "HSA_OVERRIDE_GFX_VERSION": "11.0.0", "ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx1100",
        "MIOPEN_FIND_MODE": "2", "HIP_API_KEY": "looks-allowed-but-named-key",
        "GITHUB_TOKEN": "ghp_1234567890abcdefghijABCDEFGHIJ123456", "SESSION_MANAGER": "local/alice:@/tmp/.ICE",
        "MY_APP_SETTING": "plain value", "RANDOM_BLOB": "Zx81kQ2mN7pL4vR9tY3w",
        "MULTI": "line one\nline two",
    }
    out, redactor = redact({"env": env})
    e = out["env"]
    assert e["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0" and e["ROCM_PATH"] == "/opt/rocm"
    assert e["PYTORCH_ROCM_ARCH"] == "gfx1100" and e["MIOPEN_FIND_MODE"] == "2"
    assert e["HIP_API_KEY"].startswith("<secret-") and e["GITHUB_TOKEN"].startswith("<secret-")
    assert e["SESSION_MANAGER"].startswith("<secret-")
    assert e["MY_APP_SETTING"] == "<redacted>" and e["MULTI"] == "<redacted>"
    assert e["RANDOM_BLOB"].startswith("<secret-")
    kinds = {r.path: r.kinds for r in redactor.redactions}
    assert kinds["$.env.GITHUB_TOKEN"] == ["env-secret"] and kinds["$.env.MY_APP_SETTING"] == ["env-value"]


def test_secret_env_values_are_hidden_wherever_they_appear():
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9Q2xk\nY3Q5c2VjcmV0LWxpbmUtdHdv\n-----END RSA PRIVATE KEY-----"
    data = {
        "snapshot": {"observations": {"env": {"DB_PASSWORD": "correct horse battery staple", "DEPLOY_KEY": pem}}},
        "stages": {"log": "connecting with correct horse battery staple\nline Y3Q5c2VjcmV0LWxpbmUtdHdv seen"},
    }
    out, _ = redact(data)
    text = json.dumps(out)
    for secret in ("correct horse battery staple", "MIIEowIBAAKCAQEA7bq9Q2xk", "Y3Q5c2VjcmV0LWxpbmUtdHdv"):
        assert secret not in text
    secret = out["snapshot"]["observations"]["env"]["DB_PASSWORD"]
    assert out["stages"]["log"].startswith(f"connecting with {secret}")


def test_serial_and_uuid_keys_in_structured_values():
    data = {"gpus": [{"serial": "PHX-12345678", "uuid": "GPU-43529fe3ce00c724", "name": "MI300X"},
                     {"serial_number": "N/A", "uuid": "GPU-XX"}]}
    out, _ = redact(data)
    assert out["gpus"][0] == {"serial": "<serial-1>", "uuid": "GPU-<uuid-1>", "name": "MI300X"}
    assert out["gpus"][1] == {"serial_number": "N/A", "uuid": "GPU-XX"}


def test_redactions_name_places_not_values():
    out, redactor = redact({"env": {"GITHUB_TOKEN": "ghp_1234567890abcdefghijABCDEFGHIJ123456"}, "t": "ip 10.1.2.3"})
    listed = json.dumps([r.to_dict() for r in redactor.redactions])
    assert "ghp_" not in listed and "10.1.2.3" not in listed
    assert {r.path for r in redactor.redactions} == {"$.env.GITHUB_TOKEN", "$.t"}


def test_redaction_is_idempotent():
    data = {"env": {"USER": "alice", "HOME": "/home/alice"}, "t": "alice 10.1.2.3 GPU-43529fe3ce00c724 /home/alice/x"}
    once, _ = redact(data)
    twice, redactor = redact(once)
    assert twice == once
