"""Snapshots: round trip, and every kind of bad file gives one clear SnapshotError."""

import json

import pytest

from rocm_doctor.diagnose import load_snapshot
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.observations import FileRecord, Observations


def sample():
    obs = Observations(platform={"os": "linux"}, env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    obs.add_command("rocminfo", CommandResult(argv=["rocminfo"], returncode=0, stdout="gfx1032\n", duration_s=0.1))
    obs.add_file(FileRecord(path="/dev/kfd", exists=True, error="permission denied"))
    obs.add_probe("pci.sysfs", [{"vendor": "0x1002", "device": "0x73ff"}])
    return obs


def test_round_trip(tmp_path):
    path = tmp_path / "snap.json"
    path.write_text(snapshot.dumps(sample()), encoding="utf-8")
    loaded = load_snapshot(path)
    assert loaded.to_dict() == sample().to_dict()
    raw = json.loads(path.read_text())
    assert raw["format"] == "rocm-doctor-snapshot" and raw["version"] == 1


def test_report_bundle_is_unwrapped():
    bundle = {"schema_version": 1, "snapshot": snapshot.to_dict(sample())}
    assert snapshot.from_dict(bundle).commands["rocminfo"].stdout == "gfx1032\n"


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "not valid JSON"),
        ('{"format": "rocm-doctor-snapshot", "version": 1, "observ', "not valid JSON"),
        ("[1, 2]", "not a rocm-doctor snapshot"),
        ('{"format": "rocm-doctor-snapshot", "version": 99, "observations": {}}', "version 99"),
        ('{"format": "rocm-doctor-snapshot", "version": 1}', "no observations"),
        ('{"format": "rocm-doctor-snapshot", "version": 1, "observations": {"commands": {"x": {"nope": 1}}}}',
         "malformed"),
        ('{"format": "rocm-doctor-snapshot", "version": 1, "observations": {"commands": {"x": {"argv": ["x"], '
         '"stdout": 5}}}}', "malformed"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(snapshot.SnapshotError, match=message) as info:
        load_snapshot(path)
    assert "\n" not in str(info.value)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(snapshot.SnapshotError, match="no such file"):
        load_snapshot(tmp_path / "absent.json")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(snapshot.SnapshotError):
        load_snapshot(binary)
