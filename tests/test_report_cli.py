"""`rocm-doctor report` end to end: files written, schema, redaction flags, and replay with `check --from`."""

import json
from pathlib import Path

import jsonschema

FIXTURES = Path(__file__).parent / "fixtures"
ROCMINFO = FIXTURES / "rocminfo/linux-cloud-vm-mi300x-vf-gfx942-xeon8568y-rocm7.2.4.txt"
TOKEN = "ghp_1234567890abcdefghijABCDEFGHIJ123456"


def planted_env(isolated_env, fake_bin):
    fake_bin.add_output("rocminfo", str(ROCMINFO.relative_to(FIXTURES)))
    return dict(isolated_env, GITHUB_TOKEN=TOKEN, HSA_OVERRIDE_GFX_VERSION="9.4.2")


def finding_ids(data):
    return sorted((f["id"], f["status"]) for f in data["findings"])


def test_markdown_and_json_written_and_replayable(doctor, isolated_env, fake_bin, tmp_path, report_schema):
    env = planted_env(isolated_env, fake_bin)
    result = doctor("report", "--format", "both", "-o", "ticket.md", env=env)
    assert result.returncode == 0, result.stderr
    assert "ticket.md and ticket.json" in result.stderr
    md = (tmp_path / "ticket.md").read_text()
    assert md.startswith("### rocm-doctor report\n\n**") and "`ticket.json` beside this file" in md
    data = json.loads((tmp_path / "ticket.json").read_text())
    jsonschema.validate(data, report_schema)
    assert TOKEN not in md and TOKEN not in json.dumps(data)
    assert data["redacted"] is True and "Not redacted" not in md
    assert data["snapshot"]["observations"]["env"]["HSA_OVERRIDE_GFX_VERSION"] == "9.4.2"
    assert "GPU-<uuid-1>" in data["snapshot"]["observations"]["commands"]["rocminfo"]["stdout"]

    replay = doctor("check", "--from", "ticket.json", "--json", env=env)
    assert replay.returncode in (0, 1), replay.stderr
    replayed = json.loads(replay.stdout)
    assert replayed["source"] == "ticket.json"
    assert finding_ids(replayed) == finding_ids(data)
    assert replayed["redacted"] is False  # check's own output, whatever the file it replays
    shown = doctor("check", "--from", "ticket.json", env=env)
    assert shown.returncode in (0, 1) and "Not redacted" not in shown.stdout  # a replay is not your environment


def test_report_from_an_older_tool_version_replays(doctor, isolated_env, fake_bin, tmp_path):
    env = planted_env(isolated_env, fake_bin)
    assert doctor("report", "--format", "json", "-o", "new.json", env=env).returncode == 0
    data = json.loads((tmp_path / "new.json").read_text())
    data["tool"]["version"] = data["snapshot"]["tool"]["version"] = "0.0.1"
    data["schema_version"] = 1
    data.pop("facts")  # an older report did not carry interpreted facts: replay re-derives them
    (tmp_path / "old.json").write_text(json.dumps(data))
    replay = doctor("check", "--from", "old.json", "--json", env=env)
    assert replay.returncode in (0, 1), replay.stderr
    assert finding_ids(json.loads(replay.stdout)) == finding_ids(data)
    again = doctor("report", "--from", "old.json", "--format", "json", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["source"] == "old.json"


def test_show_redactions_lists_places_not_values(doctor, isolated_env, fake_bin):
    result = doctor("report", "--format", "json", "--show-redactions", env=planted_env(isolated_env, fake_bin))
    assert result.returncode == 0
    assert "$.snapshot.observations.env.GITHUB_TOKEN: env-secret" in result.stderr
    assert "$.snapshot.observations.commands.rocminfo.stdout: uuid" in result.stderr
    assert TOKEN not in result.stderr and "43529fe3ce00c724" not in result.stderr
    assert json.loads(result.stdout)["redaction"]["applied"] is True
    assert json.loads(result.stdout)["redacted"] is True


def test_no_redact_keeps_values_and_says_so(doctor, isolated_env, fake_bin):
    result = doctor("report", "--no-redact", env=planted_env(isolated_env, fake_bin))
    assert result.returncode == 0
    assert "**Not redacted**" in result.stdout
    # The values, from the JSON: the Markdown shortens its blocks to fit GitHub's limit, by how large this
    # machine's environment and outputs are.
    data = doctor("report", "--no-redact", "--format", "json", env=planted_env(isolated_env, fake_bin)).stdout
    assert TOKEN in data and "43529fe3ce00c724" in data


def test_check_json_stays_unredacted_and_valid(doctor, isolated_env, fake_bin, report_schema):
    result = doctor("check", "--json", env=planted_env(isolated_env, fake_bin))
    data = json.loads(result.stdout)
    jsonschema.validate(data, report_schema)
    assert "redaction" not in data and "snapshot" not in data
    assert data["redacted"] is False


def test_unwritable_output_is_a_usage_error(doctor, isolated_env, fake_bin):
    result = doctor("report", "-o", "no/such/dir/r.md", env=planted_env(isolated_env, fake_bin))
    assert result.returncode == 2 and "cannot write" in result.stderr


def test_report_of_a_non_report_file(doctor, isolated_env, tmp_path):
    (tmp_path / "junk.json").write_text("{}")
    result = doctor("report", "--from", "junk.json", env=isolated_env)
    assert result.returncode == 2 and "not a rocm-doctor snapshot" in result.stderr
