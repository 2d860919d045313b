"""Every check that attaches fix steps: applying its own steps to the machine makes it stop reporting the problem.

One case per place a check attaches steps (and per kind of step it chooses there); a test reads the checks'
source and fails when a check attaches steps in more places than it has cases here.
"""

import json
from collections import Counter
from pathlib import Path

import pytest

from rocm_doctor.engine.registry import load_registry
from rocm_doctor.testing import Case, assert_fix_passes, load_cases, step_sites

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


def denied(groups):
    """/dev/kfd that this session cannot open, and the render group as `groups` describes it."""
    return {**one_gpu("gfx1032"), "linux.device_access": {"/dev/kfd": dict(KFD, read_write=False, errno="EACCES")},
            "linux.groups": {"render": dict({"gid": 992, "members": ["u"]}, **groups)}}


GRANTED = {"linux.groups": {"render": {"gid": 992, "members": ["u"], "in_process": True, "listed": True}},
           "linux.device_access": {"/dev/kfd": dict(KFD, read_write=True)}}
ROCK_OK = {"rocminfo.status": {"state": "ok", "rock_loaded": True, "evidence": []},
           "linux.amdgpu_module": {"loaded": True, "version": "6.8.5"}}
HIP_LIBS = {**ROCM_TORCH, "hip.version": {"text": "6.2.41133", "source": "hipconfig"},
            "torch.file": "/home/u/venv/lib/python3.12/site-packages/torch/__init__.py"}
OWN_HIP = "/home/u/venv/lib/python3.12/site-packages/torch/lib/libamdhip64.so"
IOMMU_ON = {"gpu.inventory": TWO_DGPUS, "linux.kernel_cmdline": {"raw": "quiet amd_iommu=on", "amdgpu": {},
                                                                  "iommu": {}}}
IOMMU_PT = {"linux.kernel_cmdline": {"raw": "quiet amd_iommu=on iommu=pt", "amdgpu": {}, "iommu": {}}}
WSL_OK = {"rocminfo.status": {"state": "ok", "evidence": []}}
MIOPEN_DB = {"path": "/home/u/.config/miopen", "exists": True, "is_dir": True, "writable": False, "source": "default"}
HIPINFO_IGPU_FIRST = {"windows.hipinfo": {"devices": [
    {"index": 0, "name": "AMD Radeon(TM) Graphics", "gfx": "gfx1036", "is_integrated": True},
    {"index": 1, "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100", "is_integrated": False}]}}
SDK = r"C:\Program Files\AMD\ROCm"
TORCH_DIR = r"C:\venv\Lib\site-packages\torch"
SDK_BIN = SDK + r"\7.1\bin"


def scans(**folders):
    """The windows dir-scan probe's record: each folder with whether it exists and the DLLs found in it."""
    return {"windows.dir_scan.test": {"dirs": {f: {"exists": ok, "matches": m} for f, (ok, m) in folders.items()}}}


def torch_probe(*libraries):
    """The torch probe's record on Windows: a ROCm torch in C:\\venv that loaded `libraries` (when given)."""
    stages = [{"stage": "import", "ok": True, "version": "2.9.0+rocm7.1", "hip": "7.1.25424",
               "file": TORCH_DIR + r"\__init__.py"}]
    stages += [{"stage": "libraries", "paths": list(libraries)}] if libraries else []
    return {"torch-probe": {"argv": ["python"], "returncode": 0, "stdout": "\n".join(json.dumps(s) for s in stages)}}


def hip_sdks(*versions, gone=()):
    """File records of the HIP SDK folders under C:\\Program Files\\AMD\\ROCm: `versions` installed, `gone` not."""
    files = {SDK: {"path": SDK, "exists": True, "entries": list(versions)}}
    files.update({f"{SDK}\\{v}": {"path": f"{SDK}\\{v}", "exists": False} for v in gone})
    return files


def vs(has_vc_tools, path=r"C:\BuildTools"):
    instance = {"instance_id": "bt", "installation_path": path, "installation_version": "17.9.34607.119",
                "is_build_tools": True, "has_vc_tools": has_vc_tools, "msvc": [], "product": "BuildTools"}
    return {"instances": [instance] if has_vc_tools is not None else [],
            "vswhere": {"describe": "vswhere.exe exited 0", "path": "vswhere.exe", "format": "json"}}



def blocking_bench(back_to_back=18.0, without=6.0):
    """Bench results on an H200 whose launch section, re-run without CUDA_LAUNCH_BLOCKING=1, got faster."""
    from rocm_doctor.gpu.bench.analysis import measure
    from rocm_doctor.gpu.bench.switches import choose

    def launch(us):
        return {"state": "ok", "detail": "completed", "records": [
            {"bench": "launch", "mode": "back_to_back", "us_per_launch": us},
            {"bench": "launch", "mode": "sync_each", "us_per_launch": 17.0}]}

    results = {"schema": 1, "env": {}, "sections": {"launch": launch(back_to_back)}, "live": {"samples": []},
               "header": {"device": {"type": "cuda", "index": 0, "name": "NVIDIA H200"},
                          "import": {"ok": True, "cuda": "13.0"}}}
    results["switch_ab"] = choose(results, {"CUDA_LAUNCH_BLOCKING": "1"}, measure(results)["lines"], ["launch"])
    results["switch_ab"]["runs"][0]["results"] = {"sections": {"launch": launch(without)}, "live": {"samples": []}}
    return {"bench.results": results, "bench.figures": measure(results)}  # as the bench stage's interpret step sets


PATH_NOT_FROM_ENV = pytest.mark.xfail(
    strict=True, reason="rocm.paths lists PATH as the probe recorded it, not from the environment a step changes")
LOADED_IN_THE_CHILD = pytest.mark.xfail(
    strict=True, reason="torch.libraries is what the torch child loaded: a changed search path shows in the next run only")
OVERRIDE = "HSA_OVERRIDE_GFX_VERSION"

CASES = [
    Case(name="access-not-in-render-group", check="rocm-device-access",
         facts={**one_gpu("gfx1032"), "linux.device_access": {"/dev/kfd": dict(KFD, read_write=False, errno="EACCES")},
                "linux.groups": {"render": {"gid": 992, "members": [], "in_process": False, "listed": False}}},
         expect={"rocm-device-access": "fail"}, text="add $USER to the groups render, video",
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
         text="repo.amd.com/rocm/whl-multi-arch/", after={"pip_install": THEROCK_GFX103X}),
    Case(name="arch-missing-override-alternative", check="gfx-not-in-torch-arch-list",
         facts={**ROCM_TORCH, **one_gpu("gfx1032")}, expect={"gfx-not-in-torch-arch-list:0": "fail"},
         alternative="HSA_OVERRIDE_GFX_VERSION", text="set HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    Case(name="cpu-torch-therock-wheel", check="gfx-not-in-torch-arch-list", facts={**CPU_TORCH, **one_gpu("gfx1032")},
         expect={"gfx-not-in-torch-arch-list:0": "warn"}, text="torch[device-gfx1032]",
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
    Case(name="visibility-repeated-index", check="gpu-visibility-env", env={"CUDA_VISIBLE_DEVICES": "0,0"},
         facts={"gpu.pci": NVIDIA_PCI}, expect={"gpu-visibility-env:CUDA_VISIBLE_DEVICES": "fail"},
         text="names device 0 twice"),
    Case(name="visibility-one-index-past-the-last-gpu", check="gpu-visibility-env",
         env={"HIP_VISIBLE_DEVICES": "0,5"}, facts={"gpu.pci": AMD_PCI},
         expect={"gpu-visibility-env:HIP_VISIBLE_DEVICES": "warn"}, text="only 1 GPU(s) exist"),
    Case(name="visibility-hip-index-past-what-rocr-leaves", check="gpu-visibility-env",
         env={"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "1"}, facts={"gpu.pci": AMD_PCI},
         expect={"gpu-visibility-env:HIP_VISIBLE_DEVICES": "fail"}, text="together the two hide every GPU"),
    Case(name="catalogued-value-unreadable", check="env-value-invalid", env={"CUDA_DEVICE_MAX_CONNECTIONS": "many"},
         expect={"env-value-invalid:CUDA_DEVICE_MAX_CONNECTIONS": "warn"}, text="'many' is not an integer"),
    Case(name="misspelt-visibility-variable", check="env-name-misspelt", env={"CUDA_VISIBLE_DEVICE": "1"},
         expect={"env-name-misspelt:CUDA_VISIBLE_DEVICE": "warn"}, text="CUDA_VISIBLE_DEVICES"),
    Case(name="visibility-uuid-of-no-gpu-here", check="gpu-visibility-unknown-id",
         env={"CUDA_VISIBLE_DEVICES": "GPU-00000000-1111-2222-3333-444444444444"},
         facts={"gpu.live": {"gpus": [{"vendor": "nvidia", "index": 0, "name": "NVIDIA H200", "mig_devices": [],
                                       "uuid": "GPU-ea8e14dc-90b1-b02d-efa0-8cc7d80f63b0"}], "processes": []}},
         expect={"gpu-visibility-unknown-id:CUDA_VISIBLE_DEVICES": "fail"}),
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
         expect={"torch-not-installed": "fail"}, text="install torch from",
         after={"pip_install": {"torch.installed": True, "torch.version": "2.9.1+cu128"}}),
    Case(name="torch-missing-no-gpu", check="torch-not-installed",
         facts={"torch.installed": False, "python.target": TARGET, "gpu.pci": [], "gpu.inventory": []},
         expect={"torch-not-installed": "fail"}, text="download.pytorch.org/whl/cpu",
         after={"pip_install": {"torch.installed": True, "torch.version": "2.14.0+cpu"}}),
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
    Case(name="access-after-group-change", check="rocm-device-access",
         facts=denied({"in_process": False, "listed": True}), expect={"rocm-device-access": "fail"},
         text="Log out and back in", after={"advice": GRANTED}),
    Case(name="access-newgrp-alternative", check="rocm-device-access",
         facts=denied({"in_process": False, "listed": True}), expect={"rocm-device-access": "fail"},
         alternative="render group", text="a shell with the render group", after={"run_command": GRANTED}),
    Case(name="kfd-enomem-inbox-driver", check="rocm-kernel-driver",
         facts={**one_gpu("gfx1032"), "rocminfo.status": {"state": "kfd-no-memory", "evidence": []},
                "linux.amdgpu_module": {"loaded": True}},
         expect={"rocm-kernel-driver": "fail"}, text="build the DKMS modules", after={"run_command": ROCK_OK}),
    Case(name="amdgpu-not-loaded", check="rocm-kernel-driver",
         facts={**one_gpu("gfx1032"), "rocminfo.status": {"state": "rock-not-loaded", "evidence": []},
                "linux.amdgpu_module": {"loaded": False}, "linux.kernel_cmdline": {"raw": "quiet splash"}},
         expect={"rocm-kernel-driver": "fail"}, text="load the amdgpu kernel driver", after={"run_command": ROCK_OK}),
    Case(name="amdgpu-not-loaded-install-alternative", check="rocm-kernel-driver",
         facts={**one_gpu("gfx1032"), "rocminfo.status": {"state": "rock-not-loaded", "evidence": []},
                "linux.amdgpu_module": {"loaded": False}, "linux.kernel_cmdline": {"raw": "quiet splash"}},
         expect={"rocm-kernel-driver": "fail"}, alternative="amdgpu-dkms", after={"run_command": ROCK_OK}),
    Case(name="hip-platform-nvidia", check="hip-runtime-mismatch", env={"HIP_PLATFORM": "nvidia"},
         facts=one_gpu("gfx1032"), expect={"hip-runtime-mismatch:platform": "fail"}, text="unset HIP_PLATFORM"),
    Case(name="hipconfig-detects-nvidia", check="hip-runtime-mismatch",
         facts={**one_gpu("gfx1032"), "hip.config": {"platform": "nvidia", "compiler": "nvcc"}},
         expect={"hip-runtime-mismatch:platform": "fail"}, text="set HIP_PLATFORM=amd"),
    Case(name="hip-hcc-fallback", check="hip-runtime-mismatch",
         facts={**one_gpu("gfx1032"), "hip.config": {"platform": "hcc", "compiler": "hcc", "runtime": "HCC"}},
         expect={"hip-runtime-mismatch:hcc": "fail"}, text="install the full ROCm stack",
         after={"run_command": {"hip.config": {"platform": "amd", "compiler": "clang", "runtime": "rocclr"}}}),
    Case(name="hip-two-runtimes", check="hip-runtime-mismatch", env={"LD_LIBRARY_PATH": "/opt/rocm/lib"},
         facts={**HIP_LIBS, "torch.libraries": [OWN_HIP, "/opt/rocm/lib/libamdhip64.so.6"]},
         expect={"hip-runtime-mismatch:runtime": "fail"}, text="remove /opt/rocm/lib from LD_LIBRARY_PATH"),
    Case(name="hip-system-runtime-loaded", check="hip-runtime-mismatch", env={"LD_LIBRARY_PATH": "/opt/rocm/lib"},
         facts={**HIP_LIBS, "torch.libraries": ["/opt/rocm/lib/libamdhip64.so.6"]},
         expect={"hip-runtime-mismatch:runtime": "fail"}, text="remove /opt/rocm/lib from LD_LIBRARY_PATH"),
    Case(name="igpu-hidden-from-rocm-alternative", check="igpu-enumerated-first", facts={"gpu.inventory": DGPU_IGPU},
         expect={"igpu-enumerated-first": "warn"}, alternative="ROCR_VISIBLE_DEVICES",
         text="set ROCR_VISIBLE_DEVICES=1"),
    Case(name="igpu-is-hip-device-0-on-windows", check="igpu-enumerated-first", os="windows",
         facts=HIPINFO_IGPU_FIRST, expect={"igpu-enumerated-first": "warn"}, text="set HIP_VISIBLE_DEVICES=1"),
    Case(name="override-malformed-needed", check="hsa-override-gfx-version", env={OVERRIDE: "gfx1030"},
         facts={**ROCM_TORCH, **one_gpu("gfx1032")}, expect={f"hsa-override-gfx-version:{OVERRIDE}": "fail"},
         text=f"set {OVERRIDE}=10.3.0"),
    Case(name="override-malformed-not-needed", check="hsa-override-gfx-version", env={OVERRIDE: "11"},
         facts={**ROCM_TORCH, **one_gpu("gfx1100")}, expect={f"hsa-override-gfx-version:{OVERRIDE}": "fail"},
         text=f"unset {OVERRIDE}"),
    Case(name="override-names-the-gpus-own-gfx", check="hsa-override-gfx-version", env={OVERRIDE: "10.3.2"},
         facts={**ROCM_TORCH, **one_gpu("gfx1032")}, expect={"hsa-override-gfx-version:0": "info"},
         problems=["hsa-override-gfx-version:0"], text=f"set {OVERRIDE}=10.3.0"),
    Case(name="override-also-hits-the-igpu", check="hsa-override-gfx-version", env={OVERRIDE: "10.3.0"},
         facts={**ROCM_TORCH, "gpu.inventory": [gpu(0, "gfx90c", igpu=True, node=1), gpu(1, "gfx1031", node=2)]},
         expect={"hsa-override-gfx-version:0": "warn"}, text=f"set {OVERRIDE}_2=10.3.0"),
    Case(name="rocm-path-names-a-removed-rocm", check="rocm-paths", env={"ROCM_PATH": "/opt/rocm-5.7.0"},
         observations={"probes": {"rocm.paths": {"PATH": [], "LD_LIBRARY_PATH": [], "roots": [
             {"path": "/opt/rocm", "exists": True, "realpath": "/opt/rocm-6.3.3"},
             {"path": "/opt/rocm-5.7.0", "exists": False, "realpath": None}]}}},
         expect={"rocm-paths:ROCM_PATH": "fail"}, text="set ROCM_PATH=/opt/rocm"),
    Case(name="rocm-path-unset-alternative", check="rocm-paths", env={"ROCM_PATH": "/opt/rocm-5.7.0"},
         observations={"probes": {"rocm.paths": {"PATH": [], "LD_LIBRARY_PATH": [], "roots": [
             {"path": "/opt/rocm", "exists": True, "realpath": "/opt/rocm-6.3.3"},
             {"path": "/opt/rocm-5.7.0", "exists": False, "realpath": None}]}}},
         expect={"rocm-paths:ROCM_PATH": "fail"}, alternative="unset ROCM_PATH"),
    Case(name="hang-with-runtime-power-management-grubby", check="gpu-hang-power-state",
         facts={"gpu.inventory": TWO_DGPUS, "torch.probe": {"state": "hung", "detail": "no answer in 60 s"},
                "linux.kernel_cmdline": {"raw": "quiet splash", "amdgpu": {}, "iommu": {}}},
         expect={"gpu-hang-power-state": "warn"}, alternative="grubby", after={"run_command": {
             "linux.kernel_cmdline": RUNPM_OFF}}),
    Case(name="iommu-translating-on-multi-gpu", check="iommu-multi-gpu-hang-risk", facts=IOMMU_ON,
         expect={"iommu-multi-gpu-hang-risk": "warn"}, text="add iommu=pt", after={"run_command": IOMMU_PT}),
    Case(name="iommu-grubby-alternative", check="iommu-multi-gpu-hang-risk", facts=IOMMU_ON,
         expect={"iommu-multi-gpu-hang-risk": "warn"}, alternative="grubby", after={"run_command": IOMMU_PT}),
    Case(name="switch-measured-to-slow-launches", check="env-switch-slows", env={"CUDA_LAUNCH_BLOCKING": "1"},
         facts=blocking_bench(), expect={"env-switch-slows:CUDA_LAUNCH_BLOCKING": "warn"},
         text="unset CUDA_LAUNCH_BLOCKING"),
    Case(name="nccl-p2p-disabled", check="nccl-transport-disabled", env={"NCCL_P2P_DISABLE": "1"},
         expect={"nccl-transport-disabled:NCCL_P2P_DISABLE": "warn"}, text="unset NCCL_P2P_DISABLE"),
    Case(name="wsl1-without-dxg", check="wsl-rocm-support", os="wsl", env={"WSL_DISTRO_NAME": "Ubuntu"},
         facts={**WSL_OK, "linux.device_access": {"/dev/dxg": {"path": "/dev/dxg", "exists": False}}},
         expect={"wsl-rocm-support": "fail"}, text="convert Ubuntu to WSL 2", after={"run_command": {
             "linux.device_access": {"/dev/dxg": {"path": "/dev/dxg", "exists": True}}}}),
    Case(name="wsl-runtime-not-installed", check="wsl-rocm-support", os="wsl",
         facts={"rocminfo.status": {"state": "not-installed", "evidence": []}}, expect={"wsl-rocm-support": "fail"},
         text="install ROCm with its WSL runtime", after={"run_command": WSL_OK}),
    Case(name="wsl-runtime-not-in-use", check="wsl-rocm-support", os="wsl",
         facts={"rocminfo.status": {"state": "rock-not-loaded", "evidence": []}}, expect={"wsl-rocm-support": "fail"},
         text="install ROCm with its WSL runtime", after={"run_command": WSL_OK}),
    Case(name="wsl-release-without-wsl-build", check="wsl-rocm-support", os="wsl",
         facts={"rocminfo.status": {"state": "out-of-resources", "evidence": []},
                "hip.version": {"text": "6.4.2", "source": "hipconfig"}},
         expect={"wsl-rocm-support": "fail"}, text="6.4.2.1", after={"advice": {}, "run_command": WSL_OK}),
    Case(name="miopen-db-not-writable", check="miopen-db-not-writable",
         facts={**ROCM_TORCH, "miopen.dirs": {"MIOPEN_USER_DB_PATH": MIOPEN_DB}},
         expect={"miopen-db-not-writable:MIOPEN_USER_DB_PATH": "warn"}, text="make /home/u/.config/miopen yours",
         after={"run_command": {"miopen.dirs": {"MIOPEN_USER_DB_PATH": dict(MIOPEN_DB, writable=True)}}}),
    Case(name="package-index-gone", check="package-index-unreachable",
         facts={"online.package_index": [{"url": "https://download.pytorch.org/whl/rocm5.2", "reachable": False,
                                          "error_kind": "http", "status": 404, "error": "HTTP 404"}]},
         expect={"package-index-unreachable": "warn"}, text="fetch current wheel indexes", after={"run_command": {
             "online.package_index": [{"url": "https://download.pytorch.org/whl/rocm7.1", "reachable": True}]}}),
    Case(name="variable-in-user-and-machine-scope", check="env-scope-conflict", os="windows",
         env={"HIP_VISIBLE_DEVICES": "1"},
         observations={"probes": registry(user={"HIP_VISIBLE_DEVICES": "1"}, machine={"HIP_VISIBLE_DEVICES": "0"})},
         expect={"env-scope-conflict:HIP_VISIBLE_DEVICES": "warn"}, text="unset HIP_VISIBLE_DEVICES (user)"),
    Case(name="variable-in-both-scopes-keep-user", check="env-scope-conflict", os="windows",
         env={"HIP_VISIBLE_DEVICES": "1"},
         observations={"probes": registry(user={"HIP_VISIBLE_DEVICES": "1"}, machine={"HIP_VISIBLE_DEVICES": "0"})},
         expect={"env-scope-conflict:HIP_VISIBLE_DEVICES": "warn"}, alternative="Machine copy"),
    Case(name="shell-predates-a-variable", check="env-set-but-shell-stale", os="windows",
         env={"Path": r"C:\m"}, observations={"probes": registry(user={"HIP_VISIBLE_DEVICES": "1"},
                                                                  machine={"Path": r"C:\m"})},
         expect={"env-set-but-shell-stale:HIP_VISIBLE_DEVICES": "warn"}, text="set HIP_VISIBLE_DEVICES=1 (process)"),
    Case(name="shell-predates-a-path-entry", check="env-set-but-shell-stale", os="windows",
         env={"Path": r"C:\m"}, observations={"probes": registry(user={"Path": r"C:\u"}, machine={"Path": r"C:\m"})},
         expect={"env-set-but-shell-stale:Path:user": "warn"}, text="set Path=C:\\m;C:\\u (process)"),
    Case(name="path-folder-gone", check="path-entries-missing", os="windows", env={"Path": r"C:\Windows;C:\gone"},
         observations={"probes": {**registry(user={"Path": r"C:\gone"}, machine={"Path": r"C:\Windows"}),
                                  **scans(**{r"C:\Windows": (True, []), r"C:\gone": (False, [])})}},
         expect={"path-entries-missing": "info"}, problems=["path-entries-missing"],
         text=r"remove C:\gone from Path (user)"),
    Case(name="hip-path-names-a-removed-sdk", check="hip-sdk-missing", os="windows",
         env={"HIP_PATH": SDK + "\\5.7\\"},
         observations={"probes": registry(machine={"HIP_PATH": SDK + "\\5.7\\"}), "files": hip_sdks("6.4", gone=["5.7"])},
         expect={"hip-sdk-missing:HIP_PATH": "warn"}, text="unset HIP_PATH (machine)"),
    Case(name="hip-path-to-the-installed-sdk", check="hip-sdk-missing", os="windows",
         env={"HIP_PATH": SDK + "\\5.7\\"},
         observations={"probes": registry(machine={"HIP_PATH": SDK + "\\5.7\\"}), "files": hip_sdks("6.4", gone=["5.7"])},
         expect={"hip-sdk-missing:HIP_PATH": "warn"}, alternative="installed SDK"),
    Case(name="hip-path-older-than-torch", check="hip-sdk-version-mismatch", os="windows",
         env={"HIP_PATH": SDK + "\\5.7\\"}, facts={"torch.hip": "6.4.43484"},
         observations={"probes": registry(machine={"HIP_PATH": SDK + "\\5.7\\"}), "files": hip_sdks("6.4", "5.7")},
         expect={"hip-sdk-version-mismatch:torch": "warn"}, text="set HIP_PATH=C:\\Program Files\\AMD\\ROCm\\6.4\\"),
    Case(name="hip-path-not-the-newest-sdk", check="hip-sdk-version-mismatch", os="windows",
         env={"HIP_PATH": SDK + "\\5.7\\"},
         observations={"probes": registry(machine={"HIP_PATH": SDK + "\\5.7\\"}), "files": hip_sdks("6.4", "5.7")},
         expect={"hip-sdk-version-mismatch:newest": "info"}, problems=["hip-sdk-version-mismatch:newest"]),
    Case(name="path-copy-of-torchs-hip-runtime", check="dll-shadowing", os="windows",
         env={"Path": r"C:\Windows\System32;" + SDK_BIN},
         observations={"commands": torch_probe(), "probes": {**registry(user={"Path": SDK_BIN}), **scans(**{
             TORCH_DIR + r"\lib": (True, ["amdhip64_7.dll"]), SDK_BIN: (True, ["amdhip64_7.dll"])})}},
         expect={"dll-shadowing": "warn"}, text=f"remove {SDK_BIN} from Path (user)"),
    Case(name="torch-loaded-a-foreign-hip-runtime", check="dll-shadowing", os="windows",
         env={"Path": r"C:\Windows\System32;" + SDK_BIN},
         observations={"commands": torch_probe(SDK_BIN + r"\amdhip64_7.dll"), "probes": {
             **registry(user={"Path": SDK_BIN}),
             **scans(**{TORCH_DIR + r"\lib": (True, ["amdhip64_7.dll"]), SDK_BIN: (True, ["amdhip64_7.dll"])})}},
         expect={"dll-shadowing": "fail"}, text=f"remove {SDK_BIN} from Path (process)"),
    Case(name="two-hip-runtimes-in-one-process", check="hip-runtime-loaded-twice", os="windows",
         env={"Path": r"C:\Windows\System32;" + SDK_BIN},
         observations={"commands": torch_probe(TORCH_DIR + r"\lib\amdhip64_7.dll", SDK_BIN + r"\amdhip64_6.dll"),
                       "probes": {**registry(user={"Path": SDK_BIN}), **scans(**{
                           TORCH_DIR + r"\lib": (True, ["amdhip64_7.dll"]), SDK_BIN: (True, ["amdhip64_6.dll"])})}},
         expect={"hip-runtime-loaded-twice": "fail"}, text=f"remove {SDK_BIN} from Path (user)"),
    Case(name="no-visual-studio", check="vs-cpp-workload-missing", os="windows",
         facts={**ROCM_TORCH, "windows.vs": vs(None)}, expect={"vs-cpp-workload-missing:none": "warn"},
         text="install Build Tools", after={"run_command": {"windows.vs": vs(True)}}),
    Case(name="build-tools-without-cpp", check="vs-cpp-workload-missing", os="windows",
         facts={**ROCM_TORCH, "windows.vs": vs(False)}, expect={"vs-cpp-workload-missing:bt": "warn"},
         text="Microsoft.VisualStudio.Component.VC.Tools.x86.x64", after={"vs_component": {"windows.vs": vs(True)}}),
    Case(name="hiprtc-without-cxx-headers", check="hiprtc-headers-missing", os="windows",
         facts={**ROCM_TORCH, "windows.vs": vs(False), "windows.cxx_headers": {"reachable": False, "via": []}},
         expect={"hiprtc-headers-missing": "warn"}, text="add Visual Studio component(s)", after={"vs_component": {
             "windows.cxx_headers": {"reachable": True, "ucrt": True, "via": ["MSVC 14.39"]}}}),
    Case(name="not-a-developer-shell", check="vs-dev-shell-inactive", os="windows",
         env={"PSModulePath": r"C:\Users\u\Documents\PowerShell\Modules;C:\Program Files\PowerShell\Modules"},
         facts={"windows.vs": vs(True), "windows.devshell": {"active": False, "include": [], "cl_on_path": []}},
         expect={"vs-dev-shell-inactive": "info"}, problems=["vs-dev-shell-inactive"],
         text="make this PowerShell window a developer shell",
         after={"run_command": {"windows.devshell": {"active": True, "include": ["C:\\x"],
                                                     "cl_on_path": [r"C:\BuildTools\VC\bin\cl.exe"]}}}),
]


for _cases_file in sorted((Path(__file__).parent / "cases").glob("*-fix-cases.json")):  # one file per area
    CASES += load_cases(_cases_file)
XFAIL = {"path-names-a-removed-rocm": PATH_NOT_FROM_ENV, "rocm-bin-not-on-path": PATH_NOT_FROM_ENV,
         "hip-two-runtimes": LOADED_IN_THE_CHILD, "hip-system-runtime-loaded": LOADED_IN_THE_CHILD,
         "torch-loaded-a-foreign-hip-runtime": LOADED_IN_THE_CHILD, "two-hip-runtimes-in-one-process": LOADED_IN_THE_CHILD}


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
