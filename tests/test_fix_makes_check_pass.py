"""Every check that attaches fix steps: applying its own steps to the machine makes it stop reporting the problem.

One case per place a check attaches steps (and per kind of step it chooses there); a test reads the checks'
source and fails when a check attaches steps in more places than it has cases here.
"""

from collections import Counter

import pytest

from rocm_doctor.engine.registry import load_registry
from rocm_doctor.testing import Case, assert_fix_passes, step_sites

REGISTRY = load_registry(include_plugins=False)
ROCM63 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200",
          "gfx1201"]
ROCM_TORCH = {"torch.flavour": "rocm", "torch.version": "2.7.1+rocm6.3", "torch.hip": "6.3.42131-fa1d09cbd",
              "torch.arch_list": ROCM63}
THEROCK_GFX103X = {"torch.flavour": "rocm", "torch.version": "2.10.0a0+rocm7.10.0",
                   "torch.arch_list": ["gfx1030", "gfx1031", "gfx1032", "gfx1034"]}
CPU_TORCH = {"torch.flavour": "cpu", "torch.version": "2.5.1+cpu"}
TARGET = {"python": "/home/u/venv/bin/python", "reason": "the active virtual environment"}
AMD_PCI = [{"vendor": "amd", "vendor_id": "0x1002", "device_id": "0x73ef", "source": "sysfs"}]
NVIDIA_PCI = [{"vendor": "nvidia", "vendor_id": "0x10de", "device_id": "0x2335", "source": "sysfs"}]


def gpu(index, gfx, igpu=False, node=None, name=None):
    return {"index": index, "gfx": gfx, "igpu": igpu, "node": node, "name": name or f"GPU {gfx}", "uuid": None,
            "device_id": None, "sources": {"kfd": gfx}}


def one_gpu(gfx):
    return {"gpu.inventory": [gpu(0, gfx, node=1)]}


DGPU_IGPU = [gpu(0, "gfx90c", igpu=True, node=1, name="AMD Radeon Graphics"),
             gpu(1, "gfx1030", node=2, name="AMD Radeon RX 6800")]
TWO_DGPUS = [gpu(0, "gfx1100", node=1), gpu(1, "gfx1100", node=2)]
KFD = {"path": "/dev/kfd", "exists": True, "mode": "crw-rw----", "gid": 992, "group": "render"}
RUNPM_OFF = {"raw": "quiet splash amdgpu.ppfeaturemask=0xffff3fff amdgpu.runpm=0x0",
             "amdgpu": {"ppfeaturemask": "0xffff3fff", "runpm": "0x0"}, "iommu": {}}


def rocm_paths_probe(path_entries):
    """The rocm_paths probe's record: the /opt/rocm install, and each PATH entry with whether it exists."""
    entries = [{"entry": e, "exists": ok, "realpath": e if ok else None} for e, ok in path_entries]
    roots = [{"path": "/opt/rocm", "exists": True, "realpath": "/opt/rocm-6.3.3"}]
    return {"rocm.paths": {"roots": roots, "PATH": entries, "LD_LIBRARY_PATH": []}}


def registry(user=None, machine=None):
    """The windows_env probe's record of the User and Machine Environment keys."""
    def key(values):
        return {"values": {k: {"value": v, "type": "REG_SZ"} for k, v in values.items()}, "complete": True}
    return {"windows.registry.windows_env": {
        "HKCU\\Environment": key(user or {}),
        "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment": key(machine or {})}}


PATH_NOT_FROM_ENV = pytest.mark.xfail(
    strict=True, reason="rocm.paths lists PATH as the probe recorded it, not from the environment a step changes")

CASES = [
    Case(name="access-not-in-render-group", check="rocm-device-access",
         facts={**one_gpu("gfx1032"), "linux.device_access": {"/dev/kfd": dict(KFD, read_write=False, errno="EACCES")},
                "linux.groups": {"render": {"gid": 992, "members": [], "in_process": False, "listed": False}}},
         expect={"rocm-device-access": "fail"}, text="usermod -aG render,video",
         after={"add_user_to_group": {
             "linux.groups": {"render": {"gid": 992, "members": ["u"], "in_process": True, "listed": True}},
             "linux.device_access": {"/dev/kfd": dict(KFD, read_write=True)}}}),
    Case(name="igpu-is-device-0", check="igpu-enumerated-first", facts={"gpu.inventory": DGPU_IGPU},
         expect={"igpu-enumerated-first": "warn"}, text="HIP_VISIBLE_DEVICES=1"),
    Case(name="override-of-another-family", check="hsa-override-gfx-version",
         env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, facts={**ROCM_TORCH, **one_gpu("gfx1032")},
         expect={"hsa-override-gfx-version:0": "fail"}, text="10.3.0"),
    Case(name="override-of-another-family-no-right-value", check="hsa-override-gfx-version",
         env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, facts={**ROCM_TORCH, **one_gpu("gfx1201")},
         expect={"hsa-override-gfx-version:0": "fail"}, text="install a torch built for gfx1201"),
    Case(name="override-not-needed", check="hsa-override-gfx-version", env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
         facts={**ROCM_TORCH, **one_gpu("gfx1102")}, expect={"hsa-override-gfx-version:0": "warn"}, text="not needed"),
    Case(name="override-missing", check="hsa-override-gfx-version", facts={**ROCM_TORCH, **one_gpu("gfx1032")},
         expect={"hsa-override-gfx-version:0": "warn"}, text="HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    Case(name="path-names-a-removed-rocm", check="rocm-paths",
         env={"PATH": "/usr/bin:/opt/rocm-5.7.0/bin:/opt/rocm/bin"},
         observations={"probes": rocm_paths_probe([("/usr/bin", True), ("/opt/rocm-5.7.0/bin", False),
                                                   ("/opt/rocm/bin", True)])},
         expect={"rocm-paths:PATH-missing": "warn"}, text="/opt/rocm-5.7.0/bin"),
    Case(name="rocm-bin-not-on-path", check="rocm-paths", env={"PATH": "/usr/bin:/bin"},
         observations={"probes": rocm_paths_probe([("/usr/bin", True), ("/bin", True)])},
         expect={"rocm-paths:bin": "info"}, problems=["rocm-paths:bin"], text="/opt/rocm/bin"),
    Case(name="hang-with-runtime-power-management", check="gpu-hang-power-state",
         facts={"gpu.inventory": TWO_DGPUS, "torch.probe": {"state": "hung", "detail": "no answer in 60 s"},
                "linux.kernel_cmdline": {"raw": "quiet splash", "amdgpu": {}, "iommu": {}}},
         expect={"gpu-hang-power-state": "warn"}, text="amdgpu.runpm=0x0",
         after={"run_command": {"linux.kernel_cmdline": RUNPM_OFF}}),
    Case(name="arch-missing-native-wheel-exists", check="gfx-not-in-torch-arch-list",
         facts={**ROCM_TORCH, **one_gpu("gfx1102"), "torch.version": "2.6.0+rocm6.2.4",
                "torch.arch_list": [g for g in ROCM63 if g != "gfx1102"]},
         expect={"gfx-not-in-torch-arch-list:0": "fail"}, text="download.pytorch.org/whl/rocm7.14",
         after={"pip_install": {"torch.version": "2.7.1+rocm6.3", "torch.arch_list": ROCM63}}),
    Case(name="arch-missing-therock-wheel", check="gfx-not-in-torch-arch-list",
         facts={**ROCM_TORCH, **one_gpu("gfx1032")}, expect={"gfx-not-in-torch-arch-list:0": "fail"},
         text="rocm.nightlies.amd.com/v2/gfx103X-dgpu/", after={"pip_install": THEROCK_GFX103X}),
    Case(name="arch-missing-override-alternative", check="gfx-not-in-torch-arch-list",
         facts={**ROCM_TORCH, **one_gpu("gfx1032")}, expect={"gfx-not-in-torch-arch-list:0": "fail"},
         alternative="HSA_OVERRIDE_GFX_VERSION", text="set HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    Case(name="cpu-torch-therock-wheel", check="gfx-not-in-torch-arch-list", facts={**CPU_TORCH, **one_gpu("gfx1032")},
         expect={"gfx-not-in-torch-arch-list:0": "warn"}, text="rocm.nightlies.amd.com/v2/gfx103X-dgpu/",
         after={"pip_install": THEROCK_GFX103X}),
    Case(name="cpu-torch-override-alternative", check="gfx-not-in-torch-arch-list",
         facts={**CPU_TORCH, **one_gpu("gfx1032")}, expect={"gfx-not-in-torch-arch-list:0": "warn"},
         alternative="HSA_OVERRIDE_GFX_VERSION", text="set HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    Case(name="cpu-torch-older-wheel-builds-gfx", check="gfx-not-in-torch-arch-list",
         facts={**CPU_TORCH, **one_gpu("gfx906")}, expect={"gfx-not-in-torch-arch-list:0": "warn"},
         text="download.pytorch.org/whl/rocm7.2",
         after={"pip_install": {**ROCM_TORCH, "torch.version": "2.9.1+rocm7.2"}}),
    Case(name="visibility-empty-hides-every-gpu", check="gpu-visibility-env", env={"CUDA_VISIBLE_DEVICES": ""},
         facts={"gpu.pci": NVIDIA_PCI}, expect={"gpu-visibility-env:CUDA_VISIBLE_DEVICES": "fail"}),
    Case(name="visibility-malformed-entry", check="gpu-visibility-env", env={"HIP_VISIBLE_DEVICES": "0,gpu1"},
         facts={"gpu.pci": AMD_PCI}, expect={"gpu-visibility-env:HIP_VISIBLE_DEVICES": "fail"}),
    Case(name="visibility-minus-one", check="gpu-visibility-env", env={"ROCR_VISIBLE_DEVICES": "-1"},
         facts={"gpu.pci": AMD_PCI}, expect={"gpu-visibility-env:ROCR_VISIBLE_DEVICES": "fail"}),
    Case(name="visibility-index-past-the-last-gpu", check="gpu-visibility-env", env={"CUDA_VISIBLE_DEVICES": "3"},
         facts={"gpu.pci": NVIDIA_PCI}, expect={"gpu-visibility-env:CUDA_VISIBLE_DEVICES": "fail"}),
    Case(name="alloc-conf-that-torch-rejects", check="alloc-conf-invalid",
         env={"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:abc"},
         expect={"alloc-conf-invalid:PYTORCH_CUDA_ALLOC_CONF": "fail"}),
    Case(name="library-logging-left-on", check="gpu-library-logging-enabled", env={"AMD_LOG_LEVEL": "4"},
         expect={"gpu-library-logging-enabled:AMD_LOG_LEVEL": "warn"}),
    Case(name="torch-import-fails", check="torch-not-installed",
         facts={"torch.installed": True, "torch.import_error": "OSError: libamdhip64.so.6: cannot open",
                "python.target": TARGET, "gpu.pci": AMD_PCI},
         expect={"torch-not-installed": "fail"}, text="libamdhip64",
         after={"pip_install": {"torch.import_error": None, "torch.version": "2.7.1+rocm6.3"}}),
    Case(name="torch-missing", check="torch-not-installed",
         facts={"torch.installed": False, "python.target": TARGET, "gpu.pci": NVIDIA_PCI},
         expect={"torch-not-installed": "fail"}, text="pip install torch",
         after={"pip_install": {"torch.installed": True, "torch.version": "2.9.1+cu128"}}),
    Case(name="cpu-torch-on-amd", check="torch-build-mismatch",
         facts={**CPU_TORCH, "gpu.pci": AMD_PCI, "python.target": TARGET}, expect={"torch-build-mismatch": "fail"},
         text="download.pytorch.org/whl/rocm", after={"pip_install": ROCM_TORCH}),
    Case(name="rocm-torch-on-nvidia", check="torch-build-mismatch",
         facts={**ROCM_TORCH, "gpu.pci": NVIDIA_PCI, "python.target": TARGET}, expect={"torch-build-mismatch": "fail"},
         text="whl/cu", after={"pip_install": {"torch.flavour": "cuda", "torch.version": "2.9.1+cu128"}}),
    Case(name="override-set-on-windows-in-every-scope", check="hsa-override-on-windows", os="windows",
         env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "Path": r"C:\Windows\system32"},
         observations={"probes": registry(user={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
                                          machine={"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "OS": "Windows_NT"})},
         expect={"hsa-override-on-windows": "warn"}, text="no effect on Windows"),
]


XFAIL = {"path-names-a-removed-rocm": PATH_NOT_FROM_ENV, "rocm-bin-not-on-path": PATH_NOT_FROM_ENV}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=XFAIL.get(c.name, ())) for c in CASES])
def test_fix_makes_check_pass(case):
    assert_fix_passes(case, REGISTRY)


def test_every_place_a_check_attaches_steps_has_a_case():
    cases = Counter(c.check for c in CASES)
    short = {c.id: sites for c in REGISTRY.checks if len(sites := step_sites(c)) > cases[c.id]}
    assert not short, "\n".join(f"{cid}: {cases[cid]} fix case(s) for {len(sites)} places that attach steps: "
                                + ", ".join(sites) for cid, sites in short.items())


def test_the_step_scan_sees_every_check_with_a_case():
    assert {c.check for c in CASES} <= {c.id for c in REGISTRY.checks if step_sites(c)}
