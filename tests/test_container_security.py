"""A container whose security module refuses the GPU device nodes that its permissions allow: the parser on the
real labels and status files, the probe's map attempt, the check's verdicts, and the replayed Fedora container of
ROCm#1549 where even `ls /dev/kfd` is refused."""

import json
from pathlib import Path

import pytest

from rocm_doctor.checks.containers import mode_allows
from rocm_doctor.facts import snapshot
from rocm_doctor.interpret import interpret
from rocm_doctor.parsers.security_attrs import parse_enforce, parse_label, parse_status_security
from rocm_doctor.probes import container_security, linux_access
from rocm_doctor.testing import Case, run_case

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
NAME = "linux-podman-fedora39-container-selinux-refuses-dev-kfd"
CHECK = "container-security-refuses-gpu"
HEALTHY = ["linux-2x-mi100-gfx908-healthy", "linux-mi300x-vf-gfx942-healthy", "linux-2x-h200-cuda-torch2.11",
           "linux-h200-live-state-idle-healthy"]
PS_Z = "selinux/rootless-podman-ps-Z-container-t-sh.txt"
H200_STATUS = "proc/linux-h200-container-proc-self-status-seccomp-off.txt"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_the_label_of_a_rootless_podman_process_is_a_confined_selinux_type():
    label = parse_label(fixture(PS_Z).split()[0])
    assert label == {"kind": "selinux", "label": "system_u:system_r:container_t:s0:c556,c718", "user": "system_u",
                     "role": "system_r", "type": "container_t", "level": "s0:c556,c718", "confined": True}
    assert parse_label("system_u:system_r:spc_t:s0\x00\n")["confined"] is False
    assert parse_label("docker-default (enforce)\n") == {"kind": "apparmor", "profile": "docker-default",
                                                         "mode": "enforce", "confined": True}
    assert parse_label("unconfined")["confined"] is False and parse_label("") is None
    assert parse_enforce("1\n") is True and parse_enforce("0") is False and parse_enforce(None) is None


def test_the_h200_status_file_says_seccomp_off_and_root_keeps_dac_override():
    status = parse_status_security(fixture(H200_STATUS))
    assert status == {"seccomp": 0, "seccomp_filters": 0, "no_new_privs": False, "cap_dac_override": True}
    assert parse_status_security("Name:\tsh\n")["seccomp"] is None


def test_the_map_attempt_tells_a_refused_mapping_from_one_the_driver_turns_down(tmp_path):
    assert container_security.map_attempt("/dev/zero") == {"path": "/dev/zero", "exists": True, "opened": True,
                                                          "mapped": True}
    null = container_security.map_attempt("/dev/null")  # no mmap handler: the driver's answer, not a refusal
    assert null["opened"] and null["mapped"] is False and null["errno"] == "ENODEV"
    assert container_security.map_attempt(str(tmp_path / "kfd")) == {"path": str(tmp_path / "kfd"), "exists": False}


def test_odd_input_is_recorded_not_raised(tmp_path):
    plain = tmp_path / "kfd"
    plain.write_bytes(b"")  # a regular file where the node should be: Python's mmap refuses it itself
    assert container_security.map_attempt(str(plain))["mapped"] is None
    assert parse_status_security("Seccomp:\t\u00b2\nCapEff:\tzz\n")["seccomp"] is None


def test_a_node_whose_stat_is_refused_is_still_there(monkeypatch):
    real_stat = linux_access.os.stat

    def refused(path, *args, **kwargs):
        if path == "/dev/kfd-refused":
            raise PermissionError(13, "Permission denied")
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(linux_access.os, "stat", refused)
    info = linux_access.device_access("/dev/kfd-refused")
    assert info["exists"] is True and info["stat_error"] == "Permission denied" and "mode" not in info
    assert linux_access.device_access("/dev/no-such-node") == {"path": "/dev/no-such-node", "exists": False}


def test_mode_allows_follows_owner_group_other_and_root():
    node = {"mode": "crw-rw----", "uid": 0, "gid": 105}
    assert mode_allows(node, 1000, [1000, 105]) is True
    assert mode_allows(node, 1000, [1000]) is False
    assert mode_allows(dict(node, mode="crw-rw-rw-"), 1000, [1000]) is True
    assert mode_allows(node, 0, [0], dac_override=True) is True
    assert mode_allows({"mode": "crw-rw----", "uid": 65534, "gid": 65534}, 0, [0, 65534], True) is False
    assert mode_allows({"uid": 0, "gid": 105}, 1000, [105]) is None


PCI = [{"vendor": "amd", "vendor_id": "0x1002", "device_id": "0x744c", "source": "sysfs"}]
PODMAN = {"in_container": True, "engine": "podman", "evidence": ["/run/.containerenv exists (podman)"]}
USER = {"uid": 1000, "user": "user", "gids": [1000, 105], "names": ["user", "render"], "primary_gid": 1000}
CONTAINER_T = {"kind": "selinux", "label": "system_u:system_r:container_t:s0:c1,c2", "type": "container_t",
               "confined": True, "enforcing": None}


def node(path, **kw):
    return dict({"path": path, "exists": True, "mode": "crw-rw----", "uid": 0, "gid": 105, "read_write": True}, **kw)


def facts(read_write=True, errno=None, security=None, mapped=None, groups=None, container=PODMAN):
    denied = {} if read_write else {"read_write": False, "errno": errno}
    return {"gpu.pci": PCI, "os.container": container, "linux.groups": groups or USER,
            "linux.device_access": {"/dev/kfd": node("/dev/kfd", **denied),
                                    "/dev/dri/renderD128": node("/dev/dri/renderD128", **denied)},
            "linux.security": dict({"selinux": None, "apparmor": None, "seccomp": 0, "unread": []}, **(security or {})),
            "linux.device_map": {"/dev/kfd": mapped or {"path": "/dev/kfd", "exists": True, "opened": True,
                                                        "mapped": False, "errno": "ENODEV"}}}


@pytest.mark.parametrize("name,given,status,text", [
    ("selinux-refuses-the-open", facts(False, "EACCES", {"selinux": CONTAINER_T}), "fail",
     "the SELinux type container_t"),
    ("selinux-refuses-only-the-mapping",
     facts(security={"selinux": CONTAINER_T},
           mapped={"path": "/dev/kfd", "exists": True, "opened": True, "mapped": False, "errno": "EACCES"}),
     "fail", "/dev/kfd: it opens, but mapping it is refused (EACCES)"),
    ("selinux-permissive-names-no-selinux-cause",
     facts(False, "EACCES", {"selinux": dict(CONTAINER_T, enforcing=False)}), "warn", "could not be told"),
    ("apparmor-profile-in-enforce-mode",
     facts(False, "EACCES", {"apparmor": {"kind": "apparmor", "profile": "rocm-strict", "mode": "enforce",
                                          "confined": True}}), "fail", "--security-opt apparmor=unconfined"),
    ("operation-not-permitted-without-a-filter", facts(False, "EPERM"), "warn", "--device=/dev/kfd --device=/dev/dri"),
    ("refused-with-no-label-to-read", facts(False, "EACCES"), "warn", "which security module refuses could not"),
    ("the-mode-itself-refuses", facts(False, "EACCES", {"selinux": CONTAINER_T}, groups=dict(USER, gids=[1000])),
     "skip", "no security module needs to explain"),
    ("opens-and-maps", facts(security={"selinux": CONTAINER_T}), "ok", "opens /dev/kfd and may map it"),
    ("not-a-container", facts(False, "EACCES", {"selinux": CONTAINER_T},
                              container={"in_container": False, "engine": None, "evidence": []}),
     "skip", "not running in a container"),
    ("security-not-read", dict(facts(False, "EACCES"), **{"linux.security": None}), "skip", "needs linux security"),
])
def test_the_check_names_the_module_that_refuses(name, given, status, text):
    run_case(Case(name=name, check=CHECK, facts=given, expect={CHECK: status}, text=text))


def test_root_with_dac_override_is_not_told_to_add_a_group():
    given = facts(False, "EACCES", {"selinux": CONTAINER_T, "cap_dac_override": True},
                  groups={"uid": 0, "gids": [0], "names": ["root"]})
    run_case(Case(name="root-in-a-confined-container", check=CHECK, facts=given, expect={CHECK: "fail"}))
    run_case(Case(name="root-is-no-group-problem", check="container-gpu-devices", facts=given,
                  expect={"container-gpu-devices": "skip"}, text="container-security-refuses-gpu"))


def test_the_security_facts_of_the_h200_record_say_nothing_is_confined():
    """What the probe recorded on the H200: the label read fails with EINVAL (no module gives one), the rest absent."""
    observations = snapshot.from_dict(json.loads((SNAPSHOTS / f"{NAME}.json").read_text()), NAME)
    label = observations.file("/proc/self/attr/current")
    label.content, label.error = None, "OSError: Invalid argument"
    found = interpret(observations).get("linux.security")
    assert found["selinux"] is None and found["apparmor"] is None and found["seccomp"] == 0
    assert "/proc/self/attr/current: OSError: Invalid argument" in found["unread"]


def test_selinux_refusing_dev_kfd_comes_first_with_its_plan(replayed):
    raw = json.loads((SNAPSHOTS / f"{NAME}.json").read_text(encoding="utf-8"))
    observations = raw["observations"]
    assert observations["commands"]["rocminfo"]["stdout"] == fixture(
        "rocminfo/container-fedora39-buildah-rootless-kfd-permission-denied-root-not-in-video.txt")
    assert observations["files"]["/proc/self/attr/current"]["content"] == fixture(PS_Z).split()[0]
    assert observations["files"]["/proc/self/status"]["content"] == fixture(H200_STATUS)
    assert fixture("ls/fedora39-buildah-rootless-container-ls-dev-kfd-permission-denied.txt").endswith(
        "Permission denied\n") and observations["probes"]["linux.device_access"]["/dev/kfd"]["stat_error"] == \
        "Permission denied"
    document = replayed(NAME)
    roots = document["diagnosis"]["root_causes"]
    assert roots[0]["finding"] == CHECK, [(r["finding"], r["status"]) for r in roots]
    assert {"rocm-device-access", "torch-cuda-unavailable"} <= set(roots[0]["symptoms"])
    steps = {item["id"]: item["step"] for item in document["diagnosis"]["plan"]}
    assert [steps[i]["text"] for i in roots[0]["plan"]] == ["Recreate the container with --security-opt label=disable"]
    finding = next(f for f in document["findings"] if f["id"] == CHECK)
    assert any("even reading its owner and mode is refused" in line for line in finding["evidence"])
    assert [s["argv"] for a in finding["alternatives"] for s in a["steps"]] == [
        ["sudo", "setsebool", "-P", "container_use_devices", "1"]]
    devices = next(f for f in document["findings"] if f["id"] == "container-gpu-devices")
    assert devices["status"] == "skip"


@pytest.mark.parametrize("name", HEALTHY)
def test_no_false_alarm_on_healthy_machines(replayed, name):
    alarms = [(f["id"], f["status"]) for f in replayed(name)["findings"]
              if f["check"] == CHECK and f["status"] in ("warn", "fail", "error")]
    assert alarms == []
