"""AMD checks as pure functions: facts in, findings out, one table of cases."""

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.registry import load_registry
from rocm_doctor.engine.shells import detect_shell
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import derive_again

REGISTRY = load_registry(include_plugins=False)
ROCM63 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200",
          "gfx1201"]
TORCH_LIB = "/venv/lib/python3.12/site-packages/torch/lib"


def gpu(index, gfx, igpu=False, node=None, name=None, uuid=None, sources=None):
    return {"index": index, "gfx": gfx, "igpu": igpu, "node": node, "name": name or f"GPU {gfx}", "uuid": uuid,
            "device_id": None, "sources": sources or {"kfd": gfx}}


DGPU_IGPU = [gpu(0, "gfx90c", igpu=True, node=1, name="AMD Radeon Graphics"),
             gpu(1, "gfx1030", node=2, name="AMD Radeon RX 6800", uuid="GPU-362702d6dbbf2d1d")]
ROCM_TORCH = {"torch.flavour": "rocm", "torch.version": "2.7.1+rocm6.3", "torch.hip": "6.3.42131-fa1d09cbd",
              "torch.arch_list": ROCM63, "torch.file": f"{TORCH_LIB[:-4]}/__init__.py"}
HIPINFO_IGPU_FIRST = {"devices": [
    {"index": 0, "name": "AMD Radeon(TM) Graphics", "gfx": "gfx1036", "is_integrated": True},
    {"index": 1, "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100", "is_integrated": False}]}
TWO_DGPUS = [gpu(0, "gfx1100", node=1, name="AMD Radeon RX 7900 XTX"),
             gpu(1, "gfx1100", node=2, name="AMD Radeon RX 7900 XTX")]
PS_MODULES = r"C:\Users\u\Documents\PowerShell\Modules;C:\Program Files\PowerShell\Modules"
NO_DEVICE = 'checkHipErrors() HIP API error = 0100 "no ROCm-capable device is detected" from file <hipInfo.cpp>'
CMDLINE = {"raw": "BOOT_IMAGE=/vmlinuz ro quiet splash", "amdgpu": {}, "iommu": {}}
GFX1032 = {"gpu.inventory": [gpu(0, "gfx1032", node=1, name="AMD Radeon RX 6650 XT")]}
GROUPS = {"render": {"gid": 992, "members": ["u"], "in_process": False, "listed": True}, "video": None}
DENIED = {"/dev/kfd": {"path": "/dev/kfd", "exists": True, "mode": "crw-rw----", "gid": 992, "group": "render",
                       "read_write": False, "errno": "EACCES"}}


def paths(installs=(), path=(), ld=()):
    def entries(items):
        return [{"entry": e, "exists": ok, "realpath": real} for e, ok, real in items]
    return {"installs": list(installs), "PATH": entries(path), "LD_LIBRARY_PATH": entries(ld)}


def libs(gfx):
    return [{"path": "/opt/rocm/lib/rocblas/library", "library": "rocblas", "owner": "/opt/rocm", "exists": True,
             "files": 10, "gfx": gfx}]


# (case id, check id, os, env, facts, {finding id: status}, text that must appear in message/remediation/evidence)
CASES = [
    ("inventory-two", "gpu-inventory", "linux", {}, {"gpu.inventory": DGPU_IGPU, "gpu.inventory.disagreements": []},
     {"gpu-inventory": "info"}, "gfx90c (integrated)"),
    ("inventory-override-explained", "gpu-inventory", "linux", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
     {"gpu.inventory": [gpu(0, "gfx1032", node=1, sources={"kfd": "gfx1032", "rocminfo": "gfx1030"})],
      "gpu.inventory.disagreements": ["GPU 0: kfd says gfx1032, rocminfo says gfx1030; HSA_OVERRIDE_GFX_VERSION=10.3.0 "
                                      "is in effect"]},
     {"gpu-inventory": "info"}, "runs gfx1030 code"),
    ("inventory-none", "gpu-inventory", "linux", {}, {"gpu.inventory": []}, {"gpu-inventory": "skip"}, "CPU agents"),
    ("igpu-first", "igpu-enumerated-first", "linux", {"SHELL": "/bin/bash"}, {"gpu.inventory": DGPU_IGPU},
     {"igpu-enumerated-first": "warn"}, "export HIP_VISIBLE_DEVICES=1"),
    ("igpu-first-fish", "igpu-enumerated-first", "linux", {"SHELL": "/usr/bin/fish"}, {"gpu.inventory": DGPU_IGPU},
     {"igpu-enumerated-first": "warn"}, "set -gx HIP_VISIBLE_DEVICES '1'"),
    ("igpu-first-rocr-uuid", "igpu-enumerated-first", "linux", {}, {"gpu.inventory": DGPU_IGPU},
     {"igpu-enumerated-first": "warn"}, "ROCR_VISIBLE_DEVICES=GPU-362702d6dbbf2d1d"),
    ("igpu-first-selected", "igpu-enumerated-first", "linux", {"HIP_VISIBLE_DEVICES": "1"},
     {"gpu.inventory": DGPU_IGPU}, {"igpu-enumerated-first": "ok"}, "discrete"),
    ("igpu-first-override-hits-igpu", "igpu-enumerated-first", "linux", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
     {"gpu.inventory": DGPU_IGPU}, {"igpu-enumerated-first": "warn"}, "also applies to the iGPU"),
    ("dgpu-first", "igpu-enumerated-first", "linux", {}, {"gpu.inventory": DGPU_IGPU[::-1]},
     {"igpu-enumerated-first": "ok"}, "RX 6800"),
    ("igpu-first-windows", "igpu-enumerated-first", "windows", {"PSModulePath": PS_MODULES},
     {"windows.hipinfo": HIPINFO_IGPU_FIRST}, {"igpu-enumerated-first": "warn"}, "$env:HIP_VISIBLE_DEVICES = '1'"),
    ("igpu-first-windows-cmd", "igpu-enumerated-first", "windows", {}, {"windows.hipinfo": HIPINFO_IGPU_FIRST},
     {"igpu-enumerated-first": "warn"}, 'set "HIP_VISIBLE_DEVICES=1"'),
    ("igpu-first-windows-selected", "igpu-enumerated-first", "windows", {"HIP_VISIBLE_DEVICES": "1"},
     {"windows.hipinfo": HIPINFO_IGPU_FIRST}, {"igpu-enumerated-first": "ok"}, "selects AMD Radeon RX 7900 XTX"),
    ("igpu-first-windows-no-hipinfo", "igpu-enumerated-first", "windows", {}, {"gpu.inventory": DGPU_IGPU},
     {"igpu-enumerated-first": "skip"}, "needs hipInfo's output"),
    ("support-mi300", "gfx-support-matrix", "linux", {}, {"gpu.inventory": [gpu(0, "gfx942")],
                                                         "hip.version": {"text": "6.3.42134"}},
     {"gfx-support-matrix:0": "ok"}, "supported"),
    ("support-gfx1032", "gfx-support-matrix", "linux", {}, dict(GFX1032, **{"hip.version": {"text": "6.3.42134"}}),
     {"gfx-support-matrix:0": "warn"}, "HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("support-gfx906-deprecated", "gfx-support-matrix", "linux", {}, {"gpu.inventory": [gpu(0, "gfx906")],
                                                                     "torch.hip": "6.3.42131"},
     {"gfx-support-matrix:0": "warn"}, "deprecated"),
    ("support-windows-runtime-only", "gfx-support-matrix", "windows", {}, dict(GFX1032, **{"torch.hip": "6.2.41512"}),
     {"gfx-support-matrix:0": "warn"}, "runtime-only"),
    ("support-wsl-elsewhere", "gfx-support-matrix", "wsl", {}, GFX1032, {"gfx-support-matrix": "skip"}, "wsl"),
    ("arch-covered-suffix", "gfx-not-in-torch-arch-list", "linux", {},
     dict(ROCM_TORCH, **{"gpu.inventory": [gpu(0, "gfx942")], "torch.arch_list": ["gfx942:sramecc+:xnack-"]}),
     {"gfx-not-in-torch-arch-list:0": "ok"}, "gfx942"),
    ("arch-covered-generic", "gfx-not-in-torch-arch-list", "linux", {},
     dict(ROCM_TORCH, **GFX1032, **{"torch.arch_list": ["gfx10-3-generic"]}),
     {"gfx-not-in-torch-arch-list:0": "ok"}, "gfx1032"),
    ("arch-missing-gfx1032", "gfx-not-in-torch-arch-list", "linux", {}, dict(ROCM_TORCH, **GFX1032),
     {"gfx-not-in-torch-arch-list:0": "fail"}, "https://repo.amd.com/rocm/whl-multi-arch/"),
    ("arch-missing-override-advice", "gfx-not-in-torch-arch-list", "linux", {"SHELL": "/bin/zsh"},
     dict(ROCM_TORCH, **GFX1032), {"gfx-not-in-torch-arch-list:0": "fail"}, "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("arch-native-index-first", "gfx-not-in-torch-arch-list", "linux", {},
     dict(ROCM_TORCH, **{"gpu.inventory": [gpu(0, "gfx1102")], "torch.version": "2.6.0+rocm6.2.4",
                         "torch.arch_list": [g for g in ROCM63 if g != "gfx1102"]}),
     {"gfx-not-in-torch-arch-list:0": "fail"}, "install torch from https://download.pytorch.org/whl/rocm"),
    ("arch-real-gfx-not-override", "gfx-not-in-torch-arch-list", "linux", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
     dict(ROCM_TORCH, **{"gpu.inventory": [gpu(0, "gfx1030", node=1, sources={"kfd": "gfx1032", "torch": "gfx1030"})]}),
     {"gfx-not-in-torch-arch-list:0": "info"}, "makes the runtime load its gfx1030 code"),
    ("arch-from-table", "gfx-not-in-torch-arch-list", "linux", {},
     dict(ROCM_TORCH, **GFX1032, **{"torch.arch_list": None}), {"gfx-not-in-torch-arch-list:0": "fail"},
     "data/torch_wheels.json"),
    ("arch-cpu-torch", "gfx-not-in-torch-arch-list", "linux", {},
     dict(GFX1032, **{"torch.flavour": "cpu", "torch.version": "2.5.1+cpu"}),
     {"gfx-not-in-torch-arch-list:0": "warn"}, "HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("arch-windows-no-override", "gfx-not-in-torch-arch-list", "windows", {}, dict(ROCM_TORCH, **GFX1032),
     {"gfx-not-in-torch-arch-list:0": "fail"}, "torch[device-gfx1032]"),
    ("override-malformed", "hsa-override-gfx-version", "linux", {"HSA_OVERRIDE_GFX_VERSION": "gfx1030"}, GFX1032,
     {"hsa-override-gfx-version:HSA_OVERRIDE_GFX_VERSION": "fail"}, "10.3.0"),
    ("override-wrong-family", "hsa-override-gfx-version", "linux", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
     dict(ROCM_TORCH, **GFX1032), {"hsa-override-gfx-version:0": "fail"}, "The right value for gfx1032 is 10.3.0"),
    ("override-rdna4-not-rdna3", "hsa-override-gfx-version", "linux", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
     dict(ROCM_TORCH, **{"gpu.inventory": [gpu(0, "gfx1201")]}), {"hsa-override-gfx-version:0": "fail"},
     "install a torch built for gfx1201"),
    ("override-right", "hsa-override-gfx-version", "linux", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
     dict(ROCM_TORCH, **GFX1032), {"hsa-override-gfx-version:0": "ok"}, "right override"),
    ("override-unneeded", "hsa-override-gfx-version", "linux", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
     dict(ROCM_TORCH, **{"gpu.inventory": [gpu(0, "gfx1102")]}), {"hsa-override-gfx-version:0": "warn"},
     "unset HSA_OVERRIDE_GFX_VERSION"),
    ("override-from-bashrc", "hsa-override-gfx-version", "linux", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
     dict(ROCM_TORCH, **{"gpu.inventory": [gpu(0, "gfx1101")], "shell.rc_lines": [
         {"file": "~/.bashrc", "line_no": 12, "variable": "HSA_OVERRIDE_GFX_VERSION",
          "line": "export HSA_OVERRIDE_GFX_VERSION=11.0.0"}]}),
     {"hsa-override-gfx-version:0": "warn"}, "unset HSA_OVERRIDE_GFX_VERSION (user)"),
    ("override-hits-igpu", "hsa-override-gfx-version", "linux", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
     dict(ROCM_TORCH, **{"gpu.inventory": [gpu(0, "gfx1032", node=1), gpu(1, "gfx90c", igpu=True, node=2)]}),
     {"hsa-override-gfx-version:0": "ok", "hsa-override-gfx-version:1": "warn"},
     "export HSA_OVERRIDE_GFX_VERSION_1=10.3.0"),
    ("override-missing", "hsa-override-gfx-version", "linux", {}, dict(ROCM_TORCH, **GFX1032),
     {"hsa-override-gfx-version:0": "warn"}, "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("override-windows-elsewhere", "hsa-override-gfx-version", "windows", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
     GFX1032, {"hsa-override-gfx-version": "skip"}, "windows"),
    ("hip-hcc-fallback", "hip-runtime-mismatch", "linux", {},
     {"hip.config": {"platform": "hcc", "compiler": "hcc", "runtime": "HCC",
                     "problems": ["Can't exec \"/opt/rocm/hcc/bin/hcc\""]}, "hip.version": {"text": "4.0.0"}},
     {"hip-runtime-mismatch:hcc": "fail"}, "rocm-hip-runtime"),
    ("hip-platform-nvidia", "hip-runtime-mismatch", "linux", {"HIP_PLATFORM": "nvidia"}, GFX1032,
     {"hip-runtime-mismatch:platform": "fail"}, "unset HIP_PLATFORM"),
    ("hip-system-runtime-loaded", "hip-runtime-mismatch", "linux", {"LD_LIBRARY_PATH": "/opt/rocm/lib"},
     dict(ROCM_TORCH, **{"hip.version": {"text": "6.2.41133"}, "torch.libraries": ["/opt/rocm/lib/libamdhip64.so.6"]}),
     {"hip-runtime-mismatch:runtime": "fail"}, "LD_LIBRARY_PATH"),
    ("hip-own-runtime", "hip-runtime-mismatch", "linux", {},
     dict(ROCM_TORCH, **{"hip.version": {"text": "6.2.41133"}, "torch.libraries": [f"{TORCH_LIB}/libamdhip64.so"]}),
     {"hip-runtime-mismatch:runtime": "info"}, "brings its own HIP 6.3"),
    ("hip-two-runtimes", "hip-runtime-mismatch", "linux", {},
     dict(ROCM_TORCH, **{"torch.libraries": [f"{TORCH_LIB}/libamdhip64.so", "/opt/rocm/lib/libamdhip64.so.6"]}),
     {"hip-runtime-mismatch:runtime": "fail"}, "2 HIP runtimes"),
    ("hip-none-nvidia", "hip-runtime-mismatch", "linux", {"HIP_PLATFORM": "nvidia"},
     {"gpu.inventory": [], "gpu.pci": [{"vendor": "nvidia"}]}, {"hip-runtime-mismatch": "skip"}, "neither"),
    ("paths-rocm-path-gone", "rocm-paths", "linux", {"ROCM_PATH": "/opt/rocm-5.7.0"},
     {"rocm.paths": paths(installs=[{"path": "/opt/rocm-5.7.0", "exists": False}])},
     {"rocm-paths:ROCM_PATH": "fail"}, "does not exist"),
    ("paths-mixed", "rocm-paths", "linux", {},
     {"rocm.paths": paths(installs=[{"path": "/opt/rocm", "exists": True, "realpath": "/opt/rocm-6.3.3", "active": True}],
                          path=[("/opt/rocm/bin", True, "/opt/rocm-6.3.3/bin")],
                          ld=[("/opt/rocm-6.2.0/lib", True, "/opt/rocm-6.2.0/lib"), ("/opt/rocm/lib", True, "/opt/rocm-6.3.3/lib")])},
     {"rocm-paths:LD_LIBRARY_PATH-mixed": "warn"}, "the first, /opt/rocm-6.2.0, wins"),
    ("paths-stale-entry", "rocm-paths", "linux", {},
     {"rocm.paths": paths(path=[("/opt/rocm-5.7.0/bin", False, None)])}, {"rocm-paths:PATH-missing": "warn"},
     "/opt/rocm-5.7.0/bin"),
    ("paths-ok", "rocm-paths", "linux", {},
     {"rocm.paths": paths(installs=[{"path": "/opt/rocm", "exists": True, "realpath": "/opt/rocm-6.3.3", "active": True,
                                     "version": "6.3.3-74"}], path=[("/opt/rocm/bin", True, "/opt/rocm-6.3.3/bin")])},
     {"rocm-paths": "ok"}, "6.3.3"),
    ("access-new-login", "rocm-device-access", "linux", {}, dict(GFX1032, **{"linux.device_access": DENIED,
                                                                            "linux.groups": GROUPS}),
     {"rocm-device-access": "fail"}, "Log out and back in"),
    ("access-not-in-group", "rocm-device-access", "linux", {},
     dict(GFX1032, **{"linux.device_access": DENIED, "linux.groups": dict(GROUPS, render=dict(GROUPS["render"], listed=False))}),
     {"rocm-device-access": "fail"}, "usermod -aG render,video"),
    ("access-root-refused", "rocm-device-access", "linux", {},
     dict(GFX1032, **{"linux.device_access": DENIED, "linux.groups": dict(GROUPS, uid=0)}),
     {"rocm-device-access": "fail"}, "joining groups would not help"),
    ("access-ok", "rocm-device-access", "linux", {},
     dict(GFX1032, **{"linux.device_access": {"/dev/kfd": dict(DENIED["/dev/kfd"], read_write=True)}}),
     {"rocm-device-access": "ok"}, "read-write"),
    ("access-no-amd", "rocm-device-access", "linux", {}, {"gpu.inventory": [], "linux.device_access": {}},
     {"rocm-device-access": "skip"}, "no AMD GPU"),
    ("driver-kfd-enomem", "rocm-kernel-driver", "linux", {},
     dict(GFX1032, **{"rocminfo.status": {"state": "kfd-no-memory", "evidence": []}}), {"rocm-kernel-driver": "fail"},
     "dkms"),
    ("driver-nomodeset", "rocm-kernel-driver", "linux", {},
     dict(GFX1032, **{"rocminfo.status": {"state": "rock-not-loaded", "evidence": []},
                      "linux.kernel_cmdline": {"raw": "root=/dev/sda1 nomodeset quiet"}}),
     {"rocm-kernel-driver": "fail"}, "Remove nomodeset"),
    ("driver-ok", "rocm-kernel-driver", "linux", {}, dict(GFX1032, **{"linux.amdgpu_module": {"loaded": True}}),
     {"rocm-kernel-driver": "ok"}, "amdgpu is loaded"),
    ("wsl-no-dxg", "wsl-rocm-support", "wsl", {},
     {"linux.device_access": {"/dev/dxg": {"exists": False}}, "rocminfo.status": {"state": "out-of-resources"}},
     {"wsl-rocm-support": "fail"}, "wsl.exe --update"),
    ("wsl-no-wsl-build", "wsl-rocm-support", "wsl", {},
     {"rocminfo.status": {"state": "out-of-resources", "evidence": []},
      "rocm.paths": {"installs": [{"path": "/opt/rocm", "exists": True, "active": True, "version": "6.4.2-120"}]}},
     {"wsl-rocm-support": "fail"}, "6.4.2.1"),
    ("wsl-unsupported-gpu", "wsl-rocm-support", "wsl", {}, {"rocminfo.status": {"state": "unsupported-gpu"}},
     {"wsl-rocm-support": "fail"}, "native Linux"),
    ("wsl-healthy", "wsl-rocm-support", "wsl", {},
     {"rocminfo.status": {"state": "ok"}, "gpu.inventory": [gpu(0, "gfx1100", sources={"rocminfo": "gfx1100"})],
      "hip.version": {"text": "6.3.42134"}}, {"wsl-rocm-support:0": "ok"}, "gfx1100"),
    ("rocblas-missing-gfx906", "rocblas-library-coverage", "linux", {},
     {"gpu.inventory": [gpu(0, "gfx906")], "rocm.libraries": libs(["gfx1030", "gfx908"])},
     {"rocblas-library-coverage:0-rocblas": "fail"}, "for GPU arch : gfx906"),
    ("rocblas-override-target", "rocblas-library-coverage", "linux", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
     dict(GFX1032, **{"rocm.libraries": libs(["gfx1030"])}), {"rocblas-library-coverage:0-rocblas": "ok"}, "gfx1030"),
    ("signature-no-binary", "known-error-signatures", "linux", {},
     {"torch.probe": {"stderr_tail": "\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"\n"}},
     {"known-error-signatures:hip-no-binary-for-gpu": "warn"}, "gfx-not-in-torch-arch-list"),
    ("signature-log-harmless", "known-error-signatures", "wsl", {},
     {"user.log": {"path": "run.log", "text": "UserWarning: Can't initialize amdsmi - Error code: 34\n"}},
     {"known-error-signatures:amdsmi-error-34": "info"}, "harmless"),
    ("signature-wsl-routes", "known-error-signatures", "wsl", {},
     {"user.log": {"path": "r.log", "text": "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed"}},
     {"known-error-signatures:hsa-out-of-resources": "warn"}, "wsl-rocm-support"),
    ("signature-windows-no-device", "known-error-signatures", "windows", {},
     {"user.log": {"path": "hipinfo.txt", "text": NO_DEVICE}},
     {"known-error-signatures:no-rocm-capable-device": "warn"}, "windows-gpu-not-enumerated"),
    ("signature-linux-no-device-routes", "known-error-signatures", "linux", {},
     {"user.log": {"path": "hipinfo.txt", "text": NO_DEVICE}},
     {"known-error-signatures:no-rocm-capable-device": "warn"}, "torch-cuda-unavailable"),
    ("signature-none", "known-error-signatures", "linux", {}, {"torch.probe": {"stderr_tail": "all good\n"}},
     {"known-error-signatures": "ok"}, "no known error"),
    ("power-probe-hung", "gpu-hang-power-state", "linux", {},
     {"gpu.inventory": TWO_DGPUS, "linux.kernel_cmdline": CMDLINE, "torch.probe": {"state": "hung", "detail": "x"}},
     {"gpu-hang-power-state": "warn"}, "amdgpu.ppfeaturemask=0xffff3fff amdgpu.runpm=0x0"),
    ("power-log-stuck-after-code-object", "gpu-hang-power-state", "linux", {},
     {"gpu.inventory": TWO_DGPUS + DGPU_IGPU[:1], "linux.kernel_cmdline": CMDLINE,
      "user.log": {"path": "hang.log", "text": "start to copy from device to host\n:3:devprogram.cpp :2684: 9 us: 1: "
                                               "[tid:0x7f] Using Code Object V5.\n\n"}},
     {"gpu-hang-power-state": "warn"}, "stuck-after-code-object-load"),
    ("power-collective-hang", "gpu-hang-power-state", "linux", {},
     {"gpu.inventory": TWO_DGPUS, "linux.kernel_cmdline": CMDLINE,
      "collectives.results": {"ran": True, "hang": {"summary": "all_reduce hung on 2 ranks"}}},
     {"gpu-hang-power-state": "warn"}, "all_reduce hung"),
    ("power-runpm-already-off", "gpu-hang-power-state", "linux", {},
     {"gpu.inventory": TWO_DGPUS, "torch.probe": {"state": "hung"},
      "linux.kernel_cmdline": {"raw": "quiet amdgpu.runpm=0x0", "amdgpu": {"runpm": "0x0"}, "iommu": {}}},
     {"gpu-hang-power-state": "info"}, "already set"),
    ("power-log-goes-on", "gpu-hang-power-state", "linux", {},
     {"gpu.inventory": TWO_DGPUS, "linux.kernel_cmdline": CMDLINE,
      "user.log": {"path": "ok.log", "text": ":3:devprogram.cpp Using Code Object V5.\nresult ok\n"}},
     {"gpu-hang-power-state": "ok"}, "no GPU hang"),
    ("power-one-gpu", "gpu-hang-power-state", "linux", {},
     {"gpu.inventory": TWO_DGPUS[:1], "linux.kernel_cmdline": CMDLINE, "torch.probe": {"state": "hung"}},
     {"gpu-hang-power-state": "skip"}, "two or more"),
]


def facts_of(os, env, values):
    facts = Facts(Observations(platform={"os": os}, env=dict(env)))
    facts.set("platform.os", os)
    for key, value in values.items():
        if value is not None:
            facts.set(key, value)
    derive_again(facts, [key for key, value in values.items() if value is not None])  # gpu.targets from the GPUs
    return facts


def _plan_text(finding, shell):
    """The finding's steps and alternatives as the user reads them (summaries and the commands for the shell)."""
    from rocm_doctor.report.diagnosis_view import commands

    steps = list(finding.fix) + [s for alt in finding.alternatives for s in alt.steps]
    return [alt.title for alt in finding.alternatives] + [t for s in steps for t in [s.summary(), *commands(s, shell)]]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_check(case):
    _, check_id, os, env, values, expected, text = case
    findings = run_one(REGISTRY.by_id(check_id), facts_of(os, env, values))
    statuses = {f.id: f.status.value for f in findings}
    assert {k: statuses.get(k) for k in expected} == expected, [(f.id, f.status.value, f.message) for f in findings]
    shell = detect_shell(env, os)
    blob = " ".join(" ".join([f.message, *f.remediation, *f.evidence, *_plan_text(f, shell)]) for f in findings)
    assert text in blob, blob


def test_wrong_family_override_outranks_the_arch_list_failure():
    facts = facts_of("linux", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, dict(ROCM_TORCH, **GFX1032))
    override = run_one(REGISTRY.by_id("hsa-override-gfx-version"), facts)[0]
    arch = run_one(REGISTRY.by_id("gfx-not-in-torch-arch-list"), facts)[0]
    assert override.severity.rank > arch.severity.rank and override.fix[0].value == "10.3.0"


def test_amd_checks_have_remediation_when_they_fail_or_warn():
    for case in CASES:
        _, check_id, os, env, values, _, _ = case
        for finding in run_one(REGISTRY.by_id(check_id), facts_of(os, env, values)):
            if finding.status.value in ("fail", "warn"):
                assert finding.remediation or finding.fix, (case[0], finding.id)
