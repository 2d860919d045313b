"""The keys that cross from observing to interpreting, in one place: where each probe records what it saw (a
command's key, a file or folder read, a probe value, a registry key) and which interpreter owns each fact.

A probe records under these names and an interpreter reads them back from a live run or a snapshot, so both
import them from here and neither spells one itself. FACTS names the one interpreter that sets each fact; the
interpreters run in the order their REQUIRES and this table give (rocm_doctor/interpret/__init__.py).
"""

from __future__ import annotations

from typing import Optional

# --- Observations, by the probe that records them (rocm_doctor/probes/<name>.py) ---

# container_security: files read, and the probe value of /dev/kfd mapping attempts.
SELINUX_ENFORCE = "/sys/fs/selinux/enforce"
SECURITY_LABEL = "/proc/self/attr/current"
APPARMOR_LABEL = "/proc/self/attr/apparmor/current"
PROC_STATUS = "/proc/self/status"
DEVICE_MAP_KEY = "linux.device_map"

# kernel_driver: folders listed.
MODPROBE_DIRS = ("/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/usr/lib/modprobe.d",
                 "/lib/modprobe.d")
FIRMWARE_DIRS = ("/lib/firmware/updates/amdgpu", "/lib/firmware/amdgpu", "/usr/lib/firmware/updates/amdgpu",
                 "/usr/lib/firmware/amdgpu")

# kfd: the topology folder; linux_access: the device groups whose membership is recorded.
KFD_NODES_DIR = "/sys/class/kfd/kfd/topology/nodes"
DEVICE_GROUPS = ("render", "video")

# os_layer: the os-release files, and the probe value of /dev/shm's size.
OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
SHM_KEY = "dev-shm"

# package_repos: repository folders and the file endings read in each.
REPO_DIRS = (("/etc/apt/sources.list.d", (".list", ".sources")), ("/etc/yum.repos.d", (".repo",)),
             ("/etc/zypp/repos.d", (".repo",)))

# rocm_packages: the /opt/rocm links, and the firmware commands.
LINK_PATHS = ("/opt/rocm", "/etc/alternatives/rocm")
FIRMWARE_KEY = "rocm-smi-showfwinfo"
AMD_SMI_FIRMWARE_KEY = "amd-smi-firmware"

# run_env: what was asked for (--unit, --user-unit, --kernel), the commands and files read for it.
REQUEST_KEY = "run.request"  # probe value: {kind: systemd|jupyter, name, scope: system|user}
INTERPRETER_KEY = "run.interpreter"  # probe value: {program, path, exists}
SYSTEMD_SHOW_KEY = "systemctl-show-unit"
SYSTEMD_SHOW_ENV_KEY = "systemctl-show-environment"
SYSTEMD_CAT_KEY = "systemctl-cat-unit"
SYSTEMD_GLOBS_KEY = "run.env_file_globs"
JUPYTER_LIST_KEY = "jupyter-kernelspec-list"
JUPYTER_KERNEL_KEY = "run.kernel"  # probe value: {resource_dir, kernel_json, searched}

# runtime_status: the runtime child's command, and the doctor's own limits (the target's processes inherit them).
RUNTIME_PROBE_KEY = "runtime-probe"
OWN_LIMITS_KEY = "process.limits.doctor"

# torch_probe and torch_family: the children of the target interpreter; rocm_paths, rocm_libs, shell_rc, online:
# probe values.
TORCH_PROBE_KEY = "torch-probe"
GCC_KEY = "gcc-version"  # torch_probe: the C++ compiler torch.compile and extensions build with
TORCH_FAMILY_KEY = "torch-family"
ROCM_PATHS_KEY = "rocm.paths"
ROCM_LIBS_KEY = "rocm.libs"
SHELL_RC_KEY = "shell.rc"
ONLINE_INDEX_KEY = "online.package_index"

# `check --log FILE`: the user's log, a probe value read into the fact of the same name; `triage`: what the pasted
# files state (the tools and programs each one holds).
LOG_KEY = "user.log"
PASTE_KEY = "user.paste"

# Windows (windows_env, windows_hip, windows_runtime, windows_vs through probes/windows_record.py): registry
# reads land in probes[REGISTRY_PREFIX + probe], filtered folder scans in probes[DIR_SCAN_PREFIX + probe].
REGISTRY_PREFIX = "windows.registry."
DIR_SCAN_PREFIX = "windows.dir_scan."
USER_ENV_KEY = ("HKCU", "Environment")
MACHINE_ENV_KEY = ("HKLM", r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment")
DISPLAY_CLASS_KEY = ("HKLM", r"SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}")
AMD_CN_KEY = ("HKLM", r"SOFTWARE\AMD\CN")
CURRENT_VERSION_KEY = ("HKLM", r"SOFTWARE\Microsoft\Windows NT\CurrentVersion")
SDK_COMMAND_KEY = "windows-rocm-sdk"
HIPINFO_COMMAND_KEY = "hipinfo"
VSWHERE_KEY = "vswhere"
VSWHERE_VC_KEY = "vswhere-vctools"

# --- Facts, each with the interpreter that owns it (rocm_doctor/interpret/<owner>.py) ---
# A key ending in ".*" stands for every key under it. Facts.env reads run.env and Facts.os reads platform.os,
# so every other interpreter runs after their owners.
RUN_ENV = "run.env"
PLATFORM_OS = "platform.os"

FACTS = {
    RUN_ENV: "run_env",
    "platform.*": "platform_facts", "gpu.pci": "platform_facts",
    "rocm.libraries": "amd_derived", "rocm.paths": "amd_derived", "shell.rc_lines": "amd_derived",
    LOG_KEY: "amd_derived",
    "amdgpu_arch.targets": "amd_tools", "hip.config": "amd_tools", "hip.version": "amd_tools",
    "rocm_agent_enumerator.targets": "amd_tools", "rocminfo.agents": "amd_tools", "rocminfo.status": "amd_tools",
    "smi.devices": "amd_tools", "smi.problems": "amd_tools", "tools.garbled": "amd_tools",
    DEVICE_MAP_KEY: "container_security", "linux.security": "container_security",
    "linux.amdgpu_blocks": "driver_layer", "linux.amdgpu_modinfo": "driver_layer", "linux.dkms_amdgpu": "driver_layer",
    "linux.firmware": "driver_layer", "linux.kernel_log": "driver_layer", "linux.secure_boot": "driver_layer",
    "linux.amdgpu_driver": "driver_release",
    "gpu.inventory": "gpu_inventory", "gpu.inventory.disagreements": "gpu_inventory",
    "gpu.live": "gpu_live",
    "gpu.targets": "gpu_targets",
    "linux.gpu_events": "kernel_events", "linux.kernel_log_access": "kernel_events",
    "kfd.nodes": "kfd", "linux.amdgpu_module": "kfd", "linux.device_access": "kfd", "linux.groups": "kfd",
    "linux.kernel_cmdline": "kfd",
    "log.machine": "log_facts", "paste.summary": "paste_facts",
    "nvidia.driver": "nvidia_driver",
    "online.package_index": "online_facts",
    "os.container": "os_layer", "os.glibc": "os_layer", "os.kernel": "os_layer", "os.release": "os_layer",
    "os.shm": "os_layer",
    "rocm.repos": "package_repos",
    "process.limits": "runtime_facts", "runtime.status": "runtime_facts",
    "gpu.firmware": "rocm_packages", "rocm.opt_link": "rocm_packages", "rocm.packages": "rocm_packages",
    "bench.results": "stage_results", "collectives.results": "stage_results", "gpu.kernels": "stage_results",
    "python.target": "torch_facts", "python.target.version": "torch_facts", "torch.*": "torch_facts",
    "torch.family": "torch_family",
    "windows.dlls": "windows_dlls",
    "windows.env.scopes": "windows_env", "windows.path": "windows_env",
    "windows.driver": "windows_hip", "windows.hip.hip_path": "windows_hip", "windows.hip.installs": "windows_hip",
    "windows.hipinfo": "windows_hip", "windows.rocm_sdk": "windows_hip",
    "windows.driver_needs": "windows_layer", "windows.driver_release": "windows_layer", "windows.os": "windows_layer",
    "windows.vc_runtime": "windows_layer",
    "windows.cxx_headers": "windows_vs", "windows.devshell": "windows_vs", "windows.sdk.ucrt": "windows_vs",
    "windows.vs": "windows_vs",
}
# Facts a GPU stage's interpret step sets, once per run, from the result the stage provides (fact -> stage name).
STAGE_FACTS = {"bench.figures": "bench"}  # gpu/bench/stage.py: each figure, the card's expected figure, what was seen around it
# Facts derived from another: missing whenever it is, so a check that requires both is said to lack only that one.
DERIVED_FROM = {"gpu.targets": "gpu.inventory", "bench.figures": "bench.results"}


def owner(key: str) -> Optional[str]:
    """The interpreter that sets `key`: its own entry, else the longest "prefix.*" entry above it."""
    if key in FACTS:
        return FACTS[key]
    parts = key.split(".")
    for end in range(len(parts) - 1, 0, -1):
        found = FACTS.get(".".join(parts[:end]) + ".*")
        if found:
            return found
    return None
