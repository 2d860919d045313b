"""AMD interpreters (amd_tools, kfd, gpu_inventory) and the kfd / linux_access probes, on recorded observations."""

import json
from pathlib import Path

from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts.observations import FileRecord, Observations
from rocm_doctor.interpret import interpret
from rocm_doctor.probes import kfd as kfd_probe
from rocm_doctor.probes import linux_access
from rocm_doctor.probes._base import ProbeContext, Recorder

FIXTURES = Path(__file__).parent / "fixtures"
NODES = "/sys/class/kfd/kfd/topology/nodes"
MY_INTERPRETERS = ("amd_tools", "kfd", "gpu_inventory")


def fixture(path):
    return (FIXTURES / path).read_text(encoding="utf-8")


def ran(argv, stdout="", returncode=0, **kw):
    return CommandResult(argv=argv, returncode=returncode, stdout=stdout, timeout_s=10.0, **kw)


def kfd_node(gfx_target_version, device_id, location_id, simd_count=64):
    return (f"cpu_cores_count 0\nsimd_count {simd_count}\ngfx_target_version {gfx_target_version}\n"
            f"vendor_id 4098\ndevice_id {device_id}\nlocation_id {location_id}\ndomain 0\nsimd_per_cu 2\n")


def observations(os="linux", commands=None, nodes=None, probes=None, env=None, files=()):
    obs = Observations(platform={"os": os}, env=env or {})
    for key, result in (commands or {}).items():
        obs.add_command(key, result)
    if nodes is not None:
        obs.add_file(FileRecord(NODES, exists=True, entries=sorted(nodes)))
        for node, text in nodes.items():
            obs.add_file(FileRecord(f"{NODES}/{node}/properties", exists=True, content=text))
    for record in files:
        obs.add_file(record)
    for key, value in (probes or {}).items():
        obs.add_probe(key, value)
    return obs


def run(obs):
    facts = interpret(obs)
    assert not set(MY_INTERPRETERS) & set(facts.interpreter_errors), facts.interpreter_errors
    return facts


# --- rocminfo -------------------------------------------------------------------------------------------------


def test_rocminfo_healthy():
    facts = run(observations(commands={"rocminfo": ran(["/opt/rocm/bin/rocminfo"], fixture(
        "rocminfo/linux-gfx1151-strixhalo-apu-with-npu-agent-rocm7.2.txt"))}))
    status = facts["rocminfo.status"]
    assert (status["state"], status["wsl"], status["runtime_version"]) == ("ok", False, "1.18")
    assert [a["device_type"] for a in facts["rocminfo.agents"]] == ["CPU", "GPU", "DSP"]
    (gpu,) = facts["gpu.inventory"]
    assert (gpu["gfx"], gpu["name"], gpu["igpu"], gpu["sources"]) == (
        "gfx1151", "Radeon 8060S Graphics", True, {"rocminfo": "gfx1151"})


def test_rocminfo_permission_denied():
    result = ran(["rocminfo"], fixture("rocminfo/container-ubuntu-on-opensuse-podman-kfd-permission-denied-nogroup.txt"),
                 returncode=1)
    facts = run(observations(commands={"rocminfo": result}))
    assert facts["rocminfo.status"]["state"] == "kfd-permission-denied"
    assert "Permission denied" in facts.why_missing("rocminfo.agents")
    assert any("nogroup" in line for line in facts["rocminfo.status"]["evidence"])


def test_rocminfo_wsl_unsupported_gpu():
    result = ran(["rocminfo"], fixture("rocminfo/wsl-rx7600xt-rocr-unsupported-gpu-rocm6.2.3.txt"), returncode=1)
    status = run(observations(os="wsl", commands={"rocminfo": result}))["rocminfo.status"]
    assert (status["state"], status["wsl"], status["hsa_error"]) == (
        "unsupported-gpu", True, "HSA_STATUS_ERROR_OUT_OF_RESOURCES")


def test_rocminfo_missing_hung_crashed():
    cases = {
        "not-installed": (CommandResult(argv=["rocminfo"], error="not found"), "rocminfo not found on PATH"),
        "timed-out": (CommandResult(argv=["rocminfo"], timed_out=True, returncode=-9, timeout_s=10.0),
                      "did not finish within 10 s"),
        "crashed": (ran(["rocminfo"], "ROCk module is loaded\n", returncode=-11), "killed by signal SIGSEGV (11)"),
    }
    for state, (result, reason) in cases.items():
        facts = run(observations(commands={"rocminfo": result}))
        assert facts["rocminfo.status"]["state"] == state
        assert reason in facts.why_missing("rocminfo.agents")


def test_not_run_on_windows():
    facts = run(observations(os="windows"))
    for key in ("rocminfo.status", "rocminfo.agents", "hip.config", "smi.devices", "kfd.nodes"):
        assert not facts.has(key)
        assert "not" in facts.why_missing(key)
    assert "not collected on windows" == facts.why_missing("linux.groups")
    assert facts.why_missing("gpu.inventory").startswith("no GPU source was available")


# --- hipconfig ------------------------------------------------------------------------------------------------


def test_hip_config_and_version():
    facts = run(observations(commands={
        "hipconfig-full": ran(["hipconfig", "--full"], fixture("hipconfig/linux-mint22.1-gfx90c-apu-full-rocm6.3.2.txt")),
        "hipconfig-version": ran(["hipconfig", "--version"], fixture("hipconfig/linux-rocm6.0-hipconfig-v-n-version.txt")),
    }))
    assert facts["hip.config"]["platform"] == "amd"
    assert facts["hip.config"]["rocm_path"] == "/opt/rocm-6.3.2"
    assert facts["hip.version"]["text"] == "6.0.32830-d62f6a171"
    assert facts["hip.version"]["source"] == "hipconfig --version"


def test_hip_version_falls_back_to_full_output():
    facts = run(observations(commands={
        "hipconfig-full": ran(["hipconfig", "--full"], fixture(
            "hipconfig/linux-debian-bullseye-hip-base4.0-only-no-compiler-hcc-fallback.txt")),
        "hipconfig-version": CommandResult(argv=["hipconfig", "--version"], returncode=-6),
    }))
    assert facts["hip.version"]["text"] == "4.0.20496-4f163c68"
    assert facts["hip.version"]["source"] == "hipconfig --full"
    assert len(facts["hip.config"]["problems"]) == 4


def test_hipconfig_missing():
    missing = CommandResult(argv=["hipconfig"], error="not found")
    facts = run(observations(commands={"hipconfig-full": missing, "hipconfig-version": missing}))
    assert "hipconfig not found" in facts.why_missing("hip.config")
    assert "hipconfig not found" in facts.why_missing("hip.version")


# --- smi ------------------------------------------------------------------------------------------------------


def test_smi_prefers_amd_smi_and_joins_list():
    static = fixture("amd-smi/linux-ubuntu24.04-minisforum-hx470-gfx1150-apu-static-full-rocm7.2.0.txt")
    listed = '[{"gpu": 0, "bdf": "0000:c5:00.0", "uuid": "u-1", "kfd_id": 17, "node_id": 1, "partition_id": 0}]'
    facts = run(observations(commands={
        "amd-smi-static-json": ran(["amd-smi", "static", "--json"], static),
        "amd-smi-list-json": ran(["amd-smi", "list", "--json"], listed),
        "rocm-smi-json": CommandResult(argv=["rocm-smi"], error="not found"),
    }))
    (device,) = facts["smi.devices"]
    assert (device["source"], device["gfx"], device["node_id"], device["uuid"]) == ("amd-smi", "gfx1150", 1, "u-1")
    assert facts["smi.problems"] == []
    (gpu,) = facts["gpu.inventory"]
    assert (gpu["gfx"], gpu["igpu"], gpu["node"], gpu["sources"]) == ("gfx1150", True, 1, {"amd-smi": "gfx1150"})


def test_smi_abort_is_a_problem_not_a_crash():
    text = fixture("rocm-smi/linux-fedora40-radeonvii-rocm-smi-6.1.2-map-at-get_multiplier_from_str-assert.txt")
    facts = run(observations(commands={
        "rocm-smi-json": CommandResult(argv=["/opt/rocm/bin/rocm-smi"], returncode=-6, stderr=text),
        "amd-smi-static-json": CommandResult(argv=["amd-smi"], error="not found"),
    }))
    assert "rocm-smi: Exception caught: map::at" in facts["smi.problems"]
    assert "rocm-smi was killed by signal SIGABRT (6)" in facts.why_missing("smi.devices")
    assert "amd-smi not found" in facts.why_missing("smi.devices")


def test_agent_enumerator_targets():
    facts = run(observations(commands={
        "rocm-agent-enumerator": ran(["rocm_agent_enumerator"], "gfx000\ngfx1032\n"),
        "amdgpu-arch": CommandResult(argv=["amdgpu-arch"], returncode=1, stderr="Failed to get device count\n"),
    }))
    assert facts["rocm_agent_enumerator.targets"] == ["gfx1032"]
    assert facts.why_missing("amdgpu_arch.targets") == "amdgpu-arch exited with code 1: Failed to get device count"


# --- kernel side ----------------------------------------------------------------------------------------------


def test_kfd_nodes():
    facts = run(observations(nodes={"0": "cpu_cores_count 12\nsimd_count 0\ngfx_target_version 0\n",
                                    "1": kfd_node(100302, 29695, 0x0C00)}))
    cpu, gpu = facts["kfd.nodes"]
    assert (cpu["kind"], gpu["kind"], gpu["gfx"], gpu["bdf"]) == ("cpu", "gpu", "gfx1032", "0000:0c:00.0")


def test_kfd_not_loaded():
    obs = observations(files=[FileRecord(NODES, exists=False, error="not found")])
    assert "KFD is not loaded" in run(obs).why_missing("kfd.nodes")


def test_linux_facts():
    groups = {"uid": 1000, "user": "ana", "gids": [1000, 44], "names": ["ana", "video"], "primary_gid": 1000,
              "database": {"render": {"gid": 110, "members": ["ana"]}, "video": {"gid": 44, "members": []}}}
    access = {"/dev/kfd": {"path": "/dev/kfd", "exists": True, "read_write": False, "errno": "EACCES",
                           "error": "Permission denied", "group": "render"}}
    facts = run(observations(
        probes={"linux.groups": groups, "linux.device_access": access},
        files=[FileRecord("/sys/module/amdgpu", exists=True, entries=["initstate", "version"]),
               FileRecord("/sys/module/amdgpu/version", exists=True, content="6.16.13\n"),
               FileRecord("/sys/module/amdgpu/initstate", exists=True, content="live\n"),
               FileRecord("/proc/cmdline", exists=True,
                          content="BOOT_IMAGE=/vmlinuz ro quiet amdgpu.ppfeaturemask=0xffff3fff amdgpu.runpm=0 "
                                  "iommu=pt amd_iommu=on\n")]))
    render = facts["linux.groups"]["render"]
    assert (render["listed"], render["in_process"]) == (True, False), "added to render but not logged in again"
    assert facts["linux.groups"]["video"]["in_process"] is True
    assert facts["linux.device_access"]["/dev/kfd"]["errno"] == "EACCES"
    assert facts["linux.amdgpu_module"] == {"loaded": True, "version": "6.16.13", "initstate": "live"}
    cmdline = facts["linux.kernel_cmdline"]
    assert cmdline["amdgpu"] == {"ppfeaturemask": "0xffff3fff", "runpm": "0"}
    assert cmdline["iommu"] == {"iommu": "pt", "amd_iommu": "on"}


def test_amdgpu_module_absent():
    facts = run(observations(files=[FileRecord("/sys/module/amdgpu", exists=False, error="not found")]))
    assert facts["linux.amdgpu_module"] == {"loaded": False, "version": None, "initstate": None}


# --- gpu.inventory --------------------------------------------------------------------------------------------


def test_override_disagreement_between_kfd_and_rocminfo():
    rocminfo = fixture("rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt").replace("gfx1032", "gfx1030")
    torch = {"stage": "device", "index": 0, "name": "AMD Radeon RX 6600 XT", "gcnArchName": "gfx1030",
             "pci_bus_id": 12, "pci_device_id": 0, "is_integrated": 0}
    obs = observations(
        env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
        nodes={"0": "simd_count 0\ngfx_target_version 0\n", "1": kfd_node(100302, 29695, 0x0C00)},
        commands={"rocminfo": ran(["rocminfo"], rocminfo),
                  "torch-probe": ran(["python"], "\n".join(json.dumps(s) for s in (
                      {"stage": "start"}, {"stage": "import", "ok": True, "hip": "5.0"}, torch, {"stage": "done"})))},
        probes={"pci.sysfs": [{"slot": "0000:0c:00.0", "class": "0x030000", "vendor": "0x1002", "device": "0x73ff"},
                              {"slot": "0000:01:00.0", "class": "0x030000", "vendor": "0x10de", "device": "0x2204"}]},
    )
    facts = run(obs)
    (gpu,) = facts["gpu.inventory"]
    assert gpu["gfx"] == "gfx1032", "KFD is the hardware truth"
    assert gpu["sources"] == {"kfd": "gfx1032", "rocminfo": "gfx1030", "torch": "gfx1030", "pci": None}
    assert (gpu["name"], gpu["device_id"], gpu["node"], gpu["bdf"], gpu["igpu"]) == (
        "AMD Radeon RX 6600 XT", "0x73ff", 1, "0000:0c:00.0", False)
    (note,) = facts["gpu.inventory.disagreements"]
    assert "kfd says gfx1032" in note and "rocminfo says gfx1030" in note
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0 is in effect" in note


def test_two_gpus_rocm_smi_and_kfd_agree():
    text = fixture("rocm-smi/linux-arch-rx7600xt-gfx1102-plus-raphael-igpu-showhw-gfx11002-rocm6.2.txt")
    facts = run(observations(
        nodes={"0": "simd_count 0\n", "1": kfd_node(110002, 0x7480, 0x0300), "2": kfd_node(100306, 0x164E, 0x1200, 4)},
        commands={"rocm-smi-json": ran(["rocm-smi"], text)}))
    dgpu, igpu = facts["gpu.inventory"]
    assert dgpu["sources"] == {"kfd": "gfx1102", "rocm-smi": "gfx1102"}
    assert (igpu["gfx"], igpu["igpu"], igpu["bdf"]) == ("gfx1036", True, "0000:12:00.0")
    assert facts["gpu.inventory.disagreements"] == []


def test_rocm_smi_csv_and_pci_join_without_bus_ids():
    """rocm-smi's CSV has no bus or device id; the two PCI records are the same two MI100s, not two more GPUs."""
    text = fixture("rocm-smi/linux-rhel8-2x-mi100-gfx908-showproductname-csv.txt")
    pci = [{"slot": slot, "vendor": "0x1002", "device": "0x738c", "driver": "amdgpu"}
           for slot in ("0000:23:00.0", "0000:43:00.0")]
    facts = run(observations(commands={"rocm-smi-json": ran(["rocm-smi"], text)}, probes={"pci.sysfs": pci}))
    inventory = facts["gpu.inventory"]
    assert len(inventory) == 2
    assert [(g["name"], g["device_id"], g["bdf"]) for g in inventory] == [
        ("Arcturus GL-XL [AMD Instinct MI100]", "0x738c", "0000:23:00.0"),
        ("Arcturus GL-XL [AMD Instinct MI100]", "0x738c", "0000:43:00.0")]
    assert all(set(g["sources"]) == {"rocm-smi", "pci"} for g in inventory)
    assert facts["gpu.inventory.disagreements"] == []


def test_pci_device_the_runtime_does_not_list_stays_its_own_gpu():
    """Positional joining never pairs a PCI record with a GPU another source placed on a different bus."""
    pci = [{"slot": "0000:03:00.0", "vendor": "0x1002", "device": "0x7480"},
           {"slot": "0000:12:00.0", "vendor": "0x1002", "device": "0x164e"}]
    facts = run(observations(nodes={"0": "simd_count 0\n", "1": kfd_node(110002, 0x7480, 0x0300)},
                             probes={"pci.sysfs": pci}))
    assert [sorted(g["sources"]) for g in facts["gpu.inventory"]] == [["kfd", "pci"], ["pci"]]


def test_cpu_agents_are_not_gpus_and_uuid_only_when_real():
    rocminfo = fixture("rocminfo/linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt")
    facts = run(observations(
        nodes={"0": "simd_count 0\n", "1": kfd_node(100300, 0x73BF, 0x0300), "2": kfd_node(90012, 0x1638, 0x0C00)},
        commands={"rocminfo": ran(["rocminfo"], rocminfo)}))
    assert [g["gfx"] for g in facts["gpu.inventory"]] == ["gfx1030", "gfx90c"]
    assert [g["uuid"] for g in facts["gpu.inventory"]] == ["GPU-362702d6dbbf2d1d", None]
    assert facts["gpu.inventory"][1]["target_id"] == "gfx90c:xnack-"
    assert facts["gpu.inventory.disagreements"] == []


def test_gpu_hidden_from_the_runtime_is_a_count_disagreement():
    rocminfo = fixture("rocminfo/linux-ubuntu20.04-rx6600xt-gfx1032-ryzen3600-rocm5.0.1.txt")
    facts = run(observations(
        nodes={"0": "simd_count 0\n", "1": kfd_node(100302, 0x73FF, 0x0C00), "2": kfd_node(90012, 0x1638, 0x0D00)},
        commands={"rocminfo": ran(["rocminfo"], rocminfo)}))
    assert [g["sources"] for g in facts["gpu.inventory"]] == [{"kfd": "gfx1032", "rocminfo": "gfx1032"}, {"kfd": "gfx90c"}]
    assert facts["gpu.inventory.disagreements"] == ["sources list different numbers of GPUs: kfd 2, rocminfo 1"]


def test_wsl_rocminfo_and_torch_join_by_position():
    rocminfo = fixture("rocminfo/wsl-rx7900xtx-gfx1100-intel-host-rocm6.3.4.txt")
    torch = {"stage": "device", "index": 0, "name": "AMD Radeon RX 7900 XTX", "gcnArchName": "gfx1100"}
    child = "\n".join(json.dumps(s) for s in ({"stage": "import", "ok": True, "hip": "6.3"}, torch, {"stage": "done"}))
    facts = run(observations(os="wsl", commands={"rocminfo": ran(["rocminfo"], rocminfo),
                                                 "torch-probe": ran(["python"], child)},
                             probes={"pci.sysfs": []}))
    (gpu,) = facts["gpu.inventory"]
    assert gpu["sources"] == {"rocminfo": "gfx1100", "torch": "gfx1100"}
    assert facts["gpu.inventory.disagreements"] == [], "WSL shows no PCI GPU; that is not a disagreement"


# --- probes ---------------------------------------------------------------------------------------------------


def recorder():
    obs = Observations(platform={"os": "linux"})
    return obs, Recorder(obs, ProbeContext(python="python", python_reason="test", platform_os="linux", env={}))


def test_kfd_probe_reads_every_node(tmp_path, monkeypatch):
    for node, text in {"0": "simd_count 0\n", "1": kfd_node(110000, 0x744C, 0x0300)}.items():
        (tmp_path / node).mkdir()
        (tmp_path / node / "properties").write_text(text)
        (tmp_path / node / "name").write_text("ip discovery\n")
    monkeypatch.setattr(kfd_probe, "NODES_DIR", str(tmp_path))
    obs, rec = recorder()
    kfd_probe.collect(rec)
    assert obs.file(str(tmp_path)).entries == ["0", "1"]
    assert "gfx_target_version 110000" in obs.file(f"{tmp_path}/1/properties").content
    assert obs.file(f"{tmp_path}/1/gpu_id").error == "not found"


def test_linux_access_probe_records_devices_and_groups():
    obs, rec = recorder()
    linux_access.collect(rec)
    access = obs.probes["linux.device_access"]
    assert set(access) >= {"/dev/kfd", "/dev/dxg"}
    assert all("exists" in info for info in access.values())
    groups = obs.probes["linux.groups"]
    assert isinstance(groups["gids"], list) and set(groups["database"]) == {"render", "video"}
    assert "/proc/cmdline" in obs.files and "/sys/module/amdgpu" in obs.files


def test_device_access_reports_errno(tmp_path):
    target = tmp_path / "locked"
    target.write_text("")
    target.chmod(0)
    info = linux_access.device_access(str(target))
    assert info["exists"] is True
    if info["read_write"] is False:  # root opens anything
        assert (info["errno"], info["error"]) == ("EACCES", "Permission denied")
    assert linux_access.device_access(str(tmp_path / "absent")) == {"path": str(tmp_path / "absent"), "exists": False}
