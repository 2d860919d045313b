"""The shell grammar for secrets in rc lines: quoted values whole, alias bodies read again, references kept."""

import pytest

from rocm_doctor.parsers.shell_secrets import mask, secret_name, spans


@pytest.mark.parametrize("line, masked", [
    ("export HSA_OVERRIDE_GFX_VERSION=10.3.0 HF_TOKEN='a b c'",
     "export HSA_OVERRIDE_GFX_VERSION=10.3.0 HF_TOKEN='<redacted>'"),
    ('export DB_PASS="hunter 2" HIP_VISIBLE_DEVICES=0', 'export DB_PASS="<redacted>" HIP_VISIBLE_DEVICES=0'),
    ("export MY_PASSWORD=$'sec\\'ret'", "export MY_PASSWORD=$'<redacted>'"),
    ("export OPENAI_KEY=plain HIP_VISIBLE_DEVICES=1", "export OPENAI_KEY=<redacted> HIP_VISIBLE_DEVICES=1"),
    ("alias train='WANDB_API_KEY=abc123 python train.py --wandb-key=k3y --lr 3'",
     "alias train='WANDB_API_KEY=<redacted> python train.py --wandb-key=<redacted> --lr 3'"),
    ("python train.py --hf-token abc --epochs 3 --use-auth --x 1",
     "python train.py --hf-token <redacted> --epochs 3 --use-auth --x 1"),
    ("HIP_VISIBLE_DEVICES=0 curl -u alice:pa55 https://x", "HIP_VISIBLE_DEVICES=0 curl -u <redacted> https://x"),
    ("curl -ualice:pa55 https://x", "curl -u<redacted> https://x"),
    ("curl --user=bob:pw x", "curl --user=<redacted> x"),
    ('ROCR_VISIBLE_DEVICES=0 sh -c "curl --user bob:pw https://h"',
     'ROCR_VISIBLE_DEVICES=0 sh -c "curl --user <redacted> https://h"'),
    ("pip install --index-url https://deploy:S3cr3t@pypi.example/simple torch",
     "pip install --index-url https://<redacted>@pypi.example/simple torch"),
    ("set -gx HF_TOKEN hf_xyz", "set -gx HF_TOKEN <redacted>"),
    ("setx HF_TOKEN hf_xyz", "setx HF_TOKEN <redacted>"),
    ("set HF_TOKEN=hf_xyz", "set HF_TOKEN=<redacted>"),
    ('$env:HF_TOKEN = "hf_xyz"', '$env:HF_TOKEN = "<redacted>"'),
])
def test_secret_values_are_masked_whole(line, masked):
    assert mask(line) == masked


@pytest.mark.parametrize("line", [
    "export HSA_OVERRIDE_GFX_VERSION=10.3.0", "export HSA_OVERRIDE_GFX_VERSION=10.3.0\r",
    "export HF_TOKEN=$(cat ~/.hf)", "export HF_TOKEN=${SECRET_FROM_VAULT}", "export HF_TOKEN=$TOKEN",
    "HF_TOKEN=<secret-1>", "sudo -u alice python", "docker run -u 1000:1000 img", "git clone ssh://git@github.com/x",
    "export PATH=/opt/rocm/bin:$PATH", "export KEYMAP=us", "ls --sort-key", "echo pass the test",
])
def test_what_is_no_secret_is_kept(line):
    assert mask(line) == line


def test_names_that_say_secret():
    assert all(secret_name(n) for n in ("HF_TOKEN", "WANDB_KEY", "DB_PASS", "SMTP_PASSWORD", "GITHUB_PAT", "hftoken",
                                         "wandb-key", "AWS_SECRET_ACCESS_KEY", "MY_CREDENTIALS"))
    assert not any(secret_name(n) for n in ("HSA_OVERRIDE_GFX_VERSION", "KEYBOARD", "PATH", "PWD", "SSH_AUTH_SOCK",
                                             "NCCL_IB_PKEY", "BYPASS_CACHE", "HIP_VISIBLE_DEVICES"))


def test_spans_say_what_they_are_and_do_not_overlap():
    line = "alias f='curl -u a:b https://c:d@e.example/x --api-key=k'"
    found = spans(line)
    assert [s.kind for s in found] == ["user-password", "url-userinfo", "option"]
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))


def test_an_unclosed_quote_runs_to_the_end_of_the_line():
    assert mask("export HF_TOKEN='never closed\nexport HIP_VISIBLE_DEVICES=0") == \
        "export HF_TOKEN=<redacted>\nexport HIP_VISIBLE_DEVICES=0"
