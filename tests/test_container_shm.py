"""container-shm-small: the container's /dev/shm against what DataLoader workers need, through the probe's record;
old snapshots without the measurement skip; the healthy machines raise nothing."""

import pytest

from rocm_doctor.testing import Case, run_case

DOCKER = {"in_container": True, "engine": "docker", "evidence": ["/.dockerenv exists (docker)"]}


def shm_case(name, probe, container=DOCKER, expect="warn", text=None):
    observations = {"probes": {"dev-shm": probe}} if probe is not None else {}
    return Case(name=name, check="container-shm-small", observations=observations,
                facts={"os.container": container}, expect={"container-shm-small": expect}, text=text or [])


def test_docker_default_64mib_warns_with_ipc_host_first():
    (finding,) = run_case(shm_case("64mib", {"total_bytes": 64 * 1024 * 1024}, text="64 MiB"))
    assert [s.summary() for s in finding.fix] == ["Recreate the container with --ipc=host (docker run / podman run)"]
    assert [s.summary() for a in finding.alternatives for s in a.steps] == ["Recreate the container with --shm-size=8g"]


@pytest.mark.parametrize("size,expect", [(32 * 1024 * 1024, "warn"), (512 * 1024 * 1024, "info"), (1024 ** 3, "info"),
                                         (8 * 1024 ** 3, "ok"), (16 * 1024 ** 3, "ok")])
def test_the_default_64_mib_warns_and_less_than_amds_8_gib_is_info(size, expect):
    run_case(shm_case(f"size-{size}", {"total_bytes": size}, expect=expect))


def test_not_in_a_container_skips_even_when_small():
    outside = {"in_container": False, "engine": None, "evidence": []}
    run_case(shm_case("host", {"total_bytes": 64 * 1024 * 1024}, container=outside, expect="skip"))


@pytest.mark.parametrize("probe,why", [(None, "not measured"), ({"error": "FileNotFoundError: No such file"},
                                                                  "FileNotFoundError")])
def test_missing_measurement_skips_with_the_reason(probe, why):
    run_case(shm_case("missing", probe, expect="skip", text=why))


@pytest.mark.parametrize("name", ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy",
                                  "linux-2x-h200-cuda-torch2.11", "linux-h200-live-state-idle-healthy"])
def test_no_false_alarm_on_healthy_machines(replayed, name):
    assert [f["status"] for f in replayed(name)["findings"] if f["check"] == "container-shm-small"
            and f["status"] in ("warn", "fail", "error")] == []
