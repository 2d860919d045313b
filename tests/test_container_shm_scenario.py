"""A docker container with Docker's default 64 MiB /dev/shm whose training log shows DataLoader workers dying of a
bus error: the small /dev/shm comes first, the log's message folds under it, and the plan recreates the container
with --ipc=host."""

import json
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
NAME = "linux-docker-container-2x-mi100-dataloader-bus-error-64mib-shm"


def test_small_shm_is_the_first_root_cause_with_its_plan(replayed):
    snapshot = json.loads((SNAPSHOTS / f"{NAME}.json").read_text(encoding="utf-8"))
    log = (FIXTURES / "errors/linux-docker-dataloader-workers-bus-error-insufficient-shm-excerpt.txt")
    assert snapshot["observations"]["probes"]["user.log"]["text"] == log.read_text(encoding="utf-8")
    cgroup = (FIXTURES / "cgroup/docker-cgroup-v1-proc-1-cgroup.txt").read_text(encoding="utf-8")
    assert snapshot["observations"]["files"]["/proc/1/cgroup"]["content"] == cgroup
    document = replayed(NAME)
    roots = document["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == "container-shm-small", [(r["finding"], r["status"]) for r in roots]
    assert "known-error-signatures:dataloader-bus-error-shm" in roots[0]["symptoms"]
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert [steps[i]["text"] for i in roots[0]["plan"]] == [
        "Recreate the container with --ipc=host (docker run / podman run)"]
    finding = next(f for f in document["findings"] if f["id"] == "container-shm-small")
    assert "/dev/shm holds 64 MiB (67108864 bytes)" in finding["evidence"]
    assert [s["text"] for a in finding["alternatives"] for s in a["steps"]] == [
        "Recreate the container with --shm-size=8g"]
    devices = next(f for f in document["findings"] if f["id"] == "container-gpu-devices")
    assert devices["status"] == "ok"
