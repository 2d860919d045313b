"""Secrets where a value says what it is: a service's or kernel's environment in `diff` (human, JSON, Markdown),
an argv whose option and value are two words, a unit's Environment=/ExecStart=, a kernel.json, a command line
from /proc or an SMI tool, rc forms (MYSQL_PWD=, -pPASS, sshpass -p, twine -p), a kernel command line's
rd.luks.key=, a multi-string registry value, fleet reports, snapshots and the run history."""

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from rocm_doctor.engine.registry import load_registry
from rocm_doctor.facts import snapshot
from rocm_doctor.history import rundiff, sides, store
from rocm_doctor.parsers import secret_values
from rocm_doctor.parsers.shell_secrets import mask
from rocm_doctor.report import diff_render
from rocm_doctor.report.redact import redact

KERNEL = Path(__file__).parent / "snapshots" / "linux-rx6600xt-gfx1032-jupyter-kernel-runs-another-interpreters-cpu-torch.json"


def kernel_run(n: int) -> dict:
    """The Jupyter case, its kernel.json given secrets: in its env, in a value that is an option, in its argv."""
    raw = json.loads(KERNEL.read_text())
    files = raw["observations"]["files"]
    path = next(p for p in files if p.endswith("kernel.json"))
    spec = json.loads(files[path]["content"])
    spec["argv"] += ["--password", f"argvpass-planted-{n}"]
    spec["env"] = {"AWS_SECRET_ACCESS_KEY": f"awskey-planted-{n}", "EXTRA_ARGS": f"--password extra-planted-{n}",
                   "HIP_VISIBLE_DEVICES": "0"}
    files[path]["content"] = json.dumps(spec, indent=1)
    return raw


PLANTED_WORDS = ("argvpass-planted", "awskey-planted", "extra-planted")


def test_diff_prints_no_secret_of_a_kernel_in_any_format(tmp_path):
    a = rundiff.judge(sides.Side(snapshot.from_dict(kernel_run(1)), "a.json", created_at="2026-02-18T10:00:00+00:00"))
    b = rundiff.judge(sides.Side(snapshot.from_dict(kernel_run(2)), "b.json", created_at="2026-02-19T10:00:00+00:00"))
    doc = rundiff.document(a, b, load_registry().checks, tmp_path)
    out = io.StringIO()
    diff_render.render_human(doc, Console(file=out, width=200))
    outputs = {"json": json.dumps(doc), "human": out.getvalue(), "markdown": diff_render.render_markdown(doc)}
    assert {name: [w for w in PLANTED_WORDS if w in text] for name, text in outputs.items()} == {
        "json": [], "human": [], "markdown": []}
    changed = {item["field"]: item for item in doc["changes"]}
    secret = changed["run.env.env.AWS_SECRET_ACCESS_KEY"]
    assert (secret["before"], secret["after"]) == ("<secret-1>", "<secret-2>")  # it changed, and says so
    assert changed["run.env.env.EXTRA_ARGS"]["hidden"] is True


@pytest.mark.parametrize("line, masked", [
    ('Environment=AWS_SECRET_ACCESS_KEY=k1 "HF_TOKEN=a b" HIP_VISIBLE_DEVICES=0',
     'Environment=AWS_SECRET_ACCESS_KEY=<redacted> "HF_TOKEN=<redacted>" HIP_VISIBLE_DEVICES=0'),
    ('Environment="DB_PASSWORD=x y"', 'Environment="DB_PASSWORD=<redacted>"'),
    ("ExecStart=/usr/bin/serve --port 8080 -p hunter2", "ExecStart=/usr/bin/serve --port 8080 -p <redacted>"),
    ("export MYSQL_PWD=hunter2", "export MYSQL_PWD=<redacted>"),
    ("mysql -uroot -pS3cret db", "mysql -uroot -p<redacted> db"),
    ("sshpass -p hunter2 ssh host", "sshpass -p <redacted> ssh host"),
    ("twine upload -u me -p hunter2 dist/x.whl", "twine upload -u me -p <redacted> dist/x.whl"),
    ("redis-cli -a hunter2 ping", "redis-cli -a <redacted> ping"),
    ("BOOT_IMAGE=/vmlinuz rd.luks.key=/keys/root.key:UUID=1 quiet", "BOOT_IMAGE=/vmlinuz rd.luks.key=<redacted> quiet"),
    ("HF_TOKEN = hf_planted", "HF_TOKEN = <redacted>"),
    ("python\0train.py\0--password\0hunter2", "python\0train.py\0--password\0<redacted>"),  # /proc/PID/cmdline
])
def test_the_forms_a_secret_takes_in_units_rc_files_and_command_lines(line, masked):
    assert mask(line) == masked


@pytest.mark.parametrize("line", ["docker run -p 8080:80 img", "ssh -p 22 host", "mkdir -p /run/x",
                                  "ls -a /tmp", "python -p $PORT"])
def test_a_short_option_that_is_no_password_is_kept(line):
    assert mask(line) == line


def hostile_bundle() -> dict:
    kernel = json.dumps({"argv": ["python", "-m", "ipykernel", "--hf-token", "hftok-planted-1", "-f", "{c}"],
                         "env": {"EXTRA_ARGS": "--password extra-planted-1", "WANDB_API_KEY": "wandb-planted-1"}})
    return {
        "facts": {"values": {"run.env": {"env": {"SERVICE_DB_PASSWORD": "svc-planted-1"},
                                         "argv": ["/usr/bin/serve", "--api-key", "argvkey-planted-1"]}}},
        "findings": [{"id": "x", "message": "the service runs `serve --password findpass-planted-1`"}],
        "snapshot": {"observations": {
            "files": {"/k/kernel.json": {"path": "/k/kernel.json", "content": kernel},
                      "/etc/default/svc": {"path": "/etc/default/svc", "content": "HF_TOKEN = envfile-planted-1\n"}},
            "commands": {"systemctl-cat": {"argv": ["systemctl", "cat", "svc"], "stdout":
                         "[Service]\nEnvironment=API_TOKEN=unit-planted-1 HIP_VISIBLE_DEVICES=0\n"
                         "ExecStart=/usr/bin/serve -p unitpass-planted-1\n"},
                         "cmdline": {"argv": ["cat"], "stdout": "python\0serve.py\0--password\0proc-planted-1"}},
            "probes": {"gpu.processes": [{"pid": 7, "name": "python", "cmdline": ["python", "x.py", "--token",
                                                                                  "smi-planted-1"]}],
                       "windows.registry.env": {"HKCU\\Environment": {"values": {
                           "DB_PASS": {"value": ["multi-planted-1", "multi-planted-2"], "type": "REG_MULTI_SZ"}}}},
                       "linux.kernel_cmdline": {"raw": "root=/dev/sda1 rd.luks.key=/k/luks-planted-1.key"}},
        }},
    }


def planted(text: str) -> list[str]:
    import re
    return sorted(set(re.findall(r"[a-z]+-planted-\d", text)))


def test_report_redaction_reads_values_by_what_they_are():
    data = hostile_bundle()
    assert len(planted(json.dumps(data))) == 14
    assert planted(json.dumps(redact(data)[0])) == []


def test_record_time_masking_leaves_no_secret_in_a_snapshot_or_the_history():
    data = hostile_bundle()
    masked = secret_values.mask_structure(data)
    assert planted(json.dumps(masked)) == []
    kernel = json.loads(masked["snapshot"]["observations"]["files"]["/k/kernel.json"]["content"])
    assert kernel["argv"][3:5] == ["--hf-token", "<redacted>"] and kernel["env"]["WANDB_API_KEY"] == "<redacted>"
    # what is no secret is kept for a local replay
    assert masked["snapshot"]["observations"]["probes"]["gpu.processes"][0]["cmdline"][:2] == ["python", "x.py"]


def test_a_stored_run_holds_no_secret_of_the_environment(tmp_path):
    from rocm_doctor.diagnose import replay

    raw = kernel_run(1)
    raw["observations"]["env"]["GITHUB_TOKEN"] = "ghtoken-planted-1"
    obs = snapshot.from_dict(raw)
    report, _ = replay(obs, "test")
    assert store.record(tmp_path, report, obs) is None
    text = "".join(p.read_text() for p in store.folder(tmp_path).iterdir())
    assert [w for w in ("ghtoken-planted", *PLANTED_WORDS) if w in text] == []
    assert "HIP_VISIBLE_DEVICES" in text


def test_fleet_report_carries_no_secret_of_a_node():
    from rocm_doctor.distributed import fleet

    nodes = [fleet.node_report({"findings": [{"check": "c", "status": "warn",
                                              "message": f"index https://u:fleetpass-planted-{n}@pypi.example/simple"},
                                             {"check": "d", "status": "ok", "evidence": f"--password fleetarg-planted-{n}"}]},
                               {"env": {"NCCL_DEBUG": "INFO"}}, {"hostname": f"node{n}"}) for n in (1, 2)]
    text = json.dumps(fleet.diff(nodes))
    assert planted(text) == [] and "node1" in text  # the hosts are what a fleet report compares


ADVERSARIAL = ["gfx-1032-" * 4000, "a-" * 16000, " " * 32000 + "=", "serial: x" + " " * 32000 + "y",
               "password:" * 3600, "a." * 16000 + "@", "a+" * 16000 + "://", "--password " * 3000, "[" * 32000]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_text_of_32_kb_is_redacted(text):
    """A correctness guard on inputs that made earlier patterns backtrack (timings: docs/security.md)."""
    assert len(text) >= 32000
    redacted, _ = redact({"stages": {"log": text}})
    assert isinstance(redacted["stages"]["log"], str)
    assert isinstance(secret_values.mask_text(text), str)
